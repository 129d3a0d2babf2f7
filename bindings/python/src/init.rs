//! The `__init__` of the five value dataclasses (contract §2.1–§2.5): one native call per
//! object with the arguments as given. The core runs the type's checks; the fields are
//! then stored on the instance, each as given when it is already in its normal form (an
//! exact `str`, `int` or `None`, or an exact tuple of them, aliases in sorted order), else
//! as the core normalised it (plain `int`s, tuples, sorted aliases). Building 10^5
//! fragments therefore allocates nothing beyond what the caller passed.

use std::borrow::Cow;

use pyo3::prelude::*;
use pyo3::types::{PyInt, PyString, PyTuple};
use weight_manifest::construct;
use weight_manifest::wire::key;
use weight_manifest::Object;

use crate::classes::{classes, is_a, store, store_keyed, Names};
use crate::convert::value;
use crate::emit::{
    binding_fragment_fields, descriptor_fields, placement_fragment_fields, rank_fields,
    runtime_fragment_fields, Fields,
};
use crate::errors::OrRaise;

/// Whether `object` is stored as given: an exact `str`, `int`, `None`, or an exact tuple
/// of exact `str`s and `int`s.
fn normal(object: &Bound<'_, PyAny>) -> bool {
    let scalar = |o: &Bound<'_, PyAny>| {
        o.is_exact_instance_of::<PyString>() || o.is_exact_instance_of::<PyInt>()
    };
    object.is_none()
        || scalar(object)
        || object
            .cast_exact::<PyTuple>()
            .is_ok_and(|t| t.iter().all(|item| scalar(&item)))
}

/// The keyword arguments as the core's object, but the members of `OBJECTS` (the core
/// takes the rank apart and never reads the owner).
fn arguments(names: &[&'static str], given: &[&Bound<'_, PyAny>]) -> PyResult<Object<'static>> {
    let members = names
        .iter()
        .zip(given)
        .filter(|(name, _)| !OBJECTS.contains(name))
        .map(|(name, object)| Ok((Cow::Borrowed(*name), value(object)?)))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(Object::from_members(members))
}

/// Members kept as given whatever they are: the fragment's rank (checked apart) and
/// owner (never checked).
const OBJECTS: [&str; 2] = [key::RANK, "owner"];

