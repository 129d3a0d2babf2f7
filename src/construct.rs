//! In-memory construction, for bindings that build values from their own objects (the
//! reference's constructors: `ParallelRank(...)`, `TensorDescriptor(...)`, ...).
//!
//! Each function takes the keyword arguments as an [`Object`] of document values, runs
//! the type's checks in the contract's order, and returns the checked wire value. A
//! member that is absent takes the contract's default (`0` for rank coordinates, not set
//! for optional members, `[]` for aliases); a *required* member that is absent is read as
//! `null` and fails its check — a binding that must report a missing argument differently
//! (Python raises `TypeError`) checks presence itself. Errors carry no path: there is no
//! document.

use std::borrow::Cow;

use crate::error::{Code, Error, Result};
use crate::locate::Origin;
use crate::model::binding::BindingHeader;
use crate::model::placement::PlacementHeader;
use crate::model::runtime::RuntimeHeader;
use crate::model::{
    construct_binding, construct_placement, construct_runtime, Binding, Owner, Placement, Runtime,
};
use crate::path::Path;
use crate::rules::descriptor::{check_descriptor, DescriptorFields};
use crate::rules::fragment::{
    check_binding_fragment, check_placement_fragment, check_runtime_fragment,
    BindingFragmentFields, PlacementFragmentFields, RuntimeFragmentFields,
};
use crate::rules::rank::{check_rank, RankFields};
use crate::value::{Object, Value};
use crate::wire::key;
use crate::wire::{
    ParallelRank, PlacementFragment, RuntimeBindingFragment, RuntimeFragment, TensorDescriptor,
};

static NULL: Value<'static> = Value::Null;
static ZERO: Value<'static> = Value::UInt(0);

fn required<'v, 'a>(fields: &'v Object<'a>, key: &str) -> &'v Value<'a> {
    fields.get(key).unwrap_or(&NULL)
}

fn no_path(error: Error) -> Error {
    error.with_pointer(None)
}

/// `ParallelRank(dp=0, tp=0, pp=0, ep=0)` (§2.1).
pub fn parallel_rank(fields: &Object<'_>) -> Result<ParallelRank> {
    let coordinate = |key| fields.get(key).unwrap_or(&ZERO);
    let rank = RankFields {
        dp: coordinate(key::DP),
        tp: coordinate(key::TP),
        pp: coordinate(key::PP),
        ep: coordinate(key::EP),
    };
    check_rank(&rank, &Path::Root).map_err(no_path)
}

/// `TensorDescriptor(...)` (§2.2); returns the canonical form (§3).
pub fn tensor_descriptor(fields: &Object<'_>) -> Result<TensorDescriptor> {
    let descriptor = DescriptorFields {
        tensor_id: required(fields, key::TENSOR_ID),
        global_shape: required(fields, key::GLOBAL_SHAPE),
        dtype: required(fields, key::DTYPE),
        itemsize: required(fields, key::ITEMSIZE),
        partition_dim: fields.get(key::PARTITION_DIM),
        layout_fingerprint: required(fields, key::LAYOUT_FINGERPRINT),
        layer_id: fields.get(key::LAYER_ID),
        expert_id: fields.get(key::EXPERT_ID),
        shard_dims: fields.get(key::SHARD_DIMS),
    };
    check_descriptor(&descriptor, &Path::Root).map_err(no_path)
}

/// `PlacementFragment(...)` (§2.3) with an already constructed rank; `None` when the
/// binding's `rank` is not a ParallelRank (`wrong_element_type` at its step).
pub fn placement_fragment(
    fields: &Object<'_>,
    rank: Option<ParallelRank>,
) -> Result<PlacementFragment> {
    let fragment =
        PlacementFragmentFields::of(|key| required(fields, key), |key| fields.get(key), rank);
    check_placement_fragment(&fragment, &Path::Root).map_err(no_path)
}

/// `RuntimeFragment(...)` (§2.4) with an already constructed rank; `None` when the
/// binding's `rank` is not a ParallelRank (`wrong_element_type` at its step).
pub fn runtime_fragment(
    fields: &Object<'_>,
    rank: Option<ParallelRank>,
) -> Result<RuntimeFragment> {
    let fragment =
        RuntimeFragmentFields::of(|key| required(fields, key), |key| fields.get(key), rank);
    check_runtime_fragment(&fragment, &Path::Root).map_err(no_path)
}

