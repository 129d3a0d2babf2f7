//! Conversion between this project's [`Placement`] and a [`MooncakePlacement`].
//!
//! Ours -> Mooncake needs what our placement does not say: a topology, participant names
//! and each tensor's parallel axes. They are inferred ([`export`]): each axis's size is one
//! more than its largest coordinate, one participant per distinct rank, a split axis per
//! shard dim (the tp or ep coordinate that decides the offset on that dim), and for the
//! other active axes replicated (the tensor is on every coordinate the participants have),
//! left undeclared (a tp or ep coordinate that follows from the declared axes, as when EP
//! spans the TP group) or ownership. Any of them can be given instead ([`ExportOptions`]).
//! The result is checked by every Mooncake rule; what Mooncake cannot express is
//! `mooncake_export_unsupported`.
//!
//! Mooncake -> ours ([`import`]) keeps model, revision, descriptors and fragments (ids
//! included) and drops what our placement has no place for, listing it in
//! [`Imported::dropped`].

use std::collections::{BTreeMap, BTreeSet, HashMap};

use weight_manifest::error::{Code, Error, Result};
use weight_manifest::wire::{ParallelRank, PlacementFragment, PlacementManifest, TensorDescriptor};
use weight_manifest::Placement;

use crate::model::MooncakePlacement;
use crate::model::{Axis, AxisKind, Fragment, Participant, Rank, Semantics, Tensor, Topology};
use crate::placement::MooncakeInput;

/// What the export cannot infer, or should not: every member is optional.
#[derive(Clone, Debug, Default)]
pub struct ExportOptions {
    /// The weight generation (default 0).
    pub weight_generation: Option<u64>,
    /// The placement set id (default: our placement_id).
    pub placement_set_id: Option<String>,
    /// Axis sizes (default: one more than the largest coordinate of each axis).
    pub sizes: BTreeMap<AxisKind, u64>,
    /// The participants, with their names (default: one per distinct rank, named
    /// `dp{dp}-pp{pp}-ep{ep}-tp{tp}`); they must include every rank of the placement.
    pub participants: Option<Vec<Participant>>,
    /// A tensor's parallel axes, instead of the inferred ones.
    pub parallel_axes: HashMap<String, Vec<Axis>>,
}

/// A placement imported from Mooncake, and what of the Mooncake document it lost.
#[derive(Clone, Debug)]
pub struct Imported {
    /// Our canonical placement.
    pub placement: Placement,
    /// One line per member our placement has no place for (its name and what it held).
    pub dropped: Vec<String>,
}

fn rank_of(r: &ParallelRank) -> Rank {
    Rank {
        dp: r.dp,
        tp: r.tp,
        pp: r.pp,
        ep: r.ep,
    }
}

fn unsupported(message: String, pointer: Option<String>) -> Error {
    Error::new(Code::MooncakeExportUnsupported, message).with_pointer(pointer)
}

fn override_invalid(message: String) -> Error {
    Error::new(Code::MooncakeExportOverrideInvalid, message)
}

/// The distinct values of `f` over `items`.
fn distinct<T, K: Ord>(items: &[T], f: impl Fn(&T) -> K) -> BTreeSet<K> {
    items.iter().map(f).collect()
}

/// Whether `value` is a function of `key` over `items` (equal keys, equal values).
fn determined<T, K: Ord, V: PartialEq>(
    items: &[T],
    key: impl Fn(&T) -> K,
    value: impl Fn(&T) -> V,
) -> bool {
    let mut seen: BTreeMap<K, V> = BTreeMap::new();
    for item in items {
        let v = value(item);
        match seen.get(&key(item)) {
            Some(previous) if *previous != v => return false,
            Some(_) => {}
            None => {
                seen.insert(key(item), v);
            }
        }
    }
    true
}

