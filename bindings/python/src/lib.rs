//! The Python binding of the weight-manifest core: the extension module
//! `weight_manifest._native`, used by the `weight_manifest` package (a drop-in for the
//! reference's `mooncake.model_weight`).
//!
//! The binding is thin: it converts Python objects to the core's document values
//! (modules `convert`, `records`), calls the core, and converts results and rejections
//! back (`emit`, `errors`). The contract's value types are native classes holding their
//! checked values (`values`). No contract rule is implemented here. `adapt` runs the
//! safetensors adapter; `tensor` reads a live tensor's facts (DLPack) for
//! `weight_manifest.live`.

mod adapt;
mod analysis;
mod bulk;
mod classes;
mod content;
mod content_manifest;
mod convert;
mod emit;
mod errors;
mod fence;
mod manifest_lists;
mod manifests;
mod mooncake;
mod ops;
mod records;
mod scalars;
mod tensor;
mod utf8;
mod values;

use pyo3::prelude::*;

/// The allocator of the core's values (see Cargo.toml).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `allow_thp` option in the option enum of the mimalloc bundled by
/// libmimalloc-sys 0.1.49 (v3: `mi_option_allow_thp`, the 44th entry).
const ALLOW_THP: libmimalloc_sys::mi_option_t = 43;

/// Keeps mimalloc's memory off transparent huge pages. On these VMs, faulting in fresh huge
/// pages made the same bulk construction take 0.41 s in some runs and 1.1 s in others
/// (0.2 s against 0.9 s of system time); without them it takes 0.48-0.61 s every time.
/// `MIMALLOC_ALLOW_THP`, when set, wins; if the option does not hold its documented default
/// (another mimalloc), it is left alone.
#[allow(unsafe_code)]
fn avoid_huge_pages() {
    if std::env::var_os("MIMALLOC_ALLOW_THP").is_some() {
        return;
    }
    // SAFETY: reading and setting an allocator option, under the GIL at import.
    unsafe {
        if libmimalloc_sys::mi_option_get(ALLOW_THP) == 1 {
            libmimalloc_sys::mi_option_set(ALLOW_THP, 0);
        }
    }
}

/// The extension module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    avoid_huge_pages();
    m.add("ManifestError", m.py().get_type::<errors::ManifestError>())?;
    m.add_class::<manifests::PlacementCore>()?;
    m.add_class::<manifests::RuntimeCore>()?;
    m.add_class::<manifests::BindingCore>()?;
    m.add_function(wrap_pyfunction!(classes::register, m)?)?;
    values::register(m)?;
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
    m.add_function(wrap_pyfunction!(fence::check_fence, m)?)?;
    // The safetensors adapter, live tensors, content digests and manifests, and the
    // Mooncake formats.
    m.add_function(wrap_pyfunction!(adapt::adapt_safetensors, m)?)?;
    m.add_function(wrap_pyfunction!(adapt::adapt_fragment_id, m)?)?;
    m.add_function(wrap_pyfunction!(tensor::tensor_facts, m)?)?;
    m.add_function(wrap_pyfunction!(content::content_partial, m)?)?;
    m.add_function(wrap_pyfunction!(content::content_combine, m)?)?;
    m.add_function(wrap_pyfunction!(content::block_values, m)?)?;
    m.add_function(wrap_pyfunction!(content::content_blocks, m)?)?;
    m.add_function(wrap_pyfunction!(content::content_values_at, m)?)?;
    m.add_function(wrap_pyfunction!(content::content_partial_of_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(content::block_values_of_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(
        content_manifest::content_manifest_verify,
        m
    )?)?;
    m.add_function(wrap_pyfunction!(
        content_manifest::content_manifest_write,
        m
    )?)?;
    m.add_function(wrap_pyfunction!(
        content_manifest::content_manifest_read,
        m
    )?)?;
    m.add_function(wrap_pyfunction!(mooncake::mooncake_export, m)?)?;
    m.add_function(wrap_pyfunction!(mooncake::mooncake_import, m)?)?;
    m.add_function(wrap_pyfunction!(mooncake::mooncake_validate, m)?)?;
    m.add_function(wrap_pyfunction!(mooncake::mooncake_storage_validate, m)?)?;
    m.add_function(wrap_pyfunction!(mooncake::mooncake_export_binding, m)?)?;
    m.add_function(wrap_pyfunction!(mooncake::mooncake_import_binding, m)?)?;
    m.add_function(wrap_pyfunction!(mooncake::mooncake_validate_bindings, m)?)?;
    m.add_function(wrap_pyfunction!(mooncake::mooncake_storage_write, m)?)?;
    m.add_function(wrap_pyfunction!(mooncake::mooncake_storage_read, m)?)?;
    m.add_function(wrap_pyfunction!(mooncake::mooncake_plan, m)?)?;
    Ok(())
}
