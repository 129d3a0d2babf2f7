//! Mooncake's released formats (contract §20) from Python: `mooncake_export`,
//! `mooncake_import`, `mooncake_validate`, the runtime bindings' conversion and validation
//! (`mooncake_export_binding`, `mooncake_import_binding`, `mooncake_validate_bindings`),
//! and the Store manifest's writer and reader (`mooncake_storage_write`,
//! `mooncake_storage_read`) and the plan in Mooncake's region form (`mooncake_plan`) of
//! `_native`. Each is the CLI's
//! `weight-manifest mooncake ...` operation on the same core functions, so the texts, ids
//! and rejections are the CLI's.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use weight_manifest::{canonical, Options};
use weight_manifest_mooncake::{
    export, export_binding, generated_fragment_id, import, import_binding, import_storage,
    plan_transfer_json, validate_bindings, ExportOptions, MooncakeBinding, MooncakePlacement,
    MooncakeStorageManifest, StoredFragment,
};

use crate::analysis::{binding_arg, placement_arg};
use crate::errors::OrRaise;
use crate::ops::document_bytes;

/// The export options: the overrides JSON (the CLI's `--overrides` file) or the defaults.
fn options(py: Python<'_>, overrides: Option<&Bound<'_, PyAny>>) -> PyResult<ExportOptions> {
    match overrides {
        None => Ok(ExportOptions::default()),
        Some(text) => {
            ExportOptions::from_overrides_json(&document_bytes(text)?, &Options::default())
                .or_raise(py)
        }
    }
}

/// `mooncake_export(placement, overrides=None)`: our placement (a PlacementManifest or its
/// JSON) as Mooncake's `WeightPlacementManifest` text, what `mooncake export` writes.
#[pyfunction]
#[pyo3(signature = (placement, overrides=None))]
pub(crate) fn mooncake_export(
    placement: &Bound<'_, PyAny>,
    overrides: Option<&Bound<'_, PyAny>>,
) -> PyResult<String> {
    let py = placement.py();
    let ours = placement_arg(placement, "placement")?;
    let options = options(py, overrides)?;
    Ok(export(&ours, &options).or_raise(py)?.to_json())
}

/// `mooncake_import(text)`: a Mooncake placement as (our canonical placement JSON, the
/// lines of what ours has no place for), what `mooncake import` writes and says.
#[pyfunction]
pub(crate) fn mooncake_import(text: &Bound<'_, PyAny>) -> PyResult<(String, Vec<String>)> {
    let py = text.py();
    let m =
        MooncakePlacement::from_json(&document_bytes(text)?, &Options::default()).or_raise(py)?;
    let imported = import(&m).or_raise(py)?;
    Ok((imported.placement.to_json(), imported.dropped))
}

/// `mooncake_validate(text)`: a Mooncake placement read by every Mooncake rule; its ids and
/// counts as `mooncake validate --format json` reports them.
#[pyfunction]
pub(crate) fn mooncake_validate<'py>(text: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
    let py = text.py();
    let m =
        MooncakePlacement::from_json(&document_bytes(text)?, &Options::default()).or_raise(py)?;
    let fragments = m.fragments().count();
    let generated = m
        .fragments()
        .filter(|f| generated_fragment_id(f) == f.placement_fragment_id)
        .count();
    let out = PyDict::new(py);
    out.set_item("document", "placement")?;
    out.set_item("canonical", m.to_json())?;
    out.set_item("placement_id", m.placement_id())?;
    out.set_item("topology_id", m.topology_id())?;
    out.set_item("digest", m.digest())?;
    out.set_item("resource_id", m.resource_id())?;
    out.set_item("revision", m.revision())?;
    out.set_item("weight_generation", m.weight_generation())?;
    out.set_item("placement_set_id", m.placement_set_id())?;
    out.set_item("tensors", m.tensors().len())?;
    out.set_item("fragments", fragments)?;
    out.set_item("participants", m.parts().len())?;
    out.set_item("generated_fragment_ids", generated)?;
    Ok(out)
}

