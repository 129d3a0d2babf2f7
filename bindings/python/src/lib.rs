//! The Python binding of the weight-manifest core: the extension module
//! `weight_manifest._native`, used by the `weight_manifest` package (a drop-in for the
//! reference's `mooncake.model_weight`).
//!
//! The binding is thin: it converts Python objects to the core's document values
//! (modules `convert`, `records`), calls the core, and converts results and rejections
//! back (`emit`, `errors`). No contract rule is implemented here. `adapt` runs the
//! safetensors adapter; `tensor` reads a live tensor's facts (DLPack) for
//! `weight_manifest.live`.

mod adapt;
mod analysis;
mod bulk;
mod classes;
mod convert;
mod emit;
mod errors;
mod init;
mod manifests;
mod ops;
mod records;
mod tensor;
mod values;

use pyo3::prelude::*;

/// The allocator of the core's values (see Cargo.toml).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The extension module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ManifestError", m.py().get_type::<errors::ManifestError>())?;
    m.add_class::<manifests::PlacementCore>()?;
    m.add_class::<manifests::RuntimeCore>()?;
    m.add_class::<manifests::BindingCore>()?;
    m.add_function(wrap_pyfunction!(classes::register, m)?)?;
    m.add_function(wrap_pyfunction!(init::new_parallel_rank, m)?)?;
    m.add_function(wrap_pyfunction!(init::new_tensor_descriptor, m)?)?;
    m.add_function(wrap_pyfunction!(init::new_placement_fragment, m)?)?;
    m.add_function(wrap_pyfunction!(init::new_runtime_fragment, m)?)?;
    m.add_function(wrap_pyfunction!(init::new_binding_fragment, m)?)?;
    m.add_function(wrap_pyfunction!(values::effective_shard_dims, m)?)?;
    m.add_function(wrap_pyfunction!(manifests::init_placement_manifest, m)?)?;
    m.add_function(wrap_pyfunction!(manifests::init_runtime_manifest, m)?)?;
    m.add_function(wrap_pyfunction!(manifests::init_binding_manifest, m)?)?;
    m.add_function(wrap_pyfunction!(manifests::materialize, m)?)?;
    m.add_function(wrap_pyfunction!(ops::placement_from_json, m)?)?;
    m.add_function(wrap_pyfunction!(bulk::placement_from_records, m)?)?;
    m.add_function(wrap_pyfunction!(ops::placement_to_json, m)?)?;
    m.add_function(wrap_pyfunction!(ops::placement_digest, m)?)?;
    m.add_function(wrap_pyfunction!(ops::runtime_to_json, m)?)?;
    m.add_function(wrap_pyfunction!(ops::binding_to_json, m)?)?;
    m.add_function(wrap_pyfunction!(ops::runtime_from_json, m)?)?;
    m.add_function(wrap_pyfunction!(ops::binding_from_json, m)?)?;
    m.add_function(wrap_pyfunction!(ops::read_inventory_json, m)?)?;
    m.add_function(wrap_pyfunction!(ops::runtime_from_inventory, m)?)?;
    m.add_function(wrap_pyfunction!(ops::binding_from_inventory, m)?)?;
    m.add_function(wrap_pyfunction!(ops::placement_from_inventory, m)?)?;
    m.add_function(wrap_pyfunction!(ops::project_placement, m)?)?;
    m.add_function(wrap_pyfunction!(ops::project_binding, m)?)?;
    m.add_function(wrap_pyfunction!(ops::bind, m)?)?;
    // The analysis operations (coverage, plan, bind_plan) and their result classes.
    m.add(
        "DEFAULT_MAX_REGIONS",
        weight_manifest::plan::DEFAULT_MAX_REGIONS,
    )?;
    m.add(
        "DEFAULT_MAX_SEGMENTS",
        weight_manifest::plan::DEFAULT_MAX_SEGMENTS,
    )?;
    m.add_class::<analysis::CoverageReport>()?;
    m.add_class::<analysis::Plan>()?;
    m.add_class::<analysis::PlanRegion>()?;
    m.add_class::<analysis::BoundPlan>()?;
    m.add_class::<analysis::CopyGroup>()?;
    m.add_class::<analysis::Segments>()?;
    m.add_function(wrap_pyfunction!(analysis::coverage, m)?)?;
    m.add_function(wrap_pyfunction!(analysis::plan, m)?)?;
    m.add_function(wrap_pyfunction!(analysis::bind_plan, m)?)?;
    // ---- issue 18: the safetensors adapter and live tensors (adapt.rs, tensor.rs) ----
    m.add_function(wrap_pyfunction!(adapt::adapt_safetensors, m)?)?;
    m.add_function(wrap_pyfunction!(adapt::adapt_fragment_id, m)?)?;
    m.add_function(wrap_pyfunction!(tensor::tensor_facts, m)?)?;
    // ---- end of issue 18 ----
    Ok(())
}
