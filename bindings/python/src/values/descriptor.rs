//! `TensorDescriptor(...)` (contract §2.2). An instance keeps the caller's spelling of
//! `partition_dim` and `shard_dims`; its checked value is the canonical form (§3), which
//! the manifests hold.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyInt, PyTuple};
use weight_manifest::wire::{self, key};
use weight_manifest::{construct, Value};

use super::args::Signature;
use super::fields::{arguments, stored};
use crate::errors::OrRaise;
use crate::scalars::{int, ints, opt_int, string, to_py};

super::class::value_class! {
    /// Logical tensor identity (§2.2).
    TensorDescriptor = "TensorDescriptor", checked: wire::TensorDescriptor,
    new: TensorDescriptor::new, rank: super::rank::ParallelRank,
    fields: [
        tensor_id,
        global_shape,
        dtype,
        itemsize,
        partition_dim,
        layout_fingerprint,
        layer_id,
        expert_id,
        shard_dims,
    ],
}

static SIGNATURE: Signature<9> =
    Signature::new(TensorDescriptor::NAME, &TensorDescriptor::FIELDS, 6);

/// The fields whose spelling an instance keeps.
const SPELLED: [&str; 2] = [key::PARTITION_DIM, key::SHARD_DIMS];

impl TensorDescriptor {
    fn new(args: &Bound<'_, PyTuple>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let py = args.py();
        let given = SIGNATURE.bind(args, kwargs)?;
        let arguments = arguments(&Self::FIELDS, &given)?;
        let checked = construct::tensor_descriptor(&arguments).or_raise(py)?;
        let fields = stored(
            py,
            &Self::FIELDS,
            &given,
            |_, _| true,
            || {
                let mut fields = Self::normal_form(py, &checked)?;
                for (name, field) in Self::FIELDS.iter().zip(&mut fields) {
                    if SPELLED.contains(name) {
                        let spelled = arguments.get(name).unwrap_or(&Value::Null);
                        *field = to_py(py, spelled, true)?.unbind();
                    }
                }
                Ok(fields)
            },
        )?;
        Ok(TensorDescriptor { fields, checked })
    }

    /// The fields of a checked (canonical) descriptor.
    fn normal_form(py: Python<'_>, d: &wire::TensorDescriptor) -> PyResult<[Py<PyAny>; 9]> {
        let shard_dims = match &d.shard_dims {
            Some(dims) => ints(py, dims)?,
            None => py.None().into_bound(py),
        };
        Ok([
            string(py, &d.tensor_id)?,
            ints(py, &d.global_shape)?,
            string(py, &d.dtype)?,
            int(py, d.itemsize)?,
            opt_int(py, d.partition_dim)?,
            string(py, &d.layout_fingerprint)?,
            opt_int(py, d.layer_id)?,
            opt_int(py, d.expert_id)?,
            shard_dims,
        ]
        .map(Bound::unbind))
    }

    /// An instance for a canonical descriptor the core has checked.
    pub(crate) fn trusted<'py>(
        py: Python<'py>,
        checked: &wire::TensorDescriptor,
    ) -> PyResult<Bound<'py, TensorDescriptor>> {
        let fields = Self::normal_form(py, checked)?;
        Self::instance(py, fields, checked.clone())
    }

    /// Whether `partition_dim` and `shard_dims` are spelled as the canonical form spells
    /// them (§3), so a manifest may hold this instance itself.
    pub(crate) fn spelled_canonically(&self, py: Python<'_>) -> bool {
        let dim = self.fields
            [const { weight_manifest::wire::field_index(&Self::FIELDS, key::PARTITION_DIM) }]
        .bind(py);
        let dims = self.fields
            [const { weight_manifest::wire::field_index(&Self::FIELDS, key::SHARD_DIMS) }]
        .bind(py);
        let exact = |o: &Bound<'_, PyAny>, n: u64| {
            o.is_exact_instance_of::<PyInt>() && o.extract::<u64>().ok() == Some(n)
        };
        let dim_ok = self
            .checked
            .partition_dim
            .map_or_else(|| dim.is_none(), |n| exact(dim, n));
        let dims_ok = match &self.checked.shard_dims {
            None => dims.is_none(),
            Some(held) => dims.cast_exact::<PyTuple>().is_ok_and(|t| {
                t.len() == held.len() && t.iter().zip(held).all(|(o, &n)| exact(&o, n))
            }),
        };
        dim_ok && dims_ok
    }
}

/// `TensorDescriptor.effective_shard_dims`: the canonical form's shard dims (§3).
#[pyfunction]
pub(crate) fn effective_shard_dims<'py>(
    descriptor: &Bound<'py, TensorDescriptor>,
) -> PyResult<Bound<'py, PyAny>> {
    let dims = descriptor.get().checked.shard_dims.as_deref();
    ints(descriptor.py(), dims.unwrap_or_default())
}
