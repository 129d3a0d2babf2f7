//! # weight-manifest-ffi
//!
//! The C ABI of the weight-manifest core, for the C++ binding (`weight_manifest.hpp`) and
//! any C consumer. The header `include/weight_manifest.h` is generated from this crate by
//! `cargo run -p weight-manifest-codegen` (cbindgen) and drift-checked in CI.
//!
//! Conventions (every function):
//! - Operations take JSON text as `(const char *text, size_t text_len)`, any bytes, and
//!   return NULL on success with a new handle in `*out`, or a new `WmError` (and NULL in
//!   `*out`) on failure. Rejections carry the contract's code, message and JSON pointer.
//! - Every allocation handed out has one free function: `wm_placement_free`,
//!   `wm_runtime_free`, `wm_binding_free`, `wm_coverage_free`, `wm_plan_free`,
//!   `wm_bound_plan_free`, the content handles' `wm_content_*_free`, `wm_error_free`
//!   (each accepts NULL). Strings
//!   returned by accessors are borrowed from their handle or error and live as long as it.
//! - No panic crosses the ABI: each entry point catches it and reports
//!   `WM_CODE_INTERNAL_ERROR` (or a NULL/false result for accessors).
//! - Handles are immutable and may be read from several threads at once.
//!
//! This is the only crate of the workspace with `unsafe` code; each block says why it is
//! sound in a `SAFETY` comment.

mod analysis;
mod api;
mod code;
// Generated from the core's `Code::ALL` by weight-manifest-codegen.
#[rustfmt::skip]
mod code_table;
mod content;
mod error;
mod fence;
mod guard;
mod handles;
mod mooncake;
mod plan_bind;
mod text;

pub use analysis::{
    wm_coverage, wm_coverage_free, wm_coverage_is_complete, wm_coverage_json, wm_plan,
    wm_plan_free, wm_plan_id, wm_plan_json, wm_plan_limits_default, WmCoverage, WmPlan,
    WmPlanLimits,
};
pub use api::{
    wm_bind, wm_binding_from_inventory, wm_binding_parse, wm_placement_from_inventory,
    wm_placement_parse, wm_project_binding, wm_project_placement, wm_runtime_from_inventory,
    wm_runtime_parse,
};
pub use code::{wm_code_name, WmCode};
pub use content::{
    wm_content_block_values, wm_content_combine, wm_content_comparison_count,
    wm_content_comparison_free, wm_content_comparison_json, wm_content_manifest_check_bytes,
    wm_content_manifest_check_fragment, wm_content_manifest_compare, wm_content_manifest_free,
    wm_content_manifest_json, wm_content_manifest_parse, wm_content_manifest_tensor,
    wm_content_manifest_verify, wm_content_partial, wm_content_partial_equal,
    wm_content_partial_free, wm_content_partial_json, wm_content_partial_parse,
    wm_content_tensor_free, wm_content_tensor_new, wm_content_values_count, wm_content_values_free,
    wm_content_values_get, wm_content_values_json, WmContentComparison, WmContentDigest,
    WmContentFragment, WmContentManifest, WmContentPartial, WmContentTensor, WmContentValues,
};
pub use error::{
    wm_error_code, wm_error_code_name, wm_error_detail_json, wm_error_detail_summary,
    wm_error_free, wm_error_json_location, wm_error_message, wm_error_path, WmError,
};
pub use fence::{wm_fence_check, wm_fence_check_binding};
pub use handles::{
    wm_binding_free, wm_binding_json, wm_placement_canonical, wm_placement_digest,
    wm_placement_free, wm_placement_id, wm_runtime_free, wm_runtime_generation, wm_runtime_json,
    WmBinding, WmPlacement, WmRuntime,
};
pub use mooncake::{
    wm_mooncake_export, wm_mooncake_import, wm_mooncake_placement_digest,
    wm_mooncake_placement_free, wm_mooncake_placement_id, wm_mooncake_placement_json,
    wm_mooncake_placement_parse, wm_mooncake_placement_topology_id, wm_mooncake_plan,
    wm_mooncake_plan_free, wm_mooncake_plan_json, wm_mooncake_storage_digest,
    wm_mooncake_storage_free, wm_mooncake_storage_json, wm_mooncake_storage_parse,
    wm_mooncake_validate_bindings, WmMooncakePlacement, WmMooncakePlan, WmMooncakeStorage,
};
pub use plan_bind::{
    wm_bind_plan, wm_bound_plan_free, wm_bound_plan_id, wm_bound_plan_json, wm_bound_plan_parse,
    wm_plan_parse, WmBoundPlan,
};

/// The library version (the crate's), NUL-terminated and static.
#[no_mangle]
pub extern "C" fn wm_version() -> *const std::ffi::c_char {
    const VERSION: &std::ffi::CStr = match std::ffi::CStr::from_bytes_with_nul(
        concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes(),
    ) {
        Ok(version) => version,
        Err(_) => panic!("the version has no NUL byte"),
    };
    VERSION.as_ptr()
}

#[cfg(test)]
mod tests;
