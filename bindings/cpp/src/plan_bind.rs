//! Binding a reshard plan to the runtime bindings of its two placements (the `plan.bind`
//! operation, contract §17.4): a plan read back from its JSON document, and the bound
//! plan, the copy list a transfer engine executes.

use std::ffi::c_char;

use weight_manifest::wire::BoundSide;
use weight_manifest::{BoundPlan, Fences, Options, Plan};

use crate::analysis::WmPlan;
use crate::api::{handle_arg, run};
use crate::error::WmError;
use crate::handles::{expose, free, WmBinding};
use crate::text::{bytes_arg, CText};

/// A reshard plan bound to the runtime bindings of its source and target placements.
/// Opaque; free it with `wm_bound_plan_free`.
#[derive(Debug)]
pub struct WmBoundPlan {
    id: CText,
    json: CText,
    /// The fences of its two sides, for `wm_fence_check`.
    pub(crate) source: BoundSide,
    pub(crate) target: BoundSide,
}

impl WmBoundPlan {
    fn new(inner: BoundPlan) -> WmBoundPlan {
        WmBoundPlan {
            id: CText::new(inner.bound_plan_id()),
            source: inner.as_wire().source.clone(),
            target: inner.as_wire().target.clone(),
            json: CText::new(&inner.into_json()),
        }
    }
}

/// Reads a reshard plan document (the JSON text `wm_plan_json` gives, in any spelling)
/// strictly and checks its plan_id (contract §17.3, "Reading a plan"): `text` is
/// `text_len` bytes of JSON (NULL with length 0 is the empty text). Rejections:
/// the reader's codes, `limit_exceeded`, `plan_document_invalid`, `plan_id_mismatch`.
///
/// # Safety
/// `text` is NULL or points to `text_len` readable bytes; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_plan_parse(
    text: *const c_char,
    text_len: usize,
    out: *mut *mut WmPlan,
) -> *mut WmError {
    // SAFETY: forwarded caller promises.
    unsafe {
        run(out, || {
            let text = bytes_arg(text, text_len, "text")?;
            Ok(WmPlan::new(Plan::from_json(text, &Options::default())?))
        })
    }
}

/// Reads a bound plan document (the JSON text `wm_bound_plan_json` gives, in any
/// spelling: what a worker receives from its coordinator) strictly and checks its
/// bound_plan_id. Rejections: the reader's codes, `limit_exceeded`,
/// `bound_plan_document_invalid`, `bound_plan_id_mismatch`.
///
/// # Safety
/// `text` is NULL or points to `text_len` readable bytes; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_bound_plan_parse(
    text: *const c_char,
    text_len: usize,
    out: *mut *mut WmBoundPlan,
) -> *mut WmError {
    // SAFETY: forwarded caller promises.
    unsafe {
        run(out, || {
            let text = bytes_arg(text, text_len, "text")?;
            Ok(WmBoundPlan::new(BoundPlan::from_json(
                text,
                &Options::default(),
            )?))
        })
    }
}

/// Binds `plan` to the runtime bindings `source` and `target` (`plan.bind`, contract
/// §17.4). `source_generation` and `target_generation` are each NULL (no fence) or point
/// to the generation that binding must have; a binding of another generation is stale
/// (`plan_binding_generation_mismatch`). The other rejections, in order:
/// `plan_binding_placement_id_mismatch` and `plan_binding_digest_mismatch` per side,
/// then per region `plan_document_invalid`, `plan_binding_fragment_missing` and
/// `plan_binding_range_invalid`. None carries a path.
///
/// # Safety
/// `plan`, `source` and `target` are each NULL or a live handle; `source_generation` and
/// `target_generation` are each NULL or readable; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_bind_plan(
    plan: *const WmPlan,
    source: *const WmBinding,
    target: *const WmBinding,
    source_generation: *const u64,
    target_generation: *const u64,
    out: *mut *mut WmBoundPlan,
) -> *mut WmError {
    // SAFETY: forwarded caller promises; `as_ref` checks NULL.
    unsafe {
        run(out, || {
            let plan = handle_arg(plan, "plan")?;
            let source = handle_arg(source, "source")?;
            let target = handle_arg(target, "target")?;
            let fences = Fences {
                source_generation: source_generation.as_ref().copied(),
                target_generation: target_generation.as_ref().copied(),
            };
            let bound =
                weight_manifest::bind_plan(&plan.inner, &source.inner, &target.inner, &fences)?;
            Ok(WmBoundPlan::new(bound))
        })
    }
}