/// `RuntimeBindingFragment(...)` (§2.5).
pub fn binding_fragment(fields: &Object<'_>) -> Result<RuntimeBindingFragment> {
    let fragment = BindingFragmentFields::of(|key| required(fields, key));
    check_binding_fragment(&fragment, &Path::Root).map_err(no_path)
}

/// `PlacementManifest(model_id, revision, tensors, fragments, placement_id=None)` (§8.1,
/// steps 2 and 4–7; the element-type steps are the binding's).
pub fn placement_manifest(
    fields: &Object<'_>,
    tensors: Vec<TensorDescriptor>,
    fragments: Vec<PlacementFragment>,
) -> Result<Placement> {
    construct_placement(
        &Path::Root,
        &Origin::default(),
        &PlacementHeader {
            model_id: required(fields, key::MODEL_ID),
            revision: required(fields, key::REVISION),
            placement_id: fields.get(key::PLACEMENT_ID),
        },
        tensors,
        fragments,
        crate::limits::DEFAULT_MAX_GEOMETRY_WORK,
    )
    .map_err(no_path)
}

/// `RuntimeManifest(model_id, revision, instance_id, tensors, fragments, lease_id=None,
/// placement_id=None, generation=None)` (§8.4 steps 2–9); `owners[i]` belongs to
/// `fragments[i]`.
pub fn runtime_manifest(
    fields: &Object<'_>,
    tensors: Vec<TensorDescriptor>,
    fragments: Vec<RuntimeFragment>,
    owners: Vec<Option<Owner>>,
) -> Result<Runtime> {
    let header = RuntimeHeader {
        model_id: required(fields, key::MODEL_ID),
        revision: required(fields, key::REVISION),
        instance_id: required(fields, key::INSTANCE_ID),
        lease_id: fields.get(key::LEASE_ID),
        placement_id: fields.get(key::PLACEMENT_ID),
        generation: fields.get(key::GENERATION),
    };
    construct_runtime(
        &Path::Root,
        Origin::default(),
        &header,
        tensors,
        fragments,
        owners,
        crate::limits::DEFAULT_MAX_GEOMETRY_WORK,
    )
    .map_err(no_path)
}

/// `RuntimeBindingManifest(...)` (§8.6 steps 2–7); `owners[i]` belongs to `fragments[i]`.
pub fn binding_manifest(
    fields: &Object<'_>,
    fragments: Vec<RuntimeBindingFragment>,
    owners: Vec<Option<Owner>>,
) -> Result<Binding> {
    let header = BindingHeader {
        model_id: required(fields, key::MODEL_ID),
        revision: required(fields, key::REVISION),
        placement_id: required(fields, key::PLACEMENT_ID),
        placement_digest: required(fields, key::PLACEMENT_DIGEST),
        instance_id: required(fields, key::INSTANCE_ID),
        lease_id: required(fields, key::LEASE_ID),
        generation: required(fields, key::GENERATION),
    };
    construct_binding(&Path::Root, &Origin::default(), &header, fragments, owners).map_err(no_path)
}

/// `wrong_element_type`: "{Owner} {collection} must contain {Type}" (§8.1, §8.4, §8.6),
/// raised by a binding whose collection holds an object of another type.
pub fn wrong_element_type(owner: &str, collection: &str, type_name: &str) -> Error {
    Error::new(
        Code::WrongElementType,
        format!("{owner} {collection} must contain {type_name}"),
    )
}

/// `wrong_element_type`: "rank must be a ParallelRank" (§2.3, §2.4).
pub fn rank_wrong_type() -> Error {
    Error::new(Code::WrongElementType, "rank must be a ParallelRank")
}

/// SEQ(label) for an in-memory collection that is not a sequence: `not_a_sequence`.
pub fn not_a_sequence(label: &str) -> Error {
    Error::new(Code::NotASequence, format!("{label} must be a sequence"))
}

