//! Mooncake's formats (contract §20) over the C ABI: a `WeightPlacementManifest` read by
//! every Mooncake rule and written back as upstream writes it, and a Store
//! `WeightManifest` validated as upstream validates it; this contract's placement exported
//! as a Mooncake one (§20.7) and a Mooncake one imported as ours; the plan between two
//! Mooncake documents in upstream's region form (§20.9); upstream's check of runtime
//! bindings (§20.10). Every rule is the
//! `weight-manifest-mooncake` crate's; this module only moves arguments and results.

use std::ffi::c_char;

use weight_manifest::PlanLimits;
use weight_manifest::{Options, Placement};
use weight_manifest_mooncake::{
    export, import, plan_transfer_json, validate_bindings, ExportOptions, MooncakeBinding,
    MooncakePlacement, MooncakeStorageManifest,
};

use crate::api::run;
use crate::error::WmError;
use crate::fence::verdict;
use crate::handles::{expose, free, WmPlacement};
use crate::text::{bytes_arg, CText};

/// A validated Mooncake placement (`mooncake.reshard` 0.3.13). Opaque; free it with
/// `wm_mooncake_placement_free`.
#[derive(Debug)]
pub struct WmMooncakePlacement {
    canonical: CText,
    placement_id: CText,
    digest: CText,
    topology_id: CText,
}

impl WmMooncakePlacement {
    fn new(p: &MooncakePlacement) -> WmMooncakePlacement {
        WmMooncakePlacement {
            canonical: CText::new(&p.to_json()),
            placement_id: CText::new(p.placement_id()),
            digest: CText::new(&p.digest()),
            topology_id: CText::new(p.topology_id()),
        }
    }
}

/// A validated Mooncake Store manifest. Opaque; free it with `wm_mooncake_storage_free`.
#[derive(Debug)]
pub struct WmMooncakeStorage {
    text: CText,
    digest: CText,
}

/// Reads a Mooncake `WeightPlacementManifest` (contract §20.3: upstream's rules in its
/// order, this implementation's codes and pointers). Rejections: the reader's codes,
/// `fields_mismatch` (a document of this contract's format is named as such), the value
/// checks, the `mooncake_*` codes of §20.3–§20.4 and `placement_id_mismatch`.
///
/// # Safety
/// `json` is NULL or points to `json_len` readable bytes; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_mooncake_placement_parse(
    json: *const c_char,
    json_len: usize,
    out: *mut *mut WmMooncakePlacement,
) -> *mut WmError {
    // SAFETY: forwarded caller promises.
    unsafe {
        run(out, || {
            let text = bytes_arg(json, json_len, "json")?;
            let p = MooncakePlacement::from_json(text, &Options::default())?;
            Ok(WmMooncakePlacement::new(&p))
        })
    }
}

/// Exports this contract's placement (`placement`, its JSON text) as a Mooncake placement
/// (§20.7, the `mooncake.export` operation): what the placement does not say is inferred
/// unless `overrides` (the JSON text of an overrides document: weight_generation,
/// placement_set_id, sizes, participants, parallel_axes) gives it; `overrides` NULL with
/// length 0 is none. Rejections: the placement's codes (§6.2, pointers into `placement`),
/// the overrides reader's codes and `mooncake_export_override_invalid` (pointers into
/// `overrides`), `mooncake_export_unsupported`. The result is read by
/// `wm_mooncake_placement_json` and the other accessors of a parsed one.
///
/// # Safety
/// `placement` is NULL or points to `placement_len` readable bytes, `overrides` likewise;
/// `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_mooncake_export(
    placement: *const c_char,
    placement_len: usize,
    overrides: *const c_char,
    overrides_len: usize,
    out: *mut *mut WmMooncakePlacement,
) -> *mut WmError {
    // SAFETY: forwarded caller promises.
    unsafe {
        run(out, || {
            let text = bytes_arg(placement, placement_len, "placement")?;
            let given = bytes_arg(overrides, overrides_len, "overrides")?;
            let ours = Placement::from_json(text, &Options::default())?;
            let options = if overrides.is_null() {
                ExportOptions::default()
            } else {
                ExportOptions::from_overrides_json(given, &Options::default())?
            };
            let p = export(&ours, &options)?;
            Ok(WmMooncakePlacement::new(&p))
        })
    }
}

/// The canonical text, byte for byte what upstream's `weight_placement_to_json` writes
/// (§20.5); NUL-terminated, owned by the handle, its length in `len` unless NULL.
///
/// # Safety
/// `placement` is NULL or a live handle; `len` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_mooncake_placement_json(
    placement: *const WmMooncakePlacement,
    len: *mut usize,
) -> *const c_char {
    // SAFETY: forwarded caller promises.
    unsafe { expose(placement, len, |p| &p.canonical) }
}

