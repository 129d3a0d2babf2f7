//! The fast path of the strict placement parse (§6.2): one pass over the text straight
//! into the wire values, no document tree.
//!
//! It reads the documents placements are made of (see [`crate::reader::cursor`]) and
//! checks every per-element rule of §6.2 steps 2–4 as a yes/no question. When all hold, the
//! tensors and fragments it built are exactly those the general path builds, and §8.1
//! construction runs on them. Anything else (invalid JSON, a failed element check, an
//! escape, a rejection of §8.1) returns `None` and the general path reports the error with
//! its exact code, message and pointer.

use std::borrow::Cow;

use crate::reader::cursor::{aliases, rank, Cursor, Fast, KeyOrder};
// The key sets of §6.1, shared with the general path.
use crate::limits::Limits;
use crate::locate::MANIFEST;
use crate::model::placement::PlacementHeader;
use crate::model::{construct_placement, Placement};
use crate::path::Path;
use crate::rules::descriptor::{accept_typed, Typed};
use crate::rules::values::{MIN_EXTENT, MIN_ITEMSIZE, MIN_NBYTES, MIN_OFFSET};
use crate::value::Value;
use crate::wire::PlacementManifest;
use crate::wire::{ParallelRank, PlacementFragment, TensorDescriptor};

/// The index of each member in its schema field list, as [`Cursor::members`] reports it,
/// and `ALL`: every member is required.
macro_rules! member_indices {
    ($module:ident, $wire:ident, $($name:ident),*) => {
        mod $module {
            use crate::reader::cursor::{index_of, mask_of};
            use crate::wire::{key, $wire};
            $(pub(super) const $name: usize = index_of($wire::FIELDS, key::$name);)*
            pub(super) const ALL: u32 = mask_of($wire::FIELDS, $wire::REQUIRED);
        }
    };
}

member_indices!(
    manifest,
    PlacementManifest,
    FRAGMENTS,
    MODEL_ID,
    PLACEMENT_ID,
    REVISION,
    TENSORS
);
member_indices!(
    descriptor,
    TensorDescriptor,
    DTYPE,
    EXPERT_ID,
    GLOBAL_SHAPE,
    ITEMSIZE,
    LAYER_ID,
    LAYOUT_FINGERPRINT,
    PARTITION_DIM,
    SHARD_DIMS,
    TENSOR_ID
);
member_indices!(
    fragment,
    PlacementFragment,
    ALIASES,
    GLOBAL_OFFSET,
    LOCAL_SHAPE,
    NBYTES,
    PLACEMENT_FRAGMENT_ID,
    RANK,
    TENSOR_ID
);

/// Parses and constructs a valid placement, or `None` when the general path must run (for
/// anything this path does not read, and for every rejection).
pub(crate) fn placement(text: &str, limits: &Limits) -> Option<Placement> {
    if !limits.admits_fast_shapes() {
        return None;
    }
    let mut cursor = Cursor::limited(text, limits.max_string_bytes);
    let mut tensors = Vec::new();
    // Reserve once instead of growing (a grown vector leaves its old buffer behind in
    // the peak memory): no fragment element is shorter than about 200 bytes, no tensor
    // element shorter than about 150. Untouched capacity costs address space, not memory.
    let mut fragments = Vec::with_capacity(text.len() / 200);
    let (mut model_id, mut revision, mut placement_id) = ("", "", Value::Null);
    let mut orders = [KeyOrder::listed(), KeyOrder::listed(), KeyOrder::listed()];
    let [fragment_order, rank_order, tensor_order] = &mut orders;
    let seen = cursor.members(
        PlacementManifest::FIELDS,
        &mut KeyOrder::listed(),
        |c, key| {
            match key {
                manifest::FRAGMENTS => c.array(|c| {
                    fragments.push(fragment(c, fragment_order, rank_order)?);
                    Some(())
                })?,
                manifest::MODEL_ID => model_id = c.string()?,
                manifest::PLACEMENT_ID => {
                    if !c.null() {
                        placement_id = Value::Str(Cow::Borrowed(c.string()?));
                    }
                }
                manifest::REVISION => revision = c.string()?,
                manifest::TENSORS => c.array(|c| {
                    if tensors.capacity() == 0 {
                        tensors.reserve(text.len().saturating_sub(c.offset()) / 150);
                    }
                    tensors.push(tensor(c, tensor_order)?);
                    Some(())
                })?,
                _ => return None,
            }
            Some(())
        },
    )?;
    if seen != manifest::ALL || !cursor.at_end() || !limits.admits_counts(&tensors, fragments.len())
    {
        return None;
    }
    let model_id = Value::Str(Cow::Borrowed(model_id));
    let revision = Value::Str(Cow::Borrowed(revision));
    construct_placement(
        &Path::Root,
        &MANIFEST,
        &PlacementHeader {
            model_id: &model_id,
            revision: &revision,
            placement_id: Some(&placement_id),
        },
        tensors,
        fragments,
        limits.max_geometry_work,
    )
    .ok()
}