/// Stores the fields: each as given when it is normal (or one of `OBJECTS`) and `keep`
/// agrees; the core's normal form (`made`, built only when some field needs it) for the
/// others.
fn store_fields<'py>(
    this: &Bound<'py, PyAny>,
    (names, keys): (&[&'static str], &Names),
    given: &[&Bound<'py, PyAny>],
    keep: impl Fn(&str, &Bound<'py, PyAny>) -> bool,
    made: impl FnOnce() -> PyResult<Fields<'py>>,
) -> PyResult<()> {
    let as_given = |name: &str, object: &Bound<'py, PyAny>| {
        (OBJECTS.contains(&name) || normal(object)) && keep(name, object)
    };
    if names.iter().zip(given).all(|(n, o)| as_given(n, o)) {
        let values = given.iter().map(|o| (*o).clone());
        store_keyed(this, keys.keys(this.py()), values)?;
    } else {
        let mut fields = made()?;
        for (name, field) in &mut fields {
            if let Some(i) = names.iter().position(|n| n == name) {
                if as_given(name, given[i]) {
                    *field = given[i].clone();
                }
            }
        }
        store(this, &fields)?;
    }
    // Every stored field is plain now; the objects kept as given must be too.
    let mut acyclic = true;
    for (name, object) in names.iter().zip(given) {
        if OBJECTS.contains(name) {
            acyclic &= object.is_none() || exact_rank(object)?;
        }
    }
    if acyclic {
        untrack(this)?;
    }
    Ok(())
}

/// Whether `object` is a ParallelRank itself (not a subclass, which could hold anything).
fn exact_rank(object: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(object
        .get_type()
        .is(classes(object.py())?.rank.bind(object.py())))
}

/// Takes an instance of one of the value classes themselves (not a subclass) whose fields
/// are all plain values (`str`, `int`, `None`, tuples of them) or a ParallelRank itself out
/// of the cyclic garbage collector (`classes::untrack`): no reference cycle can pass
/// through it.
fn untrack(this: &Bound<'_, PyAny>) -> PyResult<()> {
    let py = this.py();
    let c = classes(py)?;
    let ty = this.get_type();
    let value_class = [
        &c.rank,
        &c.descriptor,
        &c.placement_fragment,
        &c.runtime_fragment,
        &c.binding_fragment,
    ]
    .iter()
    .any(|class| ty.is(class.bind(py)));
    if value_class {
        crate::classes::untrack(this)?;
    }
    Ok(())
}

/// Whether a given aliases tuple is in the order the core holds (sorted).
fn aliases_in_order(held: &[String], given: &Bound<'_, PyAny>) -> bool {
    given.cast_exact::<PyTuple>().is_ok_and(|t| {
        t.len() == held.len()
            && t.iter().zip(held).all(|(g, h)| {
                g.cast::<PyString>()
                    .is_ok_and(|s| s.to_cow().is_ok_and(|s| s == h.as_str()))
            })
    })
}

/// The rank argument of a fragment for its check, which asks only whether it is a
/// ParallelRank (else `wrong_element_type`): its coordinates were checked when it was
/// made, and every manifest reads and checks them again, so they are not read here.
fn fragment_rank(
    rank_object: &Bound<'_, PyAny>,
) -> PyResult<Option<weight_manifest::wire::ParallelRank>> {
    let is_rank = is_a(rank_object, &classes(rank_object.py())?.rank)?;
    Ok(is_rank.then_some(weight_manifest::wire::ParallelRank {
        dp: 0,
        ep: 0,
        pp: 0,
        tp: 0,
    }))
}

pub(crate) static RANK_KEYS: Names = Names::new(&RANK);
/// The dataclass's fields in their declaration order (its `__init__`'s arguments).
pub(crate) const RANK: [&str; 4] = [key::DP, key::TP, key::PP, key::EP];

/// `ParallelRank.__init__`.
#[pyfunction]
pub(crate) fn new_parallel_rank<'py>(
    this: &Bound<'py, PyAny>,
    dp: &Bound<'py, PyAny>,
    tp: &Bound<'py, PyAny>,
    pp: &Bound<'py, PyAny>,
    ep: &Bound<'py, PyAny>,
) -> PyResult<()> {
    let py = this.py();
    let given = [dp, tp, pp, ep];
    let checked = construct::parallel_rank(&arguments(&RANK, &given)?).or_raise(py)?;
    store_fields(
        this,
        (&RANK, &RANK_KEYS),
        &given,
        |_, _| true,
        || rank_fields(py, &checked),
    )
}

pub(crate) static DESCRIPTOR_KEYS: Names = Names::new(&DESCRIPTOR);
/// The dataclass's fields in their declaration order (its `__init__`'s arguments).
pub(crate) const DESCRIPTOR: [&str; 9] = [
    key::TENSOR_ID,
    key::GLOBAL_SHAPE,
    key::DTYPE,
    key::ITEMSIZE,
    key::PARTITION_DIM,
    key::LAYOUT_FINGERPRINT,
    key::LAYER_ID,
    key::EXPERT_ID,
    key::SHARD_DIMS,
];

/// `TensorDescriptor.__init__`: the descriptor keeps the caller's spelling of
/// `partition_dim` and `shard_dims` (the manifests hold the canonical form, §3).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub(crate) fn new_tensor_descriptor<'py>(
    this: &Bound<'py, PyAny>,
    tensor_id: &Bound<'py, PyAny>,
    global_shape: &Bound<'py, PyAny>,
    dtype: &Bound<'py, PyAny>,
    itemsize: &Bound<'py, PyAny>,
    partition_dim: &Bound<'py, PyAny>,
    layout_fingerprint: &Bound<'py, PyAny>,
    layer_id: &Bound<'py, PyAny>,
    expert_id: &Bound<'py, PyAny>,
    shard_dims: &Bound<'py, PyAny>,
) -> PyResult<()> {
    let py = this.py();
    let given = [
        tensor_id,
        global_shape,
        dtype,
        itemsize,
        partition_dim,
        layout_fingerprint,
        layer_id,
        expert_id,
        shard_dims,
    ];
    let arguments = arguments(&DESCRIPTOR, &given)?;
    let canonical = construct::tensor_descriptor(&arguments).or_raise(py)?;
    store_fields(
        this,
        (&DESCRIPTOR, &DESCRIPTOR_KEYS),
        &given,
        |_, _| true,
        || {
            let mut fields = descriptor_fields(py, &canonical)?;
            for (name, field) in &mut fields {
                if matches!(*name, key::PARTITION_DIM | key::SHARD_DIMS) {
                    let spelled = arguments.get(name).unwrap_or(&weight_manifest::Value::Null);
                    *field = crate::emit::to_py(py, spelled, true)?;
                }
            }
            Ok(fields)
        },
    )
}

pub(crate) static PLACEMENT_FRAGMENT_KEYS: Names = Names::new(&PLACEMENT_FRAGMENT);
/// The dataclass's fields in their declaration order (its `__init__`'s arguments).
pub(crate) const PLACEMENT_FRAGMENT: [&str; 7] = [
    key::PLACEMENT_FRAGMENT_ID,
    key::TENSOR_ID,
    key::GLOBAL_OFFSET,
    key::LOCAL_SHAPE,
    key::NBYTES,
    key::RANK,
    key::ALIASES,
];