/// The bound plan as canonical JSON text, NUL-terminated and owned by the handle; its
/// length in `len` unless NULL. NULL for a NULL handle.
///
/// # Safety
/// `bound` is NULL or a live handle; `len` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_bound_plan_json(
    bound: *const WmBoundPlan,
    len: *mut usize,
) -> *const c_char {
    // SAFETY: forwarded caller promises.
    unsafe { expose(bound, len, |b| &b.json) }
}

/// The bound_plan_id, NUL-terminated and owned by the handle; its length in `len` unless
/// NULL. NULL for a NULL handle.
///
/// # Safety
/// `bound` is NULL or a live handle; `len` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_bound_plan_id(
    bound: *const WmBoundPlan,
    len: *mut usize,
) -> *const c_char {
    // SAFETY: forwarded caller promises.
    unsafe { expose(bound, len, |b| &b.id) }
}

/// Frees a bound plan; NULL does nothing.
///
/// # Safety
/// `bound` is NULL or a bound plan from this library, not yet freed, not used after.
#[no_mangle]
pub unsafe extern "C" fn wm_bound_plan_free(bound: *mut WmBoundPlan) {
    // SAFETY: forwarded caller promise.
    unsafe { free(bound) }
}

#[cfg(test)]
mod tests {
    use std::ptr::{null, null_mut};

    use super::*;
    use crate::code::WmCode;
    use crate::error::{wm_error_code, wm_error_free};

    fn vector(name: &str) -> Vec<u8> {
        std::fs::read(format!(
            "{}/../../tests/vectors/plan_bind/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    }

    fn binding(name: &str) -> *mut WmBinding {
        let text = vector(name);
        let mut out = null_mut();
        // SAFETY: a live slice and a local out pointer.
        let error =
            unsafe { crate::api::wm_binding_parse(text.as_ptr().cast(), text.len(), &raw mut out) };
        assert!(error.is_null());
        out
    }

    #[test]
    fn binds_the_vectors_as_the_core_does() {
        let plan_text = vector("plan.json");
        let (source, target) = (
            binding("source-binding.json"),
            binding("target-binding.json"),
        );
        // SAFETY: live handles, slices and local out pointers; each handle is freed once.
        unsafe {
            let mut plan = null_mut();
            let error = wm_plan_parse(plan_text.as_ptr().cast(), plan_text.len(), &raw mut plan);
            assert!(error.is_null());
            let (three, twelve) = (3u64, 12u64);
            let mut bound = null_mut();
            let error = wm_bind_plan(
                plan,
                source,
                target,
                &raw const three,
                &raw const twelve,
                &raw mut bound,
            );
            assert!(error.is_null());
            let mut len = 0;
            let json = wm_bound_plan_json(bound, &raw mut len);
            assert_eq!(
                std::slice::from_raw_parts(json.cast::<u8>(), len),
                vector("bound-plan.json")
            );
            let id = wm_bound_plan_id(bound, &raw mut len);
            let id = std::str::from_utf8(std::slice::from_raw_parts(id.cast::<u8>(), len)).unwrap();
            assert!(String::from_utf8(vector("bound-plan.json"))
                .unwrap()
                .contains(id));
            wm_bound_plan_free(bound);

            // A stale fence, a missing handle, and a tampered plan.
            let error = wm_bind_plan(
                plan,
                source,
                target,
                &raw const twelve,
                null(),
                &raw mut bound,
            );
            assert!(bound.is_null());
            assert_eq!(wm_error_code(error), WmCode::PlanBindingGenerationMismatch);
            wm_error_free(error);
            let error = wm_bind_plan(plan, null(), target, null(), null(), &raw mut bound);
            assert_eq!(wm_error_code(error), WmCode::InvalidArgument);
            wm_error_free(error);
            crate::analysis::wm_plan_free(plan);
            let tampered =
                String::from_utf8(plan_text)
                    .unwrap()
                    .replacen("\"nbytes\":8", "\"nbytes\":9", 1);
            let error = wm_plan_parse(tampered.as_ptr().cast(), tampered.len(), &raw mut plan);
            assert!(plan.is_null());
            assert_eq!(wm_error_code(error), WmCode::PlanIdMismatch);
            wm_error_free(error);
            crate::handles::wm_binding_free(source);
            crate::handles::wm_binding_free(target);
        }
    }
}