/// A string value borrowed from `text`, for building keyword objects.
pub fn text(text: &str) -> Value<'_> {
    Value::Str(Cow::Borrowed(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object<'a>(members: Vec<(&'static str, Value<'a>)>) -> Object<'a> {
        Object::from_members(
            members
                .into_iter()
                .map(|(k, v)| (Cow::Borrowed(k), v))
                .collect(),
        )
    }

    #[test]
    fn api_only_codes_have_the_reference_messages() {
        let error = wrong_element_type("PlacementManifest", "tensors", "TensorDescriptor");
        assert_eq!(error.code(), Code::WrongElementType);
        assert_eq!(
            error.message(),
            "PlacementManifest tensors must contain TensorDescriptor"
        );
        assert_eq!(rank_wrong_type().message(), "rank must be a ParallelRank");
        assert_eq!(
            not_a_sequence("RuntimeManifest fragments").code(),
            Code::NotASequence
        );
    }

    #[test]
    fn a_missing_rank_fails_after_nbytes_and_before_aliases() {
        let base = vec![
            ("placement_fragment_id", text("p")),
            ("tensor_id", text("t")),
            ("global_offset", Value::Array(vec![Value::UInt(0)])),
            ("local_shape", Value::Array(vec![Value::UInt(1)])),
            ("nbytes", Value::UInt(4)),
            ("aliases", Value::Null),
        ];
        let error = placement_fragment(&object(base.clone()), None).unwrap_err();
        assert_eq!(error.message(), "rank must be a ParallelRank");
        let mut bad_nbytes = base;
        bad_nbytes[4].1 = Value::UInt(0);
        let error = placement_fragment(&object(bad_nbytes), None).unwrap_err();
        assert_eq!(
            error.code(),
            Code::BelowMinimum,
            "nbytes is checked before the rank"
        );
    }

    #[test]
    fn rank_defaults_to_zero_and_checks_in_order() {
        let rank = parallel_rank(&object(vec![("tp", Value::UInt(3))])).unwrap();
        assert_eq!((rank.dp, rank.tp, rank.pp, rank.ep), (0, 3, 0, 0));
        let error = parallel_rank(&object(vec![
            ("ep", Value::Bool(true)),
            ("tp", Value::Null),
        ]))
        .unwrap_err();
        assert_eq!(error.message(), "parallel rank tp must be an integer");
        assert_eq!(error.path(), None);
    }

    #[test]
    fn in_memory_manifest_matches_the_worked_example_w1() {
        let descriptor = tensor_descriptor(&object(vec![
            ("tensor_id", text("layers.2.experts.3.w1")),
            (
                "global_shape",
                Value::Array(vec![Value::UInt(8), Value::UInt(4)]),
            ),
            ("dtype", text("bfloat16")),
            ("itemsize", Value::UInt(2)),
            ("partition_dim", Value::UInt(0)),
            ("layer_id", Value::UInt(2)),
            ("expert_id", Value::UInt(3)),
            ("layout_fingerprint", text("test:qwen:bf16:v1")),
        ]))
        .unwrap();
        let rank = parallel_rank(&object(vec![
            ("pp", Value::UInt(1)),
            ("ep", Value::UInt(1)),
        ]))
        .unwrap();
        let fragment = placement_fragment(
            &object(vec![
                ("placement_fragment_id", text("placement-0")),
                ("tensor_id", text("layers.2.experts.3.w1")),
                (
                    "global_offset",
                    Value::Array(vec![Value::UInt(0), Value::UInt(0)]),
                ),
                (
                    "local_shape",
                    Value::Array(vec![Value::UInt(4), Value::UInt(4)]),
                ),
                ("nbytes", Value::UInt(32)),
            ]),
            Some(rank),
        )
        .unwrap();
        let placement = placement_manifest(
            &object(vec![
                ("model_id", text("model")),
                ("revision", text("revision")),
            ]),
            vec![descriptor],
            vec![fragment],
        )
        .unwrap();
        assert_eq!(
            placement.placement_id(),
            "sha256:c4f3bc2feed99a64ff156fd57cb5cf626ae8b38c1551c0fe2225e1921e14d73a"
        );
        assert_eq!(
            placement.digest(),
            "7320a5090dc88556c57e5d9e8cb316d05b3bf99b00f7a0c0da04198ca995e915"
        );
    }
}
