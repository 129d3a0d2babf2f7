//! `adapt_safetensors`: the safetensors adapter (`crates/adapt`, contract §17.5) from
//! Python, thin over the same calls the CLI's `adapt safetensors` makes, so the placement's
//! JSON is the CLI's byte for byte and the inventory template is the document its
//! `--inventory` writes.

use std::path::PathBuf;

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyString, PyTuple};
use weight_manifest::Options;
use weight_manifest_adapt::{self as adapt, AdaptOptions, Grid, ReadError, Rules};

use crate::classes::classes;
use crate::emit;
use crate::errors::OrRaise;

/// The rules file's text: a `str`, `bytes` or `bytearray` is the text itself (so a `str`
/// is never taken for a path); anything else must be an `os.PathLike`, the file to read.
fn rules_text(rules: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(s) = rules.cast::<PyString>() {
        return Ok(s.to_cow()?.into_owned().into_bytes());
    }
    if let Ok(b) = rules.cast::<PyBytes>() {
        return Ok(b.as_bytes().to_vec());
    }
    if let Ok(b) = rules.cast::<PyByteArray>() {
        return Ok(b.to_vec());
    }
    let path: PathBuf = rules.extract()?;
    std::fs::read(&path).map_err(|e| os_error(rules.py(), &path, &e))
}

/// An `OSError` (its subclass follows the errno, as `open()` would raise) naming `path`.
fn os_error(py: Python<'_>, path: &std::path::Path, error: &std::io::Error) -> PyErr {
    let shown = path.display().to_string();
    let strerror = |errno: i32| -> PyResult<String> {
        py.import("os")?
            .getattr("strerror")?
            .call1((errno,))?
            .extract()
    };
    match error.raw_os_error() {
        Some(errno) => match strerror(errno) {
            Ok(text) => PyOSError::new_err((errno, text, shown)),
            Err(e) => e,
        },
        // Not from the OS (e.g. "the folder holds neither ..."): the kind picks the class.
        None => PyErr::from(std::io::Error::new(
            error.kind(),
            format!("{shown}: {error}"),
        )),
    }
}

/// `adapt_safetensors(path, rules, *, tp, pp, ep, dp, model_id, revision, dims)`: the placement
/// of the checkpoint at `path` (a safetensors file, an index file or a folder) laid out by
/// `rules` (the rules JSON as `str`/`bytes`, or a path), as a `PlacementManifest`, and its
/// runtime inventory template (§17.5, fused buffers included) as Python data. `dims` maps
/// the model dimensions a rule's `pieces` counts to their values (the CLI's `--dim`).
///
/// The checks run in the CLI's order: the rules, then the checkpoint, then the layout.
/// Rejections raise `ManifestError` with the core's code and pointer; a file that cannot
/// be read raises `OSError`.
#[pyfunction]
#[pyo3(signature = (path, rules, *, model_id, revision, tp=1, pp=1, ep=1, dp=1, dims=None))]
// The CLI's flags, one keyword each; PyO3 extracts the path and ids as owned values.
#[allow(clippy::too_many_arguments, clippy::needless_pass_by_value)]
pub(crate) fn adapt_safetensors<'py>(
    py: Python<'py>,
    path: PathBuf,
    rules: &Bound<'py, PyAny>,
    model_id: String,
    revision: String,
    tp: u64,
    pp: u64,
    ep: u64,
    dp: u64,
    dims: Option<std::collections::BTreeMap<String, u64>>,
) -> PyResult<Bound<'py, PyTuple>> {
    let options = Options::default();
    let rules = Rules::from_json(rules_text(rules)?, &options).or_raise(py)?;
    let checkpoint = match adapt::read_checkpoint(&path) {
        Ok(checkpoint) => checkpoint,
        Err(ReadError::Invalid(e)) => return Err(crate::errors::to_py(py, &e)),
        Err(ReadError::Io { path, error }) => return Err(os_error(py, &path, &error)),
    };
    let grid = Grid { dp, pp, tp, ep };
    let adapt_options = dims
        .unwrap_or_default()
        .into_iter()
        .fold(AdaptOptions::new(model_id, revision, grid), |o, (n, v)| {
            o.with_dim(n, v)
        });
    let adapted = adapt::adapt(&checkpoint, &rules, &adapt_options).or_raise(py)?;
    let inventory = adapt::runtime_inventory_template_fused(&adapted.placement, &adapted.fusion)
        .or_raise(py)?;
    let placement = adapted.placement;
    // The template as the CLI encodes it, read by Python's json (exact ints, so a u64
    // address above 2^53 stays exact; no document limit applies to our own output).
    let text = serde_json::to_string(&inventory)
        .map_err(|e| PyValueError::new_err(format!("cannot encode the inventory: {e}")))?;
    let inventory = py.import("json")?.getattr("loads")?.call1((text,))?;
    let placement = emit::placement(classes(py)?.placement.bind(py), placement)?;
    PyTuple::new(py, [placement, inventory])
}

/// The adapter's placement_fragment_id of `tensor` on `rank` (§17.5):
/// `{tensor}@dp{d}.pp{p}.tp{t}.ep{e}`.
#[pyfunction]
pub(crate) fn adapt_fragment_id(
    tensor: &str,
    rank: &Bound<'_, crate::values::ParallelRank>,
) -> String {
    adapt::build::fragment_id(tensor, &rank.get().checked)
}
