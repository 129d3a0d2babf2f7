//! The fast path of [`Placement::from_wire`](crate::Placement::from_wire) for a typed
//! manifest built in memory (the Mooncake import): the values checked as the text fast
//! path checks them, then §8.1 construction, without writing the manifest as JSON and
//! reading it back.
//!
//! `from_wire` is defined as the parse of the manifest's canonical JSON under the default
//! [`Limits`]. This path answers `None` whenever that parse could differ: a value the text
//! fast path would leave to the general path, a limit the document might cross (its size
//! is bounded from above), so the result, error included, is always `from_wire`'s.

use std::borrow::Cow;

use crate::error::Result;
use crate::limits::Limits;
use crate::locate::MANIFEST;
use crate::model::placement::PlacementHeader;
use crate::model::{construct_placement, Placement};
use crate::path::Path;
use crate::rules::descriptor::{accept_typed, Typed};
use crate::rules::values::{
    at_least, is_non_empty, sort_aliases, MIN_EXTENT, MIN_ITEMSIZE, MIN_NBYTES,
};
use crate::value::Value;
use crate::wire::{PlacementManifest, TensorDescriptor};

/// Bytes a fragment element takes besides its strings and integers (member names,
/// punctuation), rounded up.
const FRAGMENT_OVERHEAD: u64 = 256;
/// The same for a tensor element.
const TENSOR_OVERHEAD: u64 = 256;
/// The longest written integer (u64::MAX) and its separator.
const INTEGER_BYTES: u64 = 21;

/// An upper bound of the bytes `s` takes written as a JSON string (every byte escaped as
/// `\u00XX` at worst, and its quotes).
fn string_bytes(s: &str) -> u64 {
    (s.len() as u64).saturating_mul(6).saturating_add(2)
}

/// `Placement::from_wire(&manifest)`, through this path when it applies.
pub(crate) fn placement_from_manifest(mut manifest: PlacementManifest) -> Result<Placement> {
    let Some(tensors) = admitted(&manifest) else {
        return Placement::from_wire(&manifest);
    };
    for f in &mut manifest.fragments {
        sort_aliases(&mut f.aliases);
    }
    let placement_id = match manifest.placement_id {
        Some(id) => Value::Str(Cow::Owned(id)),
        None => Value::Null,
    };
    construct_placement(
        &Path::Root,
        &MANIFEST,
        &PlacementHeader {
            model_id: &Value::Str(Cow::Borrowed(&manifest.model_id)),
            revision: &Value::Str(Cow::Borrowed(&manifest.revision)),
            placement_id: Some(&placement_id),
        },
        tensors,
        manifest.fragments,
        crate::limits::DEFAULT_MAX_GEOMETRY_WORK,
    )
}

/// The canonical descriptors when the text fast path would accept every value of
/// `manifest`'s JSON and the default limits admit it; `None` otherwise.
fn admitted(manifest: &PlacementManifest) -> Option<Vec<TensorDescriptor>> {
    let limits = Limits::default();
    let max_string = limits.max_string_bytes;
    let fits = |s: &str| s.len() <= max_string;
    if !fits(&manifest.model_id)
        || !fits(&manifest.revision)
        || !manifest.placement_id.as_deref().is_none_or(fits)
    {
        return None;
    }
    let mut size = string_bytes(&manifest.model_id)
        .saturating_add(string_bytes(&manifest.revision))
        .saturating_add(manifest.placement_id.as_deref().map_or(4, string_bytes))
        .saturating_add(64);
    let mut tensors = Vec::with_capacity(manifest.tensors.len());
    for t in &manifest.tensors {
        let strings = [&t.tensor_id, &t.dtype, &t.layout_fingerprint];
        if !strings.iter().all(|s| fits(s))
            || !t.global_shape.iter().all(|&n| at_least(n, MIN_EXTENT))
            || !at_least(t.itemsize, MIN_ITEMSIZE)
        {
            return None;
        }
        let integers = t.global_shape.len() + t.shard_dims.as_ref().map_or(0, Vec::len) + 5;
        size = strings
            .iter()
            .fold(size, |n, s| n.saturating_add(string_bytes(s)))
            .saturating_add(INTEGER_BYTES.saturating_mul(integers as u64))
            .saturating_add(TENSOR_OVERHEAD);
        tensors.push(accept_typed(Typed {
            tensor_id: &t.tensor_id,
            global_shape: t.global_shape.clone(),
            dtype: &t.dtype,
            itemsize: t.itemsize,
            partition_dim: t.partition_dim,
            shard_dims: t.shard_dims.clone(),
            layer_id: t.layer_id,
            expert_id: t.expert_id,
            layout_fingerprint: &t.layout_fingerprint,
        })?);
    }
    for f in &manifest.fragments {
        let aliases_ok = f.aliases.is_empty() || {
            let mut sorted = f.aliases.clone();
            sorted.iter().all(|a| is_non_empty(a) && fits(a)) && sort_aliases(&mut sorted)
        };
        let ok = is_non_empty(&f.placement_fragment_id)
            && is_non_empty(&f.tensor_id)
            && fits(&f.placement_fragment_id)
            && fits(&f.tensor_id)
            && f.local_shape.iter().all(|&n| at_least(n, MIN_EXTENT))
            && at_least(f.nbytes, MIN_NBYTES)
            && aliases_ok;
        if !ok {
            return None;
        }
        let integers = f.global_offset.len() + f.local_shape.len() + 5;
        size = f
            .aliases
            .iter()
            .fold(size, |n, a| n.saturating_add(string_bytes(a)))
            .saturating_add(string_bytes(&f.placement_fragment_id))
            .saturating_add(string_bytes(&f.tensor_id))
            .saturating_add(INTEGER_BYTES.saturating_mul(integers as u64))
            .saturating_add(FRAGMENT_OVERHEAD);
    }
    let admitted = size <= limits.max_document_bytes
        && limits.admits_counts(&tensors, manifest.fragments.len());
    admitted.then_some(tensors)
}