/// The inferred axes of one tensor held by `frags` (their ranks and offsets).
fn infer_axes(
    t: &TensorDescriptor,
    frags: &[&PlacementFragment],
    participants: &[Participant],
    topo: &Topology,
) -> Result<Vec<Axis>> {
    let ranks: Vec<(Rank, &PlacementFragment)> =
        frags.iter().map(|f| (rank_of(&f.rank), *f)).collect();
    let mut axes: Vec<Axis> = Vec::new();
    let shard_dims = t.shard_dims.clone().unwrap_or_default();
    for &d in &shard_dims {
        let Ok(di) = usize::try_from(d) else { continue };
        let offset = |x: &(Rank, &PlacementFragment)| x.1.global_offset.get(di).copied();
        // k splits d when it has several values and, among the fragments of one dp and pp
        // (the axes that never split), a box's start on d tells its k coordinate.
        let splits = |k: AxisKind| {
            distinct(&ranks, |x| x.0.get(k)).len() > 1
                && determined(&ranks, |x| (x.0.dp, x.0.pp, offset(x)), |x| x.0.get(k))
        };
        let kind = [AxisKind::Tp, AxisKind::Ep]
            .into_iter()
            .filter(|&k| k == AxisKind::Tp || d == 0)
            .filter(|k| !axes.iter().any(|a| a.kind == *k))
            .find(|&k| splits(k));
        let Some(kind) = kind else {
            return Err(unsupported(
                format!(
                    "tensor {}: dim {d} is sharded but neither a tp nor an ep coordinate decides its offsets (Mooncake splits only over tp, and ep on dim 0)",
                    t.tensor_id
                ),
                None,
            ));
        };
        axes.push(Axis {
            kind,
            semantics: Semantics::Split { dim: d },
        });
    }
    let all_values = |k: AxisKind| distinct(participants, |p| p.rank.get(k));
    let spans = |k: AxisKind| distinct(&ranks, |x| x.0.get(k)) == all_values(k);
    for kind in [AxisKind::Dp, AxisKind::Pp, AxisKind::Ep, AxisKind::Tp] {
        if topo.size(kind) == 1 || axes.iter().any(|a| a.kind == kind) {
            continue;
        }
        if matches!(kind, AxisKind::Ep | AxisKind::Tp) {
            let varying: Vec<AxisKind> = axes
                .iter()
                .map(|a| a.kind)
                .filter(|&k| distinct(&ranks, |x| x.0.get(k)).len() > 1)
                .collect();
            let varies = distinct(&ranks, |x| x.0.get(kind)).len() > 1;
            if varies
                && !varying.is_empty()
                && determined(&ranks, |x| x.0.project(&varying), |x| x.0.get(kind))
            {
                continue; // follows from the declared axes: Mooncake's coupled TP/EP
            }
        }
        let semantics = if spans(kind) {
            Semantics::Replicated
        } else {
            Semantics::Ownership
        };
        axes.push(Axis { kind, semantics });
    }
    axes.sort_by_key(|a| a.kind);
    Ok(axes)
}

/// Writes our placement as a Mooncake placement, inferring what it does not say (see the
/// module documentation) unless `options` gives it.
///
/// # Errors
///
/// `mooncake_export_override_invalid` when an override contradicts the placement (a
/// participant list without one of its ranks, an unknown tensor in the axes);
/// `mooncake_export_unsupported` when Mooncake cannot express it: a shard dim no tp/ep
/// coordinate decides, or a Mooncake rule the result breaks (the message says which; a
/// tensor's pointer `/tensors/i` is the same tensor in both documents).
pub fn export(placement: &Placement, options: &ExportOptions) -> Result<MooncakePlacement> {
    let fragments = placement.fragments();
    let ranks: BTreeSet<Rank> = fragments.iter().map(|f| rank_of(&f.rank)).collect();
    let participants = match &options.participants {
        Some(given) => {
            let named: BTreeSet<Rank> = given.iter().map(|p| p.rank).collect();
            if let Some(r) = ranks.iter().find(|r| !named.contains(r)) {
                return Err(override_invalid(format!(
                    "the participants name no participant of rank dp {} tp {} pp {} ep {}",
                    r.dp, r.tp, r.pp, r.ep
                )));
            }
            given.clone()
        }
        None => ranks
            .iter()
            .map(|r| Participant {
                participant_id: format!("dp{}-pp{}-ep{}-tp{}", r.dp, r.pp, r.ep, r.tp),
                rank: *r,
            })
            .collect(),
    };
    let size = |k: AxisKind| {
        options.sizes.get(&k).copied().unwrap_or_else(|| {
            participants
                .iter()
                .map(|p| p.rank.get(k))
                .max()
                .map_or(1, |m| m.saturating_add(1))
        })
    };
    let topology = Topology {
        tp_size: size(AxisKind::Tp),
        pp_size: size(AxisKind::Pp),
        ep_size: size(AxisKind::Ep),
        dp_size: size(AxisKind::Dp),
        participants: participants.clone(),
    };
    if let Some(name) = options
        .parallel_axes
        .keys()
        .find(|n| !placement.tensors().iter().any(|t| &&t.tensor_id == n))
    {
        return Err(override_invalid(format!(
            "parallel_axes names tensor {name}, which the placement does not have"
        )));
    }
    let mut by_tensor: HashMap<&str, Vec<&PlacementFragment>> = HashMap::new();
    for f in fragments {
        by_tensor.entry(f.tensor_id.as_str()).or_default().push(f);
    }
    let mut tensors = Vec::with_capacity(placement.tensors().len());
    for (i, t) in placement.tensors().iter().enumerate() {
        let frags = by_tensor
            .get(t.tensor_id.as_str())
            .map(Vec::as_slice)
            .unwrap_or_default();
        let parallel_axes = match options.parallel_axes.get(&t.tensor_id) {
            Some(axes) => axes.clone(),
            None => infer_axes(t, frags, &participants, &topology)
                .map_err(|e| e.with_pointer(Some(format!("/tensors/{i}"))))?,
        };
        tensors.push(Tensor {
            tensor_id: t.tensor_id.clone(),
            global_shape: t.global_shape.clone(),
            dtype: t.dtype.clone(),
            itemsize: t.itemsize,
            shard_dims: t.shard_dims.clone().unwrap_or_default(),
            layout_fingerprint: t.layout_fingerprint.clone(),
            parallel_axes,
            layer_id: t.layer_id,
            expert_id: t.expert_id,
        });
    }
    let input = MooncakeInput {
        resource_id: placement.model_id().to_owned(),
        revision: placement.revision().to_owned(),
        weight_generation: options.weight_generation.unwrap_or(0),
        placement_set_id: options
            .placement_set_id
            .clone()
            .unwrap_or_else(|| placement.placement_id().to_owned()),
        topology,
        tensors,
        fragments: fragments
            .iter()
            .map(|f| Fragment {
                placement_fragment_id: f.placement_fragment_id.clone(),
                tensor_id: f.tensor_id.clone(),
                global_offset: f.global_offset.clone(),
                local_shape: f.local_shape.clone(),
                nbytes: f.nbytes,
                rank: rank_of(&f.rank),
                pipeline_stage_id: None,
                aliases: f.aliases.clone(),
            })
            .collect(),
    };
    MooncakePlacement::from_input(input).map_err(|e| {
        let pointer = e
            .path()
            .filter(|p| p.starts_with("/tensors/"))
            .map(str::to_owned);
        unsupported(
            format!(
                "Mooncake cannot express this placement: {} ({})",
                e.message(),
                e.code()
            ),
            pointer,
        )
    })
}

