//! Shared pieces of the strict parsers: exact key sets, and the descriptor and rank
//! members of the two forms that carry them.

use crate::error::{Code, Error, Result};
use crate::limits::Limits;
use crate::model::descriptor::{check_descriptor, DescriptorFields};
use crate::model::rank::{check_rank, RankFields};
use crate::path::Path;
use crate::value::{Object, Value};
use crate::wire::{ParallelRank, TensorDescriptor};

/// The 5 top-level keys of a placement manifest (§6.1).
pub(crate) const PLACEMENT_KEYS: [&str; 5] = [
    "fragments",
    "model_id",
    "placement_id",
    "revision",
    "tensors",
];

/// The 7 keys of a placement fragment (§6.1).
pub(crate) const PLACEMENT_FRAGMENT_KEYS: [&str; 7] = [
    "aliases",
    "global_offset",
    "local_shape",
    "nbytes",
    "placement_fragment_id",
    "rank",
    "tensor_id",
];

/// The 9 keys of a tensor element (§6.1).
pub(crate) const TENSOR_KEYS: [&str; 9] = [
    "dtype",
    "expert_id",
    "global_shape",
    "itemsize",
    "layer_id",
    "layout_fingerprint",
    "partition_dim",
    "shard_dims",
    "tensor_id",
];

/// The 4 keys of a rank.
pub(crate) const RANK_KEYS: [&str; 4] = ["dp", "ep", "pp", "tp"];

static NULL: Value<'static> = Value::Null;

/// Member `key` of an object whose key set was checked (absent cannot happen; `null`
/// would be returned).
pub(crate) fn member<'v, 'a>(object: &'v Object<'a>, key: &str) -> &'v Value<'a> {
    object.get(key).unwrap_or(&NULL)
}

/// The top level of a document: an object, else `not_an_object`.
pub(crate) fn top_object<'v, 'a>(document: &'v Value<'a>, label: &str) -> Result<&'v Object<'a>> {
    document.as_object().ok_or_else(|| {
        Error::at(
            Code::NotAnObject,
            format!("{label} must be a JSON object"),
            &Path::Root,
        )
    })
}

/// An object with exactly `keys`, else `fields_mismatch` with "{label} schema fields do
/// not match contract", located at `path`.
pub(crate) fn exact<'v, 'a>(
    value: &'v Value<'a>,
    keys: &[&str],
    label: &dyn Fn() -> String,
    path: &Path<'_>,
) -> Result<&'v Object<'a>> {
    match value.as_object() {
        Some(object) if object.has_exact_keys(keys) => Ok(object),
        _ => Err(Error::at(
            Code::FieldsMismatch,
            format!("{} schema fields do not match contract", label()),
            path,
        )),
    }
}

/// The descriptor checks (§2.2) on a tensor element with exactly the 9 keys.
pub(crate) fn descriptor(object: &Object<'_>, path: &Path<'_>) -> Result<TensorDescriptor> {
    let fields = DescriptorFields {
        tensor_id: member(object, "tensor_id"),
        global_shape: member(object, "global_shape"),
        dtype: member(object, "dtype"),
        itemsize: member(object, "itemsize"),
        partition_dim: object.get("partition_dim"),
        layout_fingerprint: member(object, "layout_fingerprint"),
        layer_id: object.get("layer_id"),
        expert_id: object.get("expert_id"),
        shard_dims: object.get("shard_dims"),
    };
    check_descriptor(&fields, path)
}

/// The ParallelRank checks (§2.1) on a rank object with exactly the 4 keys.
pub(crate) fn rank(object: &Object<'_>, path: &Path<'_>) -> Result<ParallelRank> {
    let fields = RankFields {
        dp: member(object, "dp"),
        tp: member(object, "tp"),
        pp: member(object, "pp"),
        ep: member(object, "ep"),
    };
    check_rank(&fields, path)
}

/// Member `tensors` of a placement (§6.2 step 3) or runtime manifest (§9.1 step 3): a
/// sequence of at most `max_tensors` objects with exactly the 9 tensor keys, each run
/// through `max_dims` and the descriptor checks. `kind` is `placement` or `runtime`, as the
/// messages name it.
pub(crate) fn tensors(
    top: &Object<'_>,
    kind: &str,
    root: &Path<'_>,
    limits: &Limits,
) -> Result<Vec<TensorDescriptor>> {
    let at = root.key("tensors");
    let items = crate::check::seq(member(top, "tensors"), &format!("{kind} tensors"), &at)?;
    limits.check_tensors(items.len(), &at)?;
    let mut tensors = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let element_at = at.index(i);
        let element = exact(
            item,
            &TENSOR_KEYS,
            &|| format!("{kind} tensor {i}"),
            &element_at,
        )?;
        let shape_at = element_at.key("global_shape");
        limits.check_dims(member(element, "global_shape"), &shape_at)?;
        tensors.push(descriptor(element, &element_at)?);
    }
    Ok(tensors)
}

/// Member `fragments` of a placement, runtime or binding manifest: a sequence of at most
/// `max_fragments` objects with exactly `keys`, each handed to `check` with its pointer and
/// index. `kind` names the form in the messages (`placement`, `runtime`, `runtime binding`).
pub(crate) fn fragments<'v, 'a, T>(
    top: &'v Object<'a>,
    kind: &str,
    keys: &[&str],
    limits: &Limits,
    mut check: impl FnMut(&'v Object<'a>, &Path<'_>, usize) -> Result<T>,
) -> Result<Vec<T>> {
    let at = Path::Root.key("fragments");
    let items = crate::check::seq(member(top, "fragments"), &format!("{kind} fragments"), &at)?;
    limits.check_fragments(items.len(), &at)?;
    let mut fragments = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let element_at = at.index(i);
        let element = exact(item, keys, &|| format!("{kind} fragment {i}"), &element_at)?;
        fragments.push(check(element, &element_at, i)?);
    }
    Ok(fragments)
}

/// Member `rank` of fragment `i` (at `at`): exactly the 4 rank keys, then the rank checks.
pub(crate) fn fragment_rank(
    element: &Object<'_>,
    kind: &str,
    at: &Path<'_>,
    i: usize,
) -> Result<ParallelRank> {
    let rank_at = at.key("rank");
    let object = exact(
        member(element, "rank"),
        &RANK_KEYS,
        &|| format!("{kind} rank {i}"),
        &rank_at,
    )?;
    rank(object, &rank_at)
}
