//! The fragment rules of a Mooncake placement: those each part checks on its own
//! (`WeightPlacementPart`: known tensors, the part's rank, distinct ids and boxes, the
//! geometry against the descriptor, no overlap within one (tensor, rank)) and those only
//! the whole placement can check (ids distinct across parts, complete alias groups).

use std::collections::BTreeSet;

use weight_manifest::error::{Code, Error, Result};
use weight_manifest::util::fxhash::{set_with_capacity, FxHashMap as HashMap};

use crate::boxes::{over_budget, overlapping_pair, volume, BoxRef};
use crate::draft::DraftPart;
use crate::model::{Fragment, Tensor};

/// The pointer of fragment `f` of part `p`, as written.
pub(crate) fn pointer(p: usize, f: usize) -> String {
    format!("/parts/{p}/fragments/{f}")
}

fn at(code: Code, message: impl Into<String>, pointer: String) -> Error {
    Error::new(code, message).with_pointer(Some(pointer))
}

/// A fragment's geometry against its descriptor (`validate_fragment_geometry`).
pub(crate) fn check_geometry(
    t: &Tensor,
    id: &str,
    offset: &[u64],
    shape: &[u64],
    nbytes: u64,
    ptr: &str,
) -> Result<()> {
    let ndim = t.global_shape.len();
    if offset.len() != ndim || shape.len() != ndim {
        return Err(at(
            Code::FragmentRankMismatch,
            format!("fragment rank mismatch: {id}"),
            ptr.to_owned(),
        ));
    }
    let outside = offset
        .iter()
        .zip(shape)
        .zip(&t.global_shape)
        .any(|((&o, &e), &total)| u128::from(o) + u128::from(e) > u128::from(total));
    if outside {
        return Err(at(
            Code::FragmentOutOfBounds,
            format!("fragment is out of bounds: {id}"),
            ptr.to_owned(),
        ));
    }
    let expected = volume(shape).and_then(|v| v.checked_mul(u128::from(t.itemsize)));
    if expected != Some(u128::from(nbytes)) {
        let shown = expected.map_or_else(|| "more than 2^128".to_owned(), |e| e.to_string());
        return Err(at(
            Code::NbytesMismatch,
            format!("fragment byte size mismatch: {id}: expected {shown}, got {nbytes}"),
            format!("{ptr}/nbytes"),
        ));
    }
    Ok(())
}

/// The rules of one part, in upstream's order; `tensors` are the document's, `by_id` maps
/// a tensor_id to its position.
pub(crate) fn check_part(
    part: &DraftPart,
    tensors: &[Tensor],
    by_id: &HashMap<&str, usize>,
    work: u64,
) -> Result<()> {
    let p = part.at;
    let mut unknown: Vec<(&str, usize)> = part
        .fragments
        .iter()
        .filter(|(f, _)| !by_id.contains_key(f.tensor_id.as_str()))
        .map(|(f, i)| (f.tensor_id.as_str(), *i))
        .collect();
    unknown.sort_unstable();
    if let Some(&(id, i)) = unknown.first() {
        return Err(at(
            Code::UnknownTensorId,
            format!("unknown tensor_id in placement part: {id}"),
            format!("{}/tensor_id", pointer(p, i)),
        ));
    }
    if let Some((_, i)) = part.fragments.iter().find(|(f, _)| f.rank != part.rank) {
        return Err(at(
            Code::MooncakeParticipantMismatch,
            "placement part fragment rank differs from part rank",
            format!("{}/rank", pointer(p, *i)),
        ));
    }
    let mut sorted: Vec<&(Fragment, usize)> = part.fragments.iter().collect();
    sorted.sort_by(|a, b| a.0.placement_fragment_id.cmp(&b.0.placement_fragment_id));
    let mut logical = set_with_capacity(sorted.len());
    for (k, x) in sorted.iter().enumerate() {
        let (f, i) = (&x.0, x.1);
        let ptr = pointer(p, i);
        if k > 0 && sorted[k - 1].0.placement_fragment_id == f.placement_fragment_id {
            return Err(at(
                Code::DuplicateFragmentId,
                format!("duplicate fragment_id: {}", f.placement_fragment_id),
                format!("{ptr}/placement_fragment_id"),
            ));
        }
        if !logical.insert((
            f.tensor_id.as_str(),
            f.rank,
            f.global_offset.as_slice(),
            f.local_shape.as_slice(),
        )) {
            return Err(at(
                Code::DuplicateLogicalFragment,
                format!(
                    "duplicate logical fragment for tensor and parallel rank: {}",
                    f.placement_fragment_id
                ),
                ptr,
            ));
        }
        if let Some(t) = by_id
            .get(f.tensor_id.as_str())
            .and_then(|&t| tensors.get(t))
        {
            check_geometry(
                t,
                &f.placement_fragment_id,
                &f.global_offset,
                &f.local_shape,
                f.nbytes,
                &ptr,
            )?;
        }
    }
    // Groups by tensor (one rank in a part), in the order the sorted fragments name them.
    let mut groups: Vec<(&str, Vec<&(Fragment, usize)>)> = Vec::new();
    let mut slot: HashMap<&str, usize> = HashMap::default();
    for x in &sorted {
        let g = *slot.entry(x.0.tensor_id.as_str()).or_insert_with(|| {
            groups.push((x.0.tensor_id.as_str(), Vec::new()));
            groups.len() - 1
        });
        if let Some(group) = groups.get_mut(g) {
            group.1.push(x);
        }
    }
    for (_, group) in &groups {
        let boxes: Vec<BoxRef<'_>> = group
            .iter()
            .map(|x| (x.0.global_offset.as_slice(), x.0.local_shape.as_slice()))
            .collect();
        let found =
            overlapping_pair(&boxes, work).map_err(|_| over_budget(work, format!("/parts/{p}")))?;
        if let Some((a, b)) = found {
            let (first, second) = (group[a], group[b]);
            return Err(at(
                Code::FragmentOverlap,
                format!(
                    "logical fragment boxes overlap for tensor and parallel rank: {} and {}",
                    first.0.placement_fragment_id, second.0.placement_fragment_id
                ),
                pointer(p, second.1),
            ));
        }
    }
    Ok(())
}

