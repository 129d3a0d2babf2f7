//! The checks of binding a plan: each binding's identity and generation against the
//! plan and the fences, each region's byte range against its bound fragments.

use crate::error::{Code, Error, Result};
use crate::model::Binding;
use crate::wire::{
    BoundLocation, BoundSide, PlanPlacement, PlanRegion, PlanTransform, RuntimeBindingFragment,
};

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

/// The bytes a region's loops reach from its first byte: run_bytes + sum((count - 1) *
/// stride) on one side, or None when that overflows.
fn span(region: &PlanRegion, source: bool) -> Option<u64> {
    region.loops.iter().try_fold(region.run_bytes, |n, l| {
        let stride = if source {
            l.source_stride
        } else {
            l.target_stride
        };
        l.count
            .checked_sub(1)
            .and_then(|c| c.checked_mul(stride))
            .and_then(|reach| n.checked_add(reach))
    })
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
    let end = span(region, source).and_then(|span| offset.checked_add(span));
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

/// The source location of a transformed region (§17.8): its `address` is the offset of its
/// first byte in the source fragment's quantized form, after checking that its last byte
/// lies inside the largest form a bfloat16 fragment of `fragment.nbytes` bytes can have:
/// nbytes / 2 bytes of FP8 values, or 2 × nbytes bytes of float32 scales (a block holds
/// at least one 2-byte element). The source checks the exact extent of its form.
pub(super) fn located_transformed(
    index: usize,
    region: &PlanRegion,
    fragment: &RuntimeBindingFragment,
    transform: PlanTransform,
) -> Result<BoundLocation> {
    let (form, limit) = match transform {
        PlanTransform::Fp8E4m3BlockValues => ("FP8 values", Some(fragment.nbytes / 2)),
        PlanTransform::Fp8E4m3BlockScales => ("block scales", fragment.nbytes.checked_mul(2)),
    };
    let end = span(region, true).and_then(|span| region.source_offset.checked_add(span));
    if end.is_none_or(|end| limit.is_some_and(|limit| end > limit)) {
        return Err(range_invalid(
            index,
            fragment,
            &format!("the region's bytes lie outside the {form} of the quantized form"),
        ));
    }
    Ok(BoundLocation {
        address: region.source_offset,
        device: fragment.device.clone(),
        endpoint: fragment.endpoint.clone(),
        worker_id: fragment.worker_id.clone(),
    })
}
