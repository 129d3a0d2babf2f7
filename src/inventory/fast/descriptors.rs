//! The distinct tensor descriptors of a runtime inventory (§10.3 steps 4.1–4.2), read on
//! the fast path: a record's descriptor is checked in full the first time its tensor_id
//! appears and whenever its members are not spelled byte for byte as in that first record;
//! byte-identical members give the identical canonical descriptor.

use crate::reader::cursor::{same_bytes, Cursor, Fast};
use crate::rules::descriptor::{accept_typed, Typed};
use crate::rules::values::{MIN_EXTENT, MIN_ITEMSIZE};
use crate::util::fxhash::{map_with_capacity, FxHashMap};
use crate::util::order::sort_by_str_key;
use crate::wire::TensorDescriptor;

/// The descriptor members of a record as written, in the order of `DescriptorFields`
/// after tensor_id: global_shape, dtype, itemsize, partition_dim, shard_dims, layer_id,
/// expert_id, layout_fingerprint (`None`: absent).
pub(super) type Spelling<'a> = [Option<&'a str>; 8];

/// Whether two records spell their descriptor members byte for byte alike.
fn same_spelling(a: &Spelling<'_>, b: &Spelling<'_>) -> bool {
    a.iter().zip(b).all(|(x, y)| match (x, y) {
        (Some(x), Some(y)) => same_bytes(x.as_bytes(), y.as_bytes()),
        (None, None) => true,
        _ => false,
    })
}

/// The distinct descriptors met so far, in order of first appearance, with the spelling
/// that produced each.
pub(super) struct Descriptors<'a> {
    by_id: FxHashMap<&'a str, usize>,
    list: Vec<TensorDescriptor>,
    spellings: Vec<Spelling<'a>>,
}

impl<'a> Descriptors<'a> {
    /// No descriptors yet.
    pub(super) fn new() -> Self {
        Descriptors {
            by_id: map_with_capacity(1024),
            list: Vec::new(),
            spellings: Vec::new(),
        }
    }

    /// §10.3 steps 4.1–4.2 as a yes/no question: the record's canonical descriptor, checked,
    /// and equal to any earlier one of the same tensor_id. Returns its index in
    /// [`Descriptors::list`].
    pub(super) fn merge(&mut self, tensor_id: &'a str, spelling: &Spelling<'a>) -> Fast<usize> {
        if let Some(&index) = self.by_id.get(tensor_id) {
            if same_spelling(&self.spellings[index], spelling)
                || canonical(tensor_id, spelling)? == self.list[index]
            {
                return Some(index);
            }
            return None;
        }
        let index = self.list.len();
        self.list.push(canonical(tensor_id, spelling)?);
        self.spellings.push(*spelling);
        self.by_id.insert(tensor_id, index);
        Some(index)
    }

    /// The distinct descriptors in order of first appearance (the indices `merge` gave).
    pub(super) fn list(&self) -> &[TensorDescriptor] {
        &self.list
    }

    /// The distinct descriptors sorted by tensor_id.
    pub(super) fn into_sorted(self) -> Vec<TensorDescriptor> {
        let mut tensors = self.list;
        // Merged from the records: their order locates nothing.
        let _ = sort_by_str_key(&mut tensors, |t| &t.tensor_id);
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
        global_shape: Cursor::new(spelling[0]?).u64s(MIN_EXTENT)?,
        dtype: Cursor::new(spelling[1]?).string()?,
        itemsize: Cursor::new(spelling[2]?).u64_min(MIN_ITEMSIZE)?,
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
