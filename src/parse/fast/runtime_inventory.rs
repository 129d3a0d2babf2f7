//! The fast path of the runtime inventory reader (§10.3): one pass over the text straight
//! into runtime fragments, no document tree.
//!
//! Records with the listed members only (no unknown ones), zero storage and byte offsets
//! and row-major strides are read here; each per-record step of §10.3 is checked as a
//! yes/no question. A record's descriptor is checked in full (by the general path's own
//! descriptor checks) the first time its tensor_id appears and whenever its members are
//! not spelled byte for byte as in that first record; byte-identical members give the
//! identical canonical descriptor. When every step holds, the descriptors and fragments
//! are exactly those the general path builds, so §8.4 construction gives the same result,
//! error included; anything else returns `None` and the general path reports the error.

use std::borrow::Cow;

use super::cursor::{aliases, same_bytes, Cursor, Fast, KeyOrder};
use super::placement::rank;
use crate::error::Result;
use crate::inventory::InventoryOptions;
use crate::limits::Limits;
use crate::model::descriptor::{accept_typed, Typed};
use crate::model::order::sort_by_str_key;
use crate::model::runtime::RuntimeHeader;
use crate::model::{construct_runtime, Runtime};
use crate::path::Path;
use crate::validate::fxhash::{map_with_capacity, FxHashMap};
use crate::value::Value;
use crate::wire::{ParallelRank, RuntimeFragment, TensorDescriptor};

/// The descriptor members of a record as written, in the order of [`DescriptorFields`]
/// after tensor_id: global_shape, dtype, itemsize, partition_dim, shard_dims, layer_id,
/// expert_id, layout_fingerprint (`None`: absent).
type Spelling<'a> = [Option<&'a str>; 8];

/// Whether two records spell their descriptor members byte for byte alike.
fn same_spelling(a: &Spelling<'_>, b: &Spelling<'_>) -> bool {
    a.iter().zip(b).all(|(x, y)| match (x, y) {
        (Some(x), Some(y)) => same_bytes(x.as_bytes(), y.as_bytes()),
        (None, None) => true,
        _ => false,
    })
}

/// The distinct descriptors met so far, with the spelling that produced each.
#[derive(Default)]
struct Descriptors<'a> {
    by_id: FxHashMap<&'a str, usize>,
    list: Vec<(TensorDescriptor, Spelling<'a>)>,
}

impl<'a> Descriptors<'a> {
    /// §10.3 steps 4.1–4.2 as a yes/no question: the record's canonical descriptor, checked,
    /// and equal to any earlier one of the same tensor_id. Returns its index.
    fn merge(&mut self, tensor_id: &'a str, spelling: &Spelling<'a>) -> Fast<usize> {
        if let Some(&index) = self.by_id.get(tensor_id) {
            let (known, known_spelling) = &self.list[index];
            if same_spelling(known_spelling, spelling) || canonical(tensor_id, spelling)? == *known
            {
                return Some(index);
            }
            return None;
        }
        let index = self.list.len();
        self.list.push((canonical(tensor_id, spelling)?, *spelling));
        self.by_id.insert(tensor_id, index);
        Some(index)
    }

    /// The distinct descriptors sorted by tensor_id.
    fn into_sorted(self) -> Vec<TensorDescriptor> {
        let mut tensors: Vec<TensorDescriptor> = self.list.into_iter().map(|(d, _)| d).collect();
        sort_by_str_key(&mut tensors, |t| &t.tensor_id);
        tensors
    }
}

/// The §2.2 checks and §3 canonical form of a spelled descriptor, members read by their
/// types (a member of another type leaves the document to the general path).
fn canonical(tensor_id: &str, spelling: &Spelling<'_>) -> Fast<TensorDescriptor> {
    // Each spelling is exactly one value's text, already read once by the same cursor.
    let set = |i: usize| spelling[i].filter(|text| *text != "null").map(Cursor::new);
    let opt_u64 = |i: usize| match set(i) {
        None => Some(None),
        Some(mut c) => c.u64().map(Some),
    };
    // partition_dim is required; its null means "not set".
    spelling[3]?;
    let typed = Typed {
        tensor_id,
        global_shape: Cursor::new(spelling[0]?).u64s(1)?,
        dtype: Cursor::new(spelling[1]?).string()?,
        itemsize: Cursor::new(spelling[2]?).u64_min(1)?,
        partition_dim: opt_u64(3)?,
        shard_dims: match set(4) {
            None => None,
            Some(mut c) => Some(c.u64s(0)?),
        },
        layer_id: opt_u64(5)?,
        expert_id: opt_u64(6)?,
        layout_fingerprint: Cursor::new(spelling[7]?).string()?,
    };
    accept_typed(typed)
}