/// `mooncake_storage_validate(text)`: a Store manifest read and validated as upstream's
/// `WeightManifest.from_json` does (nothing more: no import), as (its text as upstream
/// writes it, manifest_digest).
#[pyfunction]
pub(crate) fn mooncake_storage_validate(text: &Bound<'_, PyAny>) -> PyResult<(String, String)> {
    let py = text.py();
    let m = MooncakeStorageManifest::from_json(&document_bytes(text)?, &Options::default())
        .or_raise(py)?;
    Ok((m.to_json(), m.digest()))
}

/// One stored fragment as the Python side gives it: (fragment_id, tensor_id,
/// global_offset, local_shape, object_key, object_offset, nbytes, aliases).
type StoredTuple = (
    String,
    String,
    Vec<u64>,
    Vec<u64>,
    String,
    u64,
    u64,
    Vec<String>,
);

/// `mooncake_storage_write(placement, fragments, *, namespace, group_id,
/// weight_generation, created_at, overrides=None)`: the Store manifest of `fragments` (one
/// per stored box) of the tensors of `placement`, whose descriptors and axes are those of
/// the placement's Mooncake export. Validated as upstream's `WeightManifest` validates;
/// returns (text, manifest_digest).
#[pyfunction]
#[pyo3(signature = (placement, fragments, *, namespace, group_id, weight_generation, created_at, overrides=None))]
#[allow(clippy::needless_pass_by_value, clippy::too_many_arguments)] // pyo3 extracts owned
pub(crate) fn mooncake_storage_write(
    placement: &Bound<'_, PyAny>,
    fragments: Vec<StoredTuple>,
    namespace: String,
    group_id: String,
    weight_generation: u64,
    created_at: String,
    overrides: Option<&Bound<'_, PyAny>>,
) -> PyResult<(String, String)> {
    let py = placement.py();
    let ours = placement_arg(placement, "placement")?;
    let mut options = options(py, overrides)?;
    options.weight_generation = Some(weight_generation);
    let exported = export(&ours, &options).or_raise(py)?;
    let manifest = MooncakeStorageManifest {
        namespace,
        resource_id: exported.resource_id().to_owned(),
        revision: exported.revision().to_owned(),
        weight_generation,
        manifest_key: format!("{group_id}/manifest"),
        group_id,
        tensors: exported.tensors().to_vec(),
        fragments: fragments
            .into_iter()
            .map(|f| StoredFragment {
                fragment_id: f.0,
                tensor_id: f.1,
                global_offset: f.2,
                local_shape: f.3,
                object_key: f.4,
                object_offset: f.5,
                nbytes: f.6,
                aliases: f.7,
            })
            .collect(),
        created_at,
    };
    manifest.validate().or_raise(py)?;
    Ok((manifest.to_json(), manifest.digest()))
}

/// `mooncake_storage_read(text)`: a Store manifest read strictly and validated: a dict of
/// its header (namespace, resource_id, revision, weight_generation, group_id,
/// manifest_key, created_at, manifest_digest), `text` (its canonical text, upstream's
/// `to_json()`), its `fragments` as (fragment_id,
/// tensor_id, object_key, object_offset, nbytes) tuples, and `placement`: the stored
/// layout as our canonical placement JSON (every fragment on rank 0, `import_storage`)
/// with `dropped`, what that placement has no place for.
#[pyfunction]
pub(crate) fn mooncake_storage_read<'py>(text: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
    let py = text.py();
    let m = MooncakeStorageManifest::from_json(&document_bytes(text)?, &Options::default())
        .or_raise(py)?;
    let imported = import_storage(&m).or_raise(py)?;
    let out = PyDict::new(py);
    out.set_item("namespace", &m.namespace)?;
    out.set_item("resource_id", &m.resource_id)?;
    out.set_item("revision", &m.revision)?;
    out.set_item("weight_generation", m.weight_generation)?;
    out.set_item("group_id", &m.group_id)?;
    out.set_item("manifest_key", &m.manifest_key)?;
    out.set_item("created_at", &m.created_at)?;
    out.set_item("manifest_digest", m.digest())?;
    out.set_item("text", m.to_json())?;
    let fragments = PyList::empty(py);
    for f in &m.fragments {
        fragments.append((
            &f.fragment_id,
            &f.tensor_id,
            &f.object_key,
            f.object_offset,
            f.nbytes,
        ))?;
    }
    out.set_item("fragments", fragments)?;
    out.set_item("placement", imported.placement.to_json())?;
    out.set_item("dropped", imported.dropped)?;
    Ok(out)
}