/// Reads a Mooncake placement as ours: resource_id becomes model_id; descriptors (shard
/// dims, partition_dim when there is one) and fragments (ids, ranks, boxes, aliases) are
/// kept; what ours has no place for is listed in [`Imported::dropped`].
///
/// # Errors
///
/// This project's placement codes, when our contract rejects what Mooncake accepts (for
/// instance a replicated tensor held in several boxes by one rank).
pub fn import(m: &MooncakePlacement) -> Result<Imported> {
    import_owned(m.clone())
}

/// As [`import`], taking the placement: its strings and boxes move into ours instead of
/// being copied (what `plan` does with a placement it no longer needs).
///
/// # Errors
///
/// As [`import`].
pub fn import_owned(m: MooncakePlacement) -> Result<Imported> {
    let mut dropped = dropped_members(&m);
    let MooncakePlacement {
        resource_id,
        revision,
        placement_id: theirs,
        tensors,
        parts,
        ..
    } = m;
    let manifest = PlacementManifest {
        model_id: resource_id,
        revision,
        placement_id: None,
        tensors: tensors
            .into_iter()
            .map(|t| TensorDescriptor {
                partition_dim: match t.shard_dims.as_slice() {
                    [only] => Some(*only),
                    _ => None,
                },
                shard_dims: Some(t.shard_dims),
                dtype: t.dtype,
                expert_id: t.expert_id,
                global_shape: t.global_shape,
                itemsize: t.itemsize,
                layer_id: t.layer_id,
                layout_fingerprint: t.layout_fingerprint,
                tensor_id: t.tensor_id,
            })
            .collect(),
        fragments: parts
            .into_iter()
            .flat_map(|p| p.fragments)
            .map(|f| PlacementFragment {
                aliases: f.aliases,
                global_offset: f.global_offset,
                local_shape: f.local_shape,
                nbytes: f.nbytes,
                placement_fragment_id: f.placement_fragment_id,
                rank: ParallelRank {
                    dp: f.rank.dp,
                    ep: f.rank.ep,
                    pp: f.rank.pp,
                    tp: f.rank.tp,
                },
                tensor_id: f.tensor_id,
            })
            .collect(),
    };
    // `Placement::from_wire`, without writing the manifest as JSON and reading it back.
    let placement = Placement::from_wire_owned(manifest)?;
    dropped.insert(
        0,
        format!(
            "placement_id: {theirs} (Mooncake's id; ours is {})",
            placement.placement_id()
        ),
    );
    Ok(Imported { placement, dropped })
}

/// What of `m` our placement has no place for, but its placement_id.
fn dropped_members(m: &MooncakePlacement) -> Vec<String> {
    let t = m.topology();
    let mut dropped = vec![
        format!("weight_generation: {}", m.weight_generation()),
        format!("placement_set_id: {}", m.placement_set_id()),
        format!(
            "topology: tp_size {}, pp_size {}, ep_size {}, dp_size {}, {} named participants, topology_id {}",
            t.tp_size,
            t.pp_size,
            t.ep_size,
            t.dp_size,
            t.participants.len(),
            m.topology_id()
        ),
    ];
    let with_axes = m
        .tensors()
        .iter()
        .filter(|t| !t.parallel_axes.is_empty())
        .count();
    if with_axes > 0 {
        dropped.push(format!("parallel_axes of {with_axes} tensors"));
    }
    let staged = m
        .fragments()
        .filter(|f| f.pipeline_stage_id.is_some())
        .count();
    if staged > 0 {
        dropped.push(format!("pipeline_stage_id of {staged} fragments"));
    }
    dropped
}
