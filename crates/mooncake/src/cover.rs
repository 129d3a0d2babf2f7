//! Mooncake's rules on how each tensor is spread over the topology
//! (`_validate_complete_weight_placement`): no active axis left undeclared, every owner
//! present on each replicated-axis participant, each replica of each owner an exact cover,
//! split axes held by the whole axis range and partitioning their dimension in rank order.
//!
//! Upstream compares sets; the sets here are ordered so that the first rejection named is
//! upstream's (owners and replicas are walked in sorted order, as upstream walks them).

use std::collections::{BTreeMap, BTreeSet};

use weight_manifest::error::{Code, Error, Result};
use weight_manifest::util::fxhash::FxHashMap as HashMap;

use crate::boxes::{exactly_cover, over_budget, BoxRef};
use crate::model::{AxisKind, Fragment, Rank, Semantics, Tensor, Topology};

fn fail(code: Code, message: String, tensor_at: usize) -> Error {
    Error::new(code, message).with_pointer(Some(format!("/tensors/{tensor_at}")))
}

fn matches(rank: &Rank, kinds: &[AxisKind], values: &[u64]) -> bool {
    kinds.iter().zip(values).all(|(&k, &v)| rank.get(k) == v)
}

/// The axis rules for tensor `t` (written at `/tensors/{at}`) with its fragments `frags`.
pub(crate) fn check_cover(
    t: &Tensor,
    at: usize,
    frags: &[&Fragment],
    topo: &Topology,
    work: u64,
) -> Result<()> {
    let id = &t.tensor_id;
    check_undeclared(t, at, frags, topo)?;
    let ownership = t.kinds(|s| matches!(s, Semantics::Ownership));
    let replicated = t.kinds(|s| matches!(s, Semantics::Replicated));
    let owners: BTreeSet<Vec<u64>> = frags.iter().map(|f| f.rank.project(&ownership)).collect();
    for owner in owners {
        let owned: Vec<&Fragment> = frags
            .iter()
            .copied()
            .filter(|f| matches(&f.rank, &ownership, &owner))
            .collect();
        let expected: BTreeSet<Vec<u64>> = topo
            .participants
            .iter()
            .filter(|p| matches(&p.rank, &ownership, &owner))
            .map(|p| p.rank.project(&replicated))
            .collect();
        let actual: BTreeSet<Vec<u64>> =
            owned.iter().map(|f| f.rank.project(&replicated)).collect();
        if actual != expected {
            return Err(fail(
                Code::MooncakeReplicaCoverage,
                format!("global placement tensor is not fully covered: missing or unexpected replicated-axis participant for {id}"),
                at,
            ));
        }
        for replica in &expected {
            let cover: Vec<&Fragment> = owned
                .iter()
                .copied()
                .filter(|f| matches(&f.rank, &replicated, replica))
                .collect();
            let boxes: Vec<BoxRef<'_>> = cover
                .iter()
                .map(|f| (f.global_offset.as_slice(), f.local_shape.as_slice()))
                .collect();
            let covered = exactly_cover(&t.global_shape, &boxes, work)
                .map_err(|_| over_budget(work, format!("/tensors/{at}")))?;
            if !covered {
                return Err(fail(
                    Code::MooncakeNotCovered,
                    format!("global placement tensor is not fully covered: {id}"),
                    at,
                ));
            }
            let mut fixed_kinds = ownership.clone();
            fixed_kinds.extend(&replicated);
            let mut fixed = owner.clone();
            fixed.extend(replica);
            check_participation(t, at, &cover, topo, &fixed_kinds, &fixed)?;
            check_split_geometry(t, at, &cover)?;
        }
    }
    Ok(())
}

/// An axis of the topology that is active (size above 1) must be declared, except a tp
/// or ep axis whose coordinate follows from the declared axes that vary.
fn check_undeclared(t: &Tensor, at: usize, frags: &[&Fragment], topo: &Topology) -> Result<()> {
    let declared: Vec<AxisKind> = t.parallel_axes.iter().map(|a| a.kind).collect();
    let distinct = |k: AxisKind| {
        frags
            .iter()
            .map(|f| f.rank.get(k))
            .collect::<BTreeSet<u64>>()
            .len()
    };
    let varying: Vec<AxisKind> = declared
        .iter()
        .copied()
        .filter(|&k| distinct(k) > 1)
        .collect();
    for kind in AxisKind::ALL {
        if declared.contains(&kind) || topo.size(kind) == 1 {
            continue;
        }
        let name = kind.as_str();
        if matches!(kind, AxisKind::Dp | AxisKind::Pp) || distinct(kind) <= 1 {
            return Err(fail(
                Code::MooncakeUndeclaredAxis,
                format!("global placement tensor requires explicit parallel semantics for active undeclared {name} axis: {}", t.tensor_id),
                at,
            ));
        }
        if varying.is_empty() {
            return Err(fail(
                Code::MooncakeUndeclaredAxis,
                format!(
                    "global placement tensor varies across undeclared {name} axis: {}",
                    t.tensor_id
                ),
                at,
            ));
        }
        let mut by_declared: HashMap<Vec<u64>, u64> = HashMap::default();
        for f in frags {
            let coordinate = f.rank.get(kind);
            if *by_declared
                .entry(f.rank.project(&varying))
                .or_insert(coordinate)
                != coordinate
            {
                return Err(fail(
                    Code::MooncakeUndeclaredAxis,
                    format!("global placement tensor varies independently across undeclared {name} axis: {}", t.tensor_id),
                    at,
                ));
            }
        }
    }
    Ok(())
}