/// `null` or an integer.
fn opt_u64(cursor: &mut Cursor<'_>) -> Fast<Option<u64>> {
    if cursor.null() {
        Some(None)
    } else {
        cursor.u64().map(Some)
    }
}

/// One tensor element with its 9 keys, typed, then the §2.2 checks.
fn tensor(cursor: &mut Cursor<'_>, order: &mut KeyOrder) -> Fast<TensorDescriptor> {
    let mut typed = Typed {
        tensor_id: "",
        global_shape: Vec::new(),
        dtype: "",
        itemsize: 0,
        partition_dim: None,
        shard_dims: None,
        layer_id: None,
        expert_id: None,
        layout_fingerprint: "",
    };
    let seen = cursor.members(TensorDescriptor::FIELDS, order, |c, key| {
        match key {
            descriptor::DTYPE => typed.dtype = c.string()?,
            descriptor::EXPERT_ID => typed.expert_id = opt_u64(c)?,
            descriptor::GLOBAL_SHAPE => typed.global_shape = c.u64s(MIN_EXTENT)?,
            descriptor::ITEMSIZE => typed.itemsize = c.u64_min(MIN_ITEMSIZE)?,
            descriptor::LAYER_ID => typed.layer_id = opt_u64(c)?,
            descriptor::LAYOUT_FINGERPRINT => typed.layout_fingerprint = c.string()?,
            descriptor::PARTITION_DIM => typed.partition_dim = opt_u64(c)?,
            descriptor::SHARD_DIMS => {
                typed.shard_dims = if c.null() { None } else { Some(c.u64s(0)?) }
            }
            descriptor::TENSOR_ID => typed.tensor_id = c.string()?,
            _ => return None,
        }
        Some(())
    })?;
    if seen != descriptor::ALL {
        return None;
    }
    accept_typed(typed)
}

/// One fragment element with its 7 keys, the rank with its 4, and the §2.1 and §2.3
/// checks.
fn fragment(
    cursor: &mut Cursor<'_>,
    order: &mut KeyOrder,
    rank_order: &mut KeyOrder,
) -> Fast<PlacementFragment> {
    let mut fragment = PlacementFragment {
        aliases: Vec::new(),
        global_offset: Vec::new(),
        local_shape: Vec::new(),
        nbytes: 0,
        placement_fragment_id: String::new(),
        rank: ParallelRank {
            dp: 0,
            ep: 0,
            pp: 0,
            tp: 0,
        },
        tensor_id: String::new(),
    };
    let seen = cursor.members(PlacementFragment::FIELDS, order, |c, key| {
        match key {
            fragment::ALIASES => fragment.aliases = aliases(c)?,
            fragment::GLOBAL_OFFSET => fragment.global_offset = c.u64s(MIN_OFFSET)?,
            fragment::LOCAL_SHAPE => fragment.local_shape = c.u64s(MIN_EXTENT)?,
            fragment::NBYTES => fragment.nbytes = c.u64_min(MIN_NBYTES)?,
            fragment::PLACEMENT_FRAGMENT_ID => c
                .non_empty()?
                .clone_into(&mut fragment.placement_fragment_id),
            fragment::RANK => fragment.rank = rank(c, rank_order)?,
            fragment::TENSOR_ID => c.non_empty()?.clone_into(&mut fragment.tensor_id),
            _ => return None,
        }
        Some(())
    })?;
    (seen == fragment::ALL).then_some(fragment)
}