/// The placement_id (`sha256:` + 64 hex digits, §20.2); owned by the handle.
///
/// # Safety
/// As for `wm_mooncake_placement_json`.
#[no_mangle]
pub unsafe extern "C" fn wm_mooncake_placement_id(
    placement: *const WmMooncakePlacement,
    len: *mut usize,
) -> *const c_char {
    // SAFETY: forwarded caller promises.
    unsafe { expose(placement, len, |p| &p.placement_id) }
}

/// The digest (64 hex digits: SHA-256 of the canonical text, §20.2); owned by the handle.
///
/// # Safety
/// As for `wm_mooncake_placement_json`.
#[no_mangle]
pub unsafe extern "C" fn wm_mooncake_placement_digest(
    placement: *const WmMooncakePlacement,
    len: *mut usize,
) -> *const c_char {
    // SAFETY: forwarded caller promises.
    unsafe { expose(placement, len, |p| &p.digest) }
}

/// The topology_id (`sha256:` + 64 hex digits, §20.2); owned by the handle.
///
/// # Safety
/// As for `wm_mooncake_placement_json`.
#[no_mangle]
pub unsafe extern "C" fn wm_mooncake_placement_topology_id(
    placement: *const WmMooncakePlacement,
    len: *mut usize,
) -> *const c_char {
    // SAFETY: forwarded caller promises.
    unsafe { expose(placement, len, |p| &p.topology_id) }
}

/// Frees a Mooncake placement; NULL does nothing.
///
/// # Safety
/// The handle is NULL or from this library, not yet freed, not used after.
#[no_mangle]
pub unsafe extern "C" fn wm_mooncake_placement_free(handle: *mut WmMooncakePlacement) {
    // SAFETY: forwarded caller promise.
    unsafe { free(handle) }
}

/// Reads a Mooncake Store `WeightManifest` and validates it as upstream's
/// `WeightManifest.from_json` does (§20.6): the reader's and value checks' codes and the
/// `mooncake_storage_*` codes.
///
/// # Safety
/// `json` is NULL or points to `json_len` readable bytes; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_mooncake_storage_parse(
    json: *const c_char,
    json_len: usize,
    out: *mut *mut WmMooncakeStorage,
) -> *mut WmError {
    // SAFETY: forwarded caller promises.
    unsafe {
        run(out, || {
            let text = bytes_arg(json, json_len, "json")?;
            let m = MooncakeStorageManifest::from_json(text, &Options::default())?;
            Ok(WmMooncakeStorage {
                text: CText::new(&m.to_json()),
                digest: CText::new(&m.digest()),
            })
        })
    }
}

/// The manifest's text as upstream writes it (sorted keys, raw UTF-8, §20.6); owned by the
/// handle, its length in `len` unless NULL.
///
/// # Safety
/// `storage` is NULL or a live handle; `len` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_mooncake_storage_json(
    storage: *const WmMooncakeStorage,
    len: *mut usize,
) -> *const c_char {
    // SAFETY: forwarded caller promises.
    unsafe { expose(storage, len, |m| &m.text) }
}

/// The manifest_digest (64 hex digits: SHA-256 of the text's UTF-8 bytes); owned by the
/// handle.
///
/// # Safety
/// As for `wm_mooncake_storage_json`.
#[no_mangle]
pub unsafe extern "C" fn wm_mooncake_storage_digest(
    storage: *const WmMooncakeStorage,
    len: *mut usize,
) -> *const c_char {
    // SAFETY: forwarded caller promises.
    unsafe { expose(storage, len, |m| &m.digest) }
}

/// Frees a Store manifest; NULL does nothing.
///
/// # Safety
/// The handle is NULL or from this library, not yet freed, not used after.
#[no_mangle]
pub unsafe extern "C" fn wm_mooncake_storage_free(handle: *mut WmMooncakeStorage) {
    // SAFETY: forwarded caller promise.
    unsafe { free(handle) }
}

/// Imports a Mooncake placement (`json`, its JSON text) as this contract's placement
/// (§20.7, the `mooncake.import` operation): read by every Mooncake rule (§20.3, §20.4:
/// their codes, pointers into `json`), then held to this contract's rules (§8: e.g.
/// `non_shard_axis_shape` for a box cut on a dim that is not a shard dim; pointers into the
/// imported placement). The result is read by `wm_placement_canonical`, `wm_placement_id`
/// and `wm_placement_digest` and freed by `wm_placement_free`.
///
/// # Safety
/// `json` is NULL or points to `json_len` readable bytes; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_mooncake_import(
    json: *const c_char,
    json_len: usize,
    out: *mut *mut WmPlacement,
) -> *mut WmError {
    // SAFETY: forwarded caller promises.
    unsafe {
        run(out, || {
            let text = bytes_arg(json, json_len, "json")?;
            let m = MooncakePlacement::from_json(text, &Options::default())?;
            Ok(WmPlacement::new(import(&m)?.placement))
        })
    }
}