/// The split axes of one replica's cover are held by exactly the participants with its
/// fixed coordinates, and those span each split axis's whole range.
fn check_participation(
    t: &Tensor,
    at: usize,
    cover: &[&Fragment],
    topo: &Topology,
    fixed_kinds: &[AxisKind],
    fixed: &[u64],
) -> Result<()> {
    let split = t.kinds(|s| matches!(s, Semantics::Split { .. }));
    if split.is_empty() {
        return Ok(());
    }
    let expected: BTreeSet<Vec<u64>> = topo
        .participants
        .iter()
        .filter(|p| matches(&p.rank, fixed_kinds, fixed))
        .map(|p| p.rank.project(&split))
        .collect();
    let actual: BTreeSet<Vec<u64>> = cover.iter().map(|f| f.rank.project(&split)).collect();
    // Every coordinate is below its size (the topology's rule), so spanning 0..size is
    // having size distinct values.
    let complete = split.iter().enumerate().all(|(j, &k)| {
        let values: BTreeSet<u64> = expected.iter().filter_map(|e| e.get(j).copied()).collect();
        values.len() as u64 == topo.size(k)
    });
    if !complete || actual != expected {
        return Err(fail(
            Code::MooncakeSplitParticipation,
            format!("global placement tensor is not fully covered: missing or unexpected split-axis participant for {}", t.tensor_id),
            at,
        ));
    }
    Ok(())
}

/// The split coordinates form a Cartesian grid, and along each split dimension the boxes
/// of each coordinate, merged, follow each other without gap or overlap from 0 to the
/// extent.
fn check_split_geometry(t: &Tensor, at: usize, cover: &[&Fragment]) -> Result<()> {
    let axes: Vec<(AxisKind, u64)> = t
        .parallel_axes
        .iter()
        .filter_map(|a| match a.semantics {
            Semantics::Split { dim } => Some((a.kind, dim)),
            _ => None,
        })
        .collect();
    if axes.is_empty() {
        return Ok(());
    }
    let kinds: Vec<AxisKind> = axes.iter().map(|a| a.0).collect();
    let observed: BTreeSet<Vec<u64>> = cover.iter().map(|f| f.rank.project(&kinds)).collect();
    let grid = kinds.iter().try_fold(1usize, |acc, &k| {
        let n = cover
            .iter()
            .map(|f| f.rank.get(k))
            .collect::<BTreeSet<u64>>()
            .len();
        acc.checked_mul(n)
    });
    if grid != Some(observed.len()) {
        return Err(fail(
            Code::MooncakeSplitGeometry,
            format!("non-Cartesian split-axis participant mapping cannot prove rank-to-dimension ownership: {}", t.tensor_id),
            at,
        ));
    }
    for &(kind, dim) in &axes {
        let conflict = || {
            fail(
                Code::MooncakeSplitGeometry,
                format!(
                    "split-axis rank geometry conflicts with declared dimension: {}: {} -> dim {dim}",
                    t.tensor_id,
                    kind.as_str()
                ),
                at,
            )
        };
        let d = usize::try_from(dim).map_err(|_| conflict())?;
        let mut by_rank: BTreeMap<u64, BTreeSet<(u128, u128)>> = BTreeMap::new();
        for f in cover {
            let (Some(&o), Some(&e)) = (f.global_offset.get(d), f.local_shape.get(d)) else {
                return Err(conflict());
            };
            by_rank
                .entry(f.rank.get(kind))
                .or_default()
                .insert((u128::from(o), u128::from(o) + u128::from(e)));
        }
        let mut owned: Vec<(u128, u128, u64)> = Vec::new();
        for (r, intervals) in by_rank {
            let mut merged: Vec<(u128, u128)> = Vec::new();
            for (b, e) in intervals {
                match merged.last_mut() {
                    Some(last) if b <= last.1 => last.1 = last.1.max(e),
                    _ => merged.push((b, e)),
                }
            }
            owned.extend(merged.into_iter().map(|(b, e)| (b, e, r)));
        }
        owned.sort_unstable();
        let mut cursor = 0u128;
        for (b, e, _) in owned {
            if b != cursor {
                return Err(conflict());
            }
            cursor = e;
        }
        let extent = t.global_shape.get(d).copied().map_or(0, u128::from);
        if cursor != extent {
            return Err(conflict());
        }
    }
    Ok(())
}