/// The top-level members read here (others leave the document to the general path).
const TOP_KEYS: [&str; 7] = [
    "model_id",
    "revision",
    "instance_id",
    "placement_id",
    "generation",
    "lease_id",
    "tensors",
];
/// model_id, revision, instance_id, generation, tensors.
const TOP_REQUIRED: u32 = 0b101_0111;

/// The record members read here, in a framework's natural order (the prediction's start).
const RECORD_KEYS: [&str; 25] = [
    "fragment_id",
    "tensor_id",
    "global_shape",
    "global_offset",
    "local_shape",
    "dtype",
    "itemsize",
    "partition_dim",
    "shard_dims",
    "layer_id",
    "expert_id",
    "layout_fingerprint",
    "address",
    "nbytes",
    "worker_id",
    "endpoint",
    "device",
    "rank",
    "lease_generation",
    "aliases",
    "is_contiguous",
    "stride",
    "storage_offset",
    "byte_offset",
    "placement_fragment_id",
];
/// Every record member but shard_dims, layer_id, expert_id, aliases and
/// placement_fragment_id.
const RECORD_REQUIRED: u32 = ((1 << 25) - 1) & !(0b111 << 8) & !(1 << 19) & !(1 << 24);

/// Reads a runtime inventory, or `None` when the general path must run.
pub(crate) fn runtime_inventory(
    text: &[u8],
    options: &InventoryOptions<'_>,
    limits: &Limits,
) -> Option<Result<Runtime>> {
    if options.owner_resolver.is_some() || !limits.admits_fast_shapes() {
        return None;
    }
    match options.address_semantics {
        None | Some(Value::Null) => {}
        Some(Value::Str(s)) if s == "view" => {}
        Some(_) => return None,
    }
    let text = std::str::from_utf8(text).ok()?;
    let mut cursor = Cursor::limited(text, limits.max_string_bytes);
    let mut descriptors = Descriptors {
        by_id: map_with_capacity(1024),
        list: Vec::new(),
    };
    // Reserve once instead of growing (a grown vector is copied and its old buffer stays
    // in the peak): no record is shorter than about 400 bytes of text (its 20 required
    // member names alone take 300), so this is never too small for a real inventory.
    // Untouched capacity costs address space, not memory.
    let mut fragments = Vec::with_capacity(text.len() / 400);
    let mut leases: Option<(u64, bool)> = None;
    let mut header: [Option<Value<'_>>; 5] = Default::default();
    let mut generation = 0;
    let (mut record_order, mut rank_order) = (KeyOrder::listed(), KeyOrder::listed());
    let seen = cursor.members(&TOP_KEYS, &mut KeyOrder::listed(), |c, key| {
        match key {
            4 => generation = c.u64()?,
            6 => c.array(|c| {
                let (fragment, lease) =
                    record(c, &mut descriptors, &mut record_order, &mut rank_order)?;
                let (first, same) = leases.get_or_insert((lease, true));
                *same &= *first == lease;
                fragments.push(fragment);
                Some(())
            })?,
            _ => {
                let slot = if key == 5 { 4 } else { key };
                header[slot] = Some(if (key == 3 || key == 5) && c.null() {
                    Value::Null
                } else {
                    Value::Str(Cow::Borrowed(c.string()?))
                });
            }
        }
        Some(())
    })?;
    if seen & TOP_REQUIRED != TOP_REQUIRED || !cursor.at_end() {
        return None;
    }
    if leases.is_some_and(|(lease, same)| !same || lease != generation) {
        return None;
    }
    let [model_id, revision, instance_id, placement_id, lease_id] = &header;
    let generation_value = Value::UInt(generation);
    let header = RuntimeHeader {
        model_id: model_id.as_ref()?,
        revision: revision.as_ref()?,
        instance_id: instance_id.as_ref()?,
        lease_id: set(lease_id.as_ref()),
        placement_id: set(placement_id.as_ref()),
        generation: Some(&generation_value),
    };
    let tensors = descriptors.into_sorted();
    if !limits.admits_counts(&tensors, fragments.len()) {
        return None;
    }
    Some(construct_runtime(
        &Path::Root,
        &header,
        tensors,
        fragments,
        Vec::new(),
    ))
}

/// An optional member: absent and `null` are not set.
fn set<'v, 'a>(value: Option<&'v Value<'a>>) -> Option<&'v Value<'a>> {
    value.filter(|v| !matches!(v, Value::Null))
}

/// One record (§10.3 step 4) and its lease_generation.
fn record<'a>(
    cursor: &mut Cursor<'a>,
    descriptors: &mut Descriptors<'a>,
    order: &mut KeyOrder,
    rank_order: &mut KeyOrder,
) -> Fast<(RuntimeFragment, u64)> {
    let mut tensor_id = "";
    let mut spelling: Spelling<'a> = [None; 8];
    let (mut local_shape, mut stride, mut global_offset) = (Vec::new(), Vec::new(), Vec::new());
    let mut rank_value = ParallelRank {
        dp: 0,
        ep: 0,
        pp: 0,
        tp: 0,
    };
    let (mut lease, mut address, mut nbytes) = (0, 0, 0);
    let (mut fragment_id, mut worker_id, mut endpoint, mut device) = ("", "", "", "");
    let mut alias_names = Vec::new();
    let mut placement_fragment_id = None;
    let seen = cursor.members(&RECORD_KEYS, order, |c, key| {
        match key {
            0 => fragment_id = c.non_empty()?,
            1 => tensor_id = c.string()?,
            2 => spelling[0] = Some(c.raw_simple()?),
            3 => global_offset = c.u64s(0)?,
            4 => local_shape = c.u64s(1)?,
            5 => spelling[1] = Some(c.raw_simple()?),
            6 => spelling[2] = Some(c.raw_simple()?),
            7 => spelling[3] = Some(c.raw_simple()?),
            8 => spelling[4] = Some(c.raw_simple()?),
            9 => spelling[5] = Some(c.raw_simple()?),
            10 => spelling[6] = Some(c.raw_simple()?),
            11 => spelling[7] = Some(c.raw_simple()?),
            12 => address = c.u64_min(1)?,
            13 => nbytes = c.u64_min(1)?,
            14 => worker_id = c.non_empty()?,
            15 => endpoint = c.non_empty()?,
            16 => device = c.non_empty()?,
            17 => rank_value = rank(c, rank_order)?,
            18 => lease = c.u64()?,
            19 => {
                if !c.null() {
                    alias_names = aliases(c)?;
                }
            }
            20 => c.literal(b"true").then_some(())?,
            21 => stride = c.u64s(0)?,
            22 | 23 => (c.u64()? == 0).then_some(())?,
            _ => {
                if !c.null() {
                    placement_fragment_id = Some(c.non_empty()?.to_owned());
                }
            }
        }
        Some(())
    })?;
    if seen & RECORD_REQUIRED != RECORD_REQUIRED
        || !row_major(&local_shape, &stride)
        || address.checked_add(nbytes).is_none()
    {
        return None;
    }
    let index = descriptors.merge(tensor_id, &spelling)?;
    let fragment = RuntimeFragment {
        address,
        aliases: alias_names,
        device: device.to_owned(),
        endpoint: endpoint.to_owned(),
        fragment_id: fragment_id.to_owned(),
        global_offset,
        lease_generation: lease,
        local_shape,
        nbytes,
        placement_fragment_id,
        rank: rank_value,
        tensor_id: descriptors.list[index].0.tensor_id.clone(),
        worker_id: worker_id.to_owned(),
    };
    Some((fragment, lease))
}

/// Whether `stride` is exactly the row-major contiguous stride of `shape` (a subset of
/// what §10.3 step 4.3.5 accepts).
fn row_major(shape: &[u64], stride: &[u64]) -> bool {
    if shape.len() != stride.len() {
        return false;
    }
    let mut expected = 1u64;
    for (&extent, &given) in shape.iter().zip(stride).rev() {
        if given != expected {
            return false;
        }
        let Some(next) = expected.checked_mul(extent) else {
            return false;
        };
        expected = next;
    }
    true
}
