//! Records as typed wire values, when every member already has its wire type; `None`
//! otherwise (the caller then builds the document tree, whose errors the core reports).
//! Nothing is checked here beyond the types: the core validates the typed manifest as
//! the document it encodes.

use crate::classes::Names;
use crate::values;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyInt, PyList, PyString, PyTuple};
use weight_manifest::wire::{ParallelRank, PlacementFragment, PlacementManifest, TensorDescriptor};

/// An exact `int` within u64 (not a bool, not a subclass).
fn uint(object: &Bound<'_, PyAny>) -> Option<u64> {
    object
        .is_exact_instance_of::<PyInt>()
        .then(|| object.extract::<u64>().ok())
        .flatten()
}

/// An exact `str` that is valid UTF-8.
fn text(object: &Bound<'_, PyAny>) -> Option<String> {
    let s = object.cast_exact::<PyString>().ok()?;
    crate::utf8::text(s).map(str::to_owned)
}

/// The items of an exact list or tuple.
fn items<'py>(object: &Bound<'py, PyAny>) -> Option<Vec<Bound<'py, PyAny>>> {
    if let Ok(list) = object.cast_exact::<PyList>() {
        return Some(list.iter().collect());
    }
    object
        .cast_exact::<PyTuple>()
        .ok()
        .map(|t| t.iter().collect())
}

fn uints(object: &Bound<'_, PyAny>) -> Option<Vec<u64>> {
    items(object)?.iter().map(uint).collect()
}

fn texts(object: &Bound<'_, PyAny>) -> Option<Vec<String>> {
    items(object)?.iter().map(text).collect()
}

/// A member that has no typed value (the record goes through the document tree).
struct Untyped;

/// `None` for an absent member or Python's None, else the value converted by `f`.
fn optional<T>(
    object: Option<&Bound<'_, PyAny>>,
    f: fn(&Bound<'_, PyAny>) -> Option<T>,
) -> Result<Option<T>, Untyped> {
    match object {
        None => Ok(None),
        Some(o) if o.is_none() => Ok(None),
        Some(o) => f(o).map(Some).ok_or(Untyped),
    }
}

/// The members of a record by name: a dict with only known keys, or a tuple or list in
/// `order`. `None` for anything else.
struct Members<'py> {
    values: Vec<Option<Bound<'py, PyAny>>>,
}

impl<'py> Members<'py> {
    /// `order` holds the member names as interned Python strings (a lookup by `&str`
    /// would build a new string every time).
    fn of(
        object: &Bound<'py, PyAny>,
        order: &[Bound<'py, PyString>],
    ) -> PyResult<Option<Members<'py>>> {
        if let Ok(dict) = object.cast_exact::<PyDict>() {
            let mut values = Vec::with_capacity(order.len());
            let mut found = 0;
            for name in order {
                let v = dict.get_item(name)?;
                found += usize::from(v.is_some());
                values.push(v);
            }
            return Ok((found == dict.len()).then_some(Members { values }));
        }
        if let Some(items) = items(object) {
            return Ok((items.len() <= order.len()).then(|| {
                let mut values: Vec<_> = items.into_iter().map(Some).collect();
                values.resize(order.len(), None);
                Members { values }
            }));
        }
        Ok(None)
    }

    fn get(&self, index: usize) -> Option<&Bound<'py, PyAny>> {
        self.values.get(index).and_then(Option::as_ref)
    }
}

static TENSOR_KEYS: Names = Names::new(&values::TensorDescriptor::FIELDS);
static FRAGMENT_KEYS: Names = Names::new(&values::PlacementFragment::FIELDS);
static RANK_KEYS: Names = Names::new(&values::ParallelRank::FIELDS);

/// The interned member names of each record kind, made once per call.
struct Keys<'py> {
    tensor: Vec<Bound<'py, PyString>>,
    fragment: Vec<Bound<'py, PyString>>,
    rank: Vec<Bound<'py, PyString>>,
}