/// A Mooncake placement given as its JSON text, read by every Mooncake rule.
fn mooncake_placement(text: &Bound<'_, PyAny>) -> PyResult<MooncakePlacement> {
    MooncakePlacement::from_json(&document_bytes(text)?, &Options::default()).or_raise(text.py())
}

/// `mooncake_export_binding(binding, placement)`: our runtime binding (a
/// RuntimeBindingManifest or its JSON) of the Mooncake placement `placement` (its text)
/// as Mooncake's per-participant bindings, in this project's JSON form of them (an array;
/// upstream has none), what `mooncake export-binding` writes.
#[pyfunction]
pub(crate) fn mooncake_export_binding(
    binding: &Bound<'_, PyAny>,
    placement: &Bound<'_, PyAny>,
) -> PyResult<String> {
    let ours = binding_arg(binding, "binding")?;
    let m = mooncake_placement(placement)?;
    let theirs = export_binding(&ours, &m).or_raise(binding.py())?;
    Ok(MooncakeBinding::list_to_json(&theirs))
}

/// `mooncake_import_binding(bindings, placement)`: Mooncake's per-participant bindings
/// (the JSON array) of `placement` as (our canonical binding JSON, what it dropped).
#[pyfunction]
pub(crate) fn mooncake_import_binding(
    bindings: &Bound<'_, PyAny>,
    placement: &Bound<'_, PyAny>,
) -> PyResult<(String, Vec<String>)> {
    let py = bindings.py();
    let theirs = MooncakeBinding::list_from_json(&document_bytes(bindings)?, &Options::default())
        .or_raise(py)?;
    let m = mooncake_placement(placement)?;
    let imported = import_binding(&theirs, &m).or_raise(py)?;
    let text = canonical::to_string(&imported.binding)
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
    Ok((text, imported.dropped))
}

/// `mooncake_validate_bindings(bindings, placement)`: Mooncake's per-participant
/// bindings (the JSON array) checked against `placement` as upstream's
/// `validate_runtime_bindings` checks them; raises on the first rule broken.
#[pyfunction]
pub(crate) fn mooncake_validate_bindings(
    bindings: &Bound<'_, PyAny>,
    placement: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let py = bindings.py();
    let theirs = MooncakeBinding::list_from_json(&document_bytes(bindings)?, &Options::default())
        .or_raise(py)?;
    let m = mooncake_placement(placement)?;
    validate_bindings(&m, &theirs).or_raise(py)
}

/// `mooncake_plan(source, target)`: the transfer from `source` (a Mooncake placement, or a
/// Store manifest: it has a `manifest_key` member) to the Mooncake placement `target` in
/// upstream's region form (`plan_placement_transfer`,
/// `plan_stored_transfer_to_target_placement`), as a canonical JSON array ordered by
/// target_fragment_id, then overlap_offset (§20.9).
#[pyfunction]
pub(crate) fn mooncake_plan(
    source: &Bound<'_, PyAny>,
    target: &Bound<'_, PyAny>,
) -> PyResult<String> {
    let py = source.py();
    let (source, target) = (document_bytes(source)?, document_bytes(target)?);
    plan_transfer_json(
        &source,
        &target,
        &Options::default(),
        &weight_manifest::PlanLimits::default(),
    )
    .or_raise(py)
}