/// A transfer plan in Mooncake's region form. Opaque; free it with `wm_mooncake_plan_free`.
#[derive(Debug)]
pub struct WmMooncakePlan {
    json: CText,
}

/// Plans the transfer from `source` to `target` in Mooncake's region form (§20.9, the
/// `mooncake.plan` operation; upstream's `plan_placement_transfer`, or
/// `plan_stored_transfer_to_target_placement` when `source` is a Store manifest, which is
/// recognised by its `manifest_key` member). `target` is a Mooncake placement. Rejections:
/// the readers' codes (the source is read first; pointers into the document read),
/// `mooncake_generation_mismatch` at the target's `/weight_generation`, and the planner's
/// codes (§17.3). The regions are read by `wm_mooncake_plan_json`.
///
/// # Safety
/// `source` is NULL or points to `source_len` readable bytes, `target` likewise; `out` is
/// NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_mooncake_plan(
    source: *const c_char,
    source_len: usize,
    target: *const c_char,
    target_len: usize,
    out: *mut *mut WmMooncakePlan,
) -> *mut WmError {
    // SAFETY: forwarded caller promises.
    unsafe {
        run(out, || {
            let source = bytes_arg(source, source_len, "source")?;
            let target = bytes_arg(target, target_len, "target")?;
            let json =
                plan_transfer_json(source, target, &Options::default(), &PlanLimits::default())?;
            Ok(WmMooncakePlan {
                json: CText::new(&json),
            })
        })
    }
}

/// The regions as a canonical JSON array (§5), ordered by target_fragment_id, then
/// overlap_offset; each region has upstream's members `tensor_id`, `source_fragment_id`,
/// `target_fragment_id`, `overlap_offset`, `overlap_shape`, `source_base_offset`,
/// `target_base_offset`, `inner_bytes`, `outer_loop_counts`, `source_strides`,
/// `target_strides`. Owned by the handle, its length in `len` unless NULL; NULL for a NULL
/// handle.
///
/// # Safety
/// `plan` is NULL or a live handle; `len` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_mooncake_plan_json(
    plan: *const WmMooncakePlan,
    len: *mut usize,
) -> *const c_char {
    // SAFETY: forwarded caller promises.
    unsafe { expose(plan, len, |p| &p.json) }
}

/// Frees a Mooncake plan; NULL does nothing.
///
/// # Safety
/// The handle is NULL or from this library, not yet freed, not used after.
#[no_mangle]
pub unsafe extern "C" fn wm_mooncake_plan_free(handle: *mut WmMooncakePlan) {
    // SAFETY: forwarded caller promise.
    unsafe { free(handle) }
}

/// Checks Mooncake runtime bindings (`bindings`: this project's JSON form of them, an array
/// of `WeightRuntimeBindingManifest` objects, one per participant) against the Mooncake
/// placement `placement` as upstream's `validate_runtime_bindings` does (§20.10, the
/// `mooncake.binding` operation). The bindings are read first, then the placement.
/// Returns NULL when they hold, else a new error: the readers' codes, then the first rule
/// broken (`mooncake_binding_participant`, `binding_placement_id_mismatch`,
/// `digest_mismatch`, `unknown_binding_fragment`, `missing_binding_fragment`,
/// `binding_nbytes_mismatch`, `mooncake_binding_invalid`, `non_canonical_stride`,
/// `address_overlap`, ...; pointers index the array).
///
/// # Safety
/// `bindings` is NULL or points to `bindings_len` readable bytes, `placement` likewise.
#[no_mangle]
pub unsafe extern "C" fn wm_mooncake_validate_bindings(
    bindings: *const c_char,
    bindings_len: usize,
    placement: *const c_char,
    placement_len: usize,
) -> *mut WmError {
    verdict(|| {
        // SAFETY: forwarded caller promises.
        let (bindings, placement) = unsafe {
            (
                bytes_arg(bindings, bindings_len, "bindings")?,
                bytes_arg(placement, placement_len, "placement")?,
            )
        };
        let list = MooncakeBinding::list_from_json(bindings, &Options::default())?;
        let m = MooncakePlacement::from_json(placement, &Options::default())?;
        Ok(validate_bindings(&m, &list)?)
    })
}