/// `PlacementFragment.__init__` (the rank is kept as given).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub(crate) fn new_placement_fragment<'py>(
    this: &Bound<'py, PyAny>,
    placement_fragment_id: &Bound<'py, PyAny>,
    tensor_id: &Bound<'py, PyAny>,
    global_offset: &Bound<'py, PyAny>,
    local_shape: &Bound<'py, PyAny>,
    nbytes: &Bound<'py, PyAny>,
    rank: &Bound<'py, PyAny>,
    aliases: &Bound<'py, PyAny>,
) -> PyResult<()> {
    let py = this.py();
    let given = [
        placement_fragment_id,
        tensor_id,
        global_offset,
        local_shape,
        nbytes,
        rank,
        aliases,
    ];
    // The rank is checked apart (it is an object); the other fields go to the core.
    let fragment = construct::placement_fragment(
        &arguments(&PLACEMENT_FRAGMENT, &given)?,
        fragment_rank(rank)?,
    )
    .or_raise(py)?;
    let keep = |name: &str, object: &Bound<'py, PyAny>| {
        name != key::ALIASES || aliases_in_order(&fragment.aliases, object)
    };
    store_fields(
        this,
        (&PLACEMENT_FRAGMENT, &PLACEMENT_FRAGMENT_KEYS),
        &given,
        keep,
        || placement_fragment_fields(py, &fragment, rank.clone()),
    )
}

pub(crate) static RUNTIME_FRAGMENT_KEYS: Names = Names::new(&RUNTIME_FRAGMENT);
/// The dataclass's fields in their declaration order (its `__init__`'s arguments).
pub(crate) const RUNTIME_FRAGMENT: [&str; 14] = [
    key::FRAGMENT_ID,
    key::TENSOR_ID,
    key::GLOBAL_OFFSET,
    key::LOCAL_SHAPE,
    key::ADDRESS,
    key::NBYTES,
    key::WORKER_ID,
    key::ENDPOINT,
    key::DEVICE,
    key::RANK,
    key::LEASE_GENERATION,
    "owner",
    key::ALIASES,
    key::PLACEMENT_FRAGMENT_ID,
];

/// `RuntimeFragment.__init__` (rank and owner are kept as given).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub(crate) fn new_runtime_fragment<'py>(
    this: &Bound<'py, PyAny>,
    fragment_id: &Bound<'py, PyAny>,
    tensor_id: &Bound<'py, PyAny>,
    global_offset: &Bound<'py, PyAny>,
    local_shape: &Bound<'py, PyAny>,
    address: &Bound<'py, PyAny>,
    nbytes: &Bound<'py, PyAny>,
    worker_id: &Bound<'py, PyAny>,
    endpoint: &Bound<'py, PyAny>,
    device: &Bound<'py, PyAny>,
    rank: &Bound<'py, PyAny>,
    lease_generation: &Bound<'py, PyAny>,
    owner: &Bound<'py, PyAny>,
    aliases: &Bound<'py, PyAny>,
    placement_fragment_id: &Bound<'py, PyAny>,
) -> PyResult<()> {
    let py = this.py();
    let given = [
        fragment_id,
        tensor_id,
        global_offset,
        local_shape,
        address,
        nbytes,
        worker_id,
        endpoint,
        device,
        rank,
        lease_generation,
        owner,
        aliases,
        placement_fragment_id,
    ];
    let fragment =
        construct::runtime_fragment(&arguments(&RUNTIME_FRAGMENT, &given)?, fragment_rank(rank)?)
            .or_raise(py)?;
    let keep = |name: &str, object: &Bound<'py, PyAny>| {
        name != key::ALIASES || aliases_in_order(&fragment.aliases, object)
    };
    store_fields(
        this,
        (&RUNTIME_FRAGMENT, &RUNTIME_FRAGMENT_KEYS),
        &given,
        keep,
        || runtime_fragment_fields(py, &fragment, rank.clone(), owner.clone()),
    )
}

pub(crate) static BINDING_FRAGMENT_KEYS: Names = Names::new(&BINDING_FRAGMENT);
/// The dataclass's fields in their declaration order (its `__init__`'s arguments).
pub(crate) const BINDING_FRAGMENT: [&str; 8] = [
    key::PLACEMENT_FRAGMENT_ID,
    key::FRAGMENT_ID,
    key::ADDRESS,
    key::NBYTES,
    key::WORKER_ID,
    key::ENDPOINT,
    key::DEVICE,
    "owner",
];

/// `RuntimeBindingFragment.__init__` (the owner is kept as given).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub(crate) fn new_binding_fragment<'py>(
    this: &Bound<'py, PyAny>,
    placement_fragment_id: &Bound<'py, PyAny>,
    fragment_id: &Bound<'py, PyAny>,
    address: &Bound<'py, PyAny>,
    nbytes: &Bound<'py, PyAny>,
    worker_id: &Bound<'py, PyAny>,
    endpoint: &Bound<'py, PyAny>,
    device: &Bound<'py, PyAny>,
    owner: &Bound<'py, PyAny>,
) -> PyResult<()> {
    let py = this.py();
    let given = [
        placement_fragment_id,
        fragment_id,
        address,
        nbytes,
        worker_id,
        endpoint,
        device,
        owner,
    ];
    let fragment =
        construct::binding_fragment(&arguments(&BINDING_FRAGMENT, &given)?).or_raise(py)?;
    store_fields(
        this,
        (&BINDING_FRAGMENT, &BINDING_FRAGMENT_KEYS),
        &given,
        |_, _| true,
        || binding_fragment_fields(py, &fragment, owner.clone()),
    )
}