/// A fragment of the whole placement: the fragment and where it was written.
pub(crate) type Placed<'a> = (&'a Fragment, usize, usize);

/// The rules of the assembled placement on its fragments, sorted by id: ids distinct
/// across parts, then alias groups complete and consistent.
pub(crate) fn check_all(sorted: &[Placed<'_>], known: &HashMap<&str, usize>) -> Result<()> {
    if let Some(w) = sorted
        .windows(2)
        .find(|w| w[0].0.placement_fragment_id == w[1].0.placement_fragment_id)
    {
        let (f, p, i) = w[1];
        return Err(at(
            Code::DuplicateFragmentId,
            format!("duplicate fragment_id: {}", f.placement_fragment_id),
            format!("{}/placement_fragment_id", pointer(p, i)),
        ));
    }
    let mut by_tensor: HashMap<&str, Vec<Placed<'_>>> = HashMap::default();
    // Groups in sorted order, so that the first error reported does not depend on hashing
    // (upstream walks a set; every alias error has this one code).
    let mut groups: BTreeSet<&[String]> = BTreeSet::new();
    let mut declared_by: HashMap<&[String], Placed<'_>> = HashMap::default();
    for &x in sorted {
        by_tensor.entry(x.0.tensor_id.as_str()).or_default().push(x);
        if !x.0.aliases.is_empty() {
            groups.insert(x.0.aliases.as_slice());
            declared_by.entry(x.0.aliases.as_slice()).or_insert(x);
        }
    }
    for group in groups {
        let declaring = declared_by
            .get(group)
            .map(|&(_, p, i)| format!("{}/aliases", pointer(p, i)));
        if let Some(name) = group.iter().find(|n| !known.contains_key(n.as_str())) {
            return Err(Error::new(
                Code::MooncakeAliasGroupInvalid,
                format!("alias group references unknown tensor: {name}"),
            )
            .with_pointer(declaring));
        }
        for name in group {
            let members = by_tensor
                .get(name.as_str())
                .map(Vec::as_slice)
                .unwrap_or_default();
            let odd = members.iter().find(|x| x.0.aliases.as_slice() != group);
            if members.is_empty() || odd.is_some() {
                let where_ = odd
                    .map(|&(_, p, i)| format!("{}/aliases", pointer(p, i)))
                    .or(declaring);
                return Err(Error::new(
                    Code::MooncakeAliasGroupInvalid,
                    format!("alias group is not declared consistently for tensor: {name}"),
                )
                .with_pointer(where_));
            }
        }
    }
    Ok(())
}