impl<'py> Keys<'py> {
    fn new(py: Python<'py>) -> Keys<'py> {
        let strings = |names: &Names| names.interned(py).into_iter().map(|(_, s)| s).collect();
        Keys {
            tensor: strings(&TENSOR_KEYS),
            fragment: strings(&FRAGMENT_KEYS),
            rank: strings(&RANK_KEYS),
        }
    }
}

fn tensor(object: &Bound<'_, PyAny>, keys: &Keys<'_>) -> PyResult<Option<TensorDescriptor>> {
    // An instance of this package holds its checked value (canonical: a document of it
    // reads back the same).
    if let Ok(made) = object.cast::<values::TensorDescriptor>() {
        return Ok(Some(made.get().checked.clone()));
    }
    let Some(m) = Members::of(object, &keys.tensor)? else {
        return Ok(None);
    };
    // partition_dim is required but may be None: it must be present.
    if m.get(4).is_none() {
        return Ok(None);
    }
    Ok((|| {
        Some(TensorDescriptor {
            tensor_id: text(m.get(0)?)?,
            global_shape: uints(m.get(1)?)?,
            dtype: text(m.get(2)?)?,
            itemsize: uint(m.get(3)?)?,
            partition_dim: optional(m.get(4), uint).ok()?,
            layout_fingerprint: text(m.get(5)?)?,
            layer_id: optional(m.get(6), uint).ok()?,
            expert_id: optional(m.get(7), uint).ok()?,
            shard_dims: optional(m.get(8), uints).ok()?,
        })
    })())
}

fn rank(object: &Bound<'_, PyAny>, keys: &Keys<'_>) -> PyResult<Option<ParallelRank>> {
    if let Ok(made) = object.cast::<values::ParallelRank>() {
        return Ok(Some(made.get().checked.clone()));
    }
    let Some(m) = Members::of(object, &keys.rank)? else {
        return Ok(None);
    };
    // Every coordinate is required in a document.
    Ok((|| {
        Some(ParallelRank {
            dp: uint(m.get(0)?)?,
            tp: uint(m.get(1)?)?,
            pp: uint(m.get(2)?)?,
            ep: uint(m.get(3)?)?,
        })
    })())
}

fn fragment(object: &Bound<'_, PyAny>, keys: &Keys<'_>) -> PyResult<Option<PlacementFragment>> {
    if let Ok(made) = object.cast::<values::PlacementFragment>() {
        return Ok(Some(made.get().checked.clone()));
    }
    let Some(m) = Members::of(object, &keys.fragment)? else {
        return Ok(None);
    };
    let Some(rank) = m.get(5).map(|r| rank(r, keys)).transpose()?.flatten() else {
        return Ok(None);
    };
    Ok((|| {
        Some(PlacementFragment {
            placement_fragment_id: text(m.get(0)?)?,
            tensor_id: text(m.get(1)?)?,
            global_offset: uints(m.get(2)?)?,
            local_shape: uints(m.get(3)?)?,
            nbytes: uint(m.get(4)?)?,
            rank,
            aliases: m.get(6).map_or(Some(Vec::new()), texts)?,
        })
    })())
}

/// The typed placement of the records, or `None` when some member is not of its wire type.
pub(crate) fn placement(
    model_id: &Bound<'_, PyAny>,
    revision: &Bound<'_, PyAny>,
    tensors: &Bound<'_, PyAny>,
    fragments: &Bound<'_, PyAny>,
    placement_id: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<PlacementManifest>> {
    let (Some(tensor_items), Some(fragment_items)) = (items(tensors), items(fragments)) else {
        return Ok(None);
    };
    let keys = Keys::new(model_id.py());
    let (Some(model_id), Some(revision), Ok(placement_id)) =
        (text(model_id), text(revision), optional(placement_id, text))
    else {
        return Ok(None);
    };
    let mut typed_tensors = Vec::with_capacity(tensor_items.len());
    for t in &tensor_items {
        let Some(t) = tensor(t, &keys)? else {
            return Ok(None);
        };
        typed_tensors.push(t);
    }
    let mut typed_fragments = Vec::with_capacity(fragment_items.len());
    for f in &fragment_items {
        let Some(f) = fragment(f, &keys)? else {
            return Ok(None);
        };
        typed_fragments.push(f);
    }
    Ok(Some(PlacementManifest {
        fragments: typed_fragments,
        model_id,
        placement_id,
        revision,
        tensors: typed_tensors,
    }))
}
