//! The fence rule (contract §17.7) for Python: `check_fence(bound, side, held)` calls the
//! core's `fence::check`, the rule the CLI and the C ABI call too.

use pyo3::prelude::*;
use pyo3::types::PyMapping;
use weight_manifest::fence::{self, Held, Side};
use weight_manifest::{Code, Error};

use crate::analysis::BoundPlan;
use crate::errors::{to_py, OrRaise};
use crate::manifests::binding_core;

fn invalid(py: Python<'_>, message: String) -> PyErr {
    to_py(py, &Error::new(Code::TransferArgumentsInvalid, message))
}

/// A member of a held mapping: `None` when absent or None.
fn member<'py>(held: &Bound<'py, PyMapping>, name: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
    if !held.contains(name)? {
        return Ok(None);
    }
    let value = held.get_item(name)?;
    Ok(if value.is_none() { None } else { Some(value) })
}

fn text(py: Python<'_>, value: Option<Bound<'_, PyAny>>, name: &str) -> PyResult<Option<String>> {
    value
        .map(|v| {
            v.extract::<String>()
                .map_err(|_| invalid(py, format!("the held fence's {name} is not a string: {v}")))
        })
        .transpose()
}

/// `check_fence(bound, side, held)`: `held` (what a worker or a side's binding holds now:
/// a RuntimeBindingManifest, or a mapping with `instance_id`, `lease_id`, `generation` and
/// optionally `worker_id`, `placement_id`, `placement_digest`) against `bound`'s fence for
/// `side` ("source" or "target"). Raises ManifestError `transfer_fence_mismatch` with the
/// pointer `/{side}/{member}` of the bound plan, or `transfer_arguments_invalid`.
#[pyfunction]
pub(crate) fn check_fence(
    bound: &Bound<'_, BoundPlan>,
    side: &str,
    held: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let py = held.py();
    let side = Side::parse(side).ok_or_else(|| {
        invalid(
            py,
            format!("side must be 'source' or 'target', not {side:?}"),
        )
    })?;
    let bound = &bound.get().0;
    if let Ok(binding) = binding_core(held, "held") {
        let binding = &binding.get().0;
        return fence::check(bound, side, &Held::of_binding(binding)).or_raise(py);
    }
    let held = held.cast::<PyMapping>().map_err(|_| {
        invalid(
            py,
            "held must be a RuntimeBindingManifest or a mapping".to_owned(),
        )
    })?;
    let required = |name: &str| invalid(py, format!("the held fence has no {name}"));
    let string = |name: &str| text(py, member(held, name)?, name);
    let instance_id = string("instance_id")?.ok_or_else(|| required("instance_id"))?;
    let lease_id = string("lease_id")?.ok_or_else(|| required("lease_id"))?;
    let generation = member(held, "generation")?
        .ok_or_else(|| required("generation"))?
        .extract::<u64>()
        .map_err(|_| invalid(py, "the held fence's generation is not a u64".to_owned()))?;
    let worker_id = string("worker_id")?;
    let placement_id = string("placement_id")?;
    let placement_digest = string("placement_digest")?;
    let held = Held {
        worker_id: worker_id.as_deref(),
        placement_id: placement_id.as_deref(),
        placement_digest: placement_digest.as_deref(),
        instance_id: &instance_id,
        lease_id: &lease_id,
        generation,
    };
    fence::check(bound, side, &held).or_raise(py)
}
