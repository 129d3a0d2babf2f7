//! The checks of binding a plan: each binding's identity and generation against the
//! plan and the fences, each region's byte range against its bound fragments.

use crate::error::{Code, Error, Result};
use crate::model::Binding;
use crate::wire::{BoundLocation, BoundSide, PlanPlacement, PlanRegion, RuntimeBindingFragment};

/// The fences of one side, after checking `binding` locates `placement` under
/// `generation` (when one is expected).
pub(super) fn side(
    name: &str,
    placement: &PlanPlacement,
    binding: &Binding,
    generation: Option<u64>,
) -> Result<BoundSide> {
    let wire = binding.as_wire();
    // The placement_id first, then the digest: (code, what the binding says, the plan's).
    for (code, located, planned, says) in [
        (
            Code::PlanBindingPlacementIdMismatch,
            &wire.placement_id,
            &placement.placement_id,
            ("placement", "is"),
        ),
        (
            Code::PlanBindingDigestMismatch,
            &wire.placement_digest,
            &placement.digest,
            ("a placement of digest", "has digest"),
        ),
    ] {
        if located != planned {
            let (located_as, planned_as) = says;
            return Err(Error::new(
                code,
                format!(
                    "the {name} binding locates {located_as} {located}, the plan's {name} {planned_as} {planned}"
                ),
            ));
        }
    }
    if let Some(expected) = generation {
        if wire.generation != expected {
            return Err(Error::new(
                Code::PlanBindingGenerationMismatch,
                format!(
                    "the {name} binding is stale: generation {}, expected {expected}",
                    wire.generation
                ),
            ));
        }
    }
    Ok(BoundSide {
        generation: wire.generation,
        instance_id: wire.instance_id.clone(),
        lease_id: wire.lease_id.clone(),
        placement_digest: wire.placement_digest.clone(),
        placement_id: wire.placement_id.clone(),
    })
}

/// The bound fragment `id` of `binding` (fragments are sorted by placement_fragment_id).
pub(super) fn fragment<'b>(
    name: &str,
    binding: &'b Binding,
    id: &str,
) -> Result<&'b RuntimeBindingFragment> {
    let fragments = binding.fragments();
    fragments
        .binary_search_by(|f| f.placement_fragment_id.as_str().cmp(id))
        .ok()
        .and_then(|i| fragments.get(i))
        .ok_or_else(|| {
            Error::new(
                Code::PlanBindingFragmentMissing,
                format!("the {name} binding has no fragment {id}"),
            )
        })
}

/// Checks that the region's bytes are copied unchanged: a region whose source computes
/// them (a `transform`, §17.8) cannot be bound.
pub(super) fn copied_unchanged(index: usize, region: &PlanRegion) -> Result<()> {
    match &region.transform {
        None => Ok(()),
        Some(transform) => Err(Error::new(
            Code::PlanBindTransformUnsupported,
            format!(
                "region {index} of tensor {} carries the transform {transform}: its source computes its bytes, and a bound plan copies bytes unchanged",
                region.tensor_id
            ),
        )),
    }
}

/// Checks that the region's nbytes is run_bytes times the product of its loop counts.
pub(super) fn region_size(index: usize, region: &PlanRegion) -> Result<()> {
    let product = region
        .loops
        .iter()
        .try_fold(region.run_bytes, |n, l| n.checked_mul(l.count));
    if product == Some(region.nbytes) && region.run_bytes > 0 {
        Ok(())
    } else {
        Err(Error::new(
            Code::PlanDocumentInvalid,
            format!("region {index}: nbytes is not run_bytes times the loop counts"),
        ))
    }
}

fn range_invalid(index: usize, fragment: &RuntimeBindingFragment, what: &str) -> Error {
    Error::new(
        Code::PlanBindingRangeInvalid,
        format!(
            "region {index}: {what} of fragment {} ({} bytes at address {})",
            fragment.placement_fragment_id, fragment.nbytes, fragment.address
        ),
    )
}

/// Where the region's first byte at `offset` in `fragment` is, after checking that its
/// last byte (offset + sum((count - 1) * stride) + run_bytes) lies inside the fragment.
pub(super) fn located(
    index: usize,
    region: &PlanRegion,
    fragment: &RuntimeBindingFragment,
    offset: u64,
    source: bool,
) -> Result<BoundLocation> {
    let span = region.loops.iter().try_fold(region.run_bytes, |n, l| {
        let stride = if source {
            l.source_stride
        } else {
            l.target_stride
        };
        l.count
            .checked_sub(1)
            .and_then(|c| c.checked_mul(stride))
            .and_then(|reach| n.checked_add(reach))
    });
    let end = span.and_then(|span| offset.checked_add(span));
    if end.is_none_or(|end| end > fragment.nbytes) {
        return Err(range_invalid(
            index,
            fragment,
            "the region's bytes lie outside",
        ));
    }
    let address = fragment
        .address
        .checked_add(offset)
        .ok_or_else(|| range_invalid(index, fragment, "the region's address overflows"))?;
    Ok(BoundLocation {
        address,
        device: fragment.device.clone(),
        endpoint: fragment.endpoint.clone(),
        worker_id: fragment.worker_id.clone(),
    })
}
