//! The elements the strict parsers share: tensor descriptors and ranks (the members of the
//! two forms that carry them), and the tensor and fragment lists.

use crate::document::{exact, member};
use crate::error::Result;
use crate::limits::Limits;
use crate::path::Path;
use crate::rules::descriptor::{check_descriptor, DescriptorFields};
use crate::rules::rank::{check_rank, RankFields};
use crate::value::Object;
use crate::wire::key;
use crate::wire::{ParallelRank, TensorDescriptor};

/// The descriptor checks (§2.2) on a tensor element with exactly the 9 keys.
pub(crate) fn descriptor(object: &Object<'_>, path: &Path<'_>) -> Result<TensorDescriptor> {
    let fields = DescriptorFields {
        tensor_id: member(object, key::TENSOR_ID),
        global_shape: member(object, key::GLOBAL_SHAPE),
        dtype: member(object, key::DTYPE),
        itemsize: member(object, key::ITEMSIZE),
        partition_dim: object.get(key::PARTITION_DIM),
        layout_fingerprint: member(object, key::LAYOUT_FINGERPRINT),
        layer_id: object.get(key::LAYER_ID),
        expert_id: object.get(key::EXPERT_ID),
        shard_dims: object.get(key::SHARD_DIMS),
    };
    check_descriptor(&fields, path)
}

/// The ParallelRank checks (§2.1) on a rank object with exactly the 4 keys.
pub(crate) fn rank(object: &Object<'_>, path: &Path<'_>) -> Result<ParallelRank> {
    let fields = RankFields {
        dp: member(object, key::DP),
        tp: member(object, key::TP),
        pp: member(object, key::PP),
        ep: member(object, key::EP),
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
    let at = root.key(key::TENSORS);
    let items = crate::rules::values::seq(member(top, "tensors"), &format!("{kind} tensors"), &at)?;
    limits.check_tensors(items.len(), &at)?;
    let mut tensors = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let element_at = at.index(i);
        let element = exact(
            item,
            TensorDescriptor::FIELDS,
            &|| format!("{kind} tensor {i}"),
            &element_at,
        )?;
        let shape_at = element_at.key(key::GLOBAL_SHAPE);
        limits.check_dims(member(element, key::GLOBAL_SHAPE), &shape_at)?;
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
    let at = Path::Root.key(key::FRAGMENTS);
    let items =
        crate::rules::values::seq(member(top, "fragments"), &format!("{kind} fragments"), &at)?;
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
    let rank_at = at.key(key::RANK);
    let object = exact(
        member(element, key::RANK),
        ParallelRank::FIELDS,
        &|| format!("{kind} rank {i}"),
        &rank_at,
    )?;
    rank(object, &rank_at)
}
