//! The fence rule of a weight update (contract §17.7) over the C ABI: what a worker, or a
//! side's whole runtime binding, holds now against a bound plan's fence for its side,
//! checked by the core's `fence::check_side` (the rule the CLI and the Python binding
//! call too).

use std::ffi::c_char;

use weight_manifest::fence::{self, Held, Side};
use weight_manifest::Options;

use crate::api::{handle_arg, Failure};
use crate::code::WmCode;
use crate::error::WmError;
use crate::guard::guard_error;
use crate::handles::WmBinding;
use crate::plan_bind::WmBoundPlan;
use crate::text::bytes_arg;

/// The side named by `(side, side_len)`: `source` or `target`.
///
/// # Safety
/// As for [`bytes_arg`].
unsafe fn side_arg(side: *const c_char, side_len: usize) -> Result<Side, Failure> {
    // SAFETY: forwarded caller promise.
    let name = unsafe { bytes_arg(side, side_len, "side") }?;
    std::str::from_utf8(name)
        .ok()
        .and_then(Side::parse)
        .ok_or_else(|| Failure::Argument("side must be \"source\" or \"target\"".to_owned()))
}

/// Runs a check: NULL when it passes, else a new error (a panic is `WM_CODE_INTERNAL_ERROR`).
pub(crate) fn verdict(body: impl FnOnce() -> Result<(), Failure>) -> *mut WmError {
    match guard_error(body) {
        Ok(Ok(())) => std::ptr::null_mut(),
        Ok(Err(Failure::Core(error))) => WmError::from_core(&error).into_raw(),
        Ok(Err(Failure::Argument(message))) => {
            WmError::abi(WmCode::InvalidArgument, &message).into_raw()
        }
        Err(panic) => WmError::abi(WmCode::InternalError, &panic).into_raw(),
    }
}

/// Checks a held fence document (`held`: `held_len` bytes of JSON, schema
/// `fence.schema.json`: a worker's `instance_id`, `lease_id`, `generation`, `worker_id`,
/// and `placement_id` / `placement_digest` or null) against `bound`'s fence for `side`
/// (`side_len` bytes: `source` or `target`). Returns NULL when the fence holds, else a new
/// error: the reader's codes and `fence_document_invalid` for the document, then
/// `transfer_fence_mismatch` with the pointer `/{side}/{member}` of the bound plan and the
/// two values in its detail; `WM_CODE_INVALID_ARGUMENT` for a NULL handle or another side.
///
/// # Safety
/// `bound` is NULL or a live handle; `side` and `held` are each NULL or point to their
/// length in readable bytes.
#[no_mangle]
pub unsafe extern "C" fn wm_fence_check(
    bound: *const WmBoundPlan,
    side: *const c_char,
    side_len: usize,
    held: *const c_char,
    held_len: usize,
) -> *mut WmError {
    verdict(|| {
        // SAFETY: forwarded caller promises.
        let (bound, side, held) = unsafe {
            (
                handle_arg(bound, "bound")?,
                side_arg(side, side_len)?,
                bytes_arg(held, held_len, "held")?,
            )
        };
        let document = fence::read_held(held, &Options::default())?;
        Ok(fence::check_side(
            fence_of(bound, side),
            side,
            &Held::of_document(&document),
        )?)
    })
}

/// Checks a whole side's runtime binding (`binding`) against `bound`'s fence for `side`:
/// every member, the placement's too. Returns NULL when the fence holds, else a new error
/// (`transfer_fence_mismatch` as for `wm_fence_check`; `WM_CODE_INVALID_ARGUMENT` for a
/// NULL handle or another side).
///
/// # Safety
/// `bound` and `binding` are each NULL or a live handle; `side` is NULL or points to
/// `side_len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn wm_fence_check_binding(
    bound: *const WmBoundPlan,
    side: *const c_char,
    side_len: usize,
    binding: *const WmBinding,
) -> *mut WmError {
    verdict(|| {
        // SAFETY: forwarded caller promises.
        let (bound, side, binding) = unsafe {
            (
                handle_arg(bound, "bound")?,
                side_arg(side, side_len)?,
                handle_arg(binding, "binding")?,
            )
        };
        Ok(fence::check_side(
            fence_of(bound, side),
            side,
            &Held::of_binding(&binding.inner),
        )?)
    })
}

fn fence_of(bound: &WmBoundPlan, side: Side) -> &weight_manifest::wire::BoundSide {
    match side {
        Side::Source => &bound.source,
        Side::Target => &bound.target,
    }
}

#[cfg(test)]
mod tests {
    use std::ptr::{null, null_mut};

    use super::*;
    use crate::error::{wm_error_code, wm_error_free, wm_error_path};
    use crate::plan_bind::{wm_bound_plan_free, wm_bound_plan_parse};

    fn vector(name: &str) -> Vec<u8> {
        std::fs::read(format!(
            "{}/../../tests/vectors/plan_bind/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    }

    /// The error's code and path, freeing it; `None` for NULL (the fence holds).
    unsafe fn outcome(error: *mut WmError) -> Option<(WmCode, String)> {
        if error.is_null() {
            return None;
        }
        // SAFETY: a live error from this library, freed once.
        unsafe {
            let mut len = 0;
            let path = wm_error_path(error, &raw mut len);
            let path = if path.is_null() {
                String::new()
            } else {
                String::from_utf8_lossy(std::slice::from_raw_parts(path.cast::<u8>(), len))
                    .into_owned()
            };
            let code = wm_error_code(error);
            wm_error_free(error);
            Some((code, path))
        }
    }

    #[test]
    fn checks_held_documents_and_bindings_as_the_core_does() {
        let text = vector("bound-plan.json");
        // SAFETY: live slices, local out pointers; each handle is freed once.
        unsafe {
            let mut bound = null_mut();
            assert!(
                wm_bound_plan_parse(text.as_ptr().cast(), text.len(), &raw mut bound).is_null()
            );
            let held = br#"{"generation":13,"instance_id":"server","lease_id":"lease-server-12","placement_digest":null,"placement_id":null,"worker_id":"server-0"}"#;
            let check = |side: &str, held: &[u8]| {
                outcome(wm_fence_check(
                    bound,
                    side.as_ptr().cast(),
                    side.len(),
                    held.as_ptr().cast(),
                    held.len(),
                ))
            };
            assert_eq!(
                check("target", held),
                Some((
                    WmCode::TransferFenceMismatch,
                    "/target/generation".to_owned()
                ))
            );
            let current = String::from_utf8_lossy(held).replace("13", "12");
            assert_eq!(check("target", current.as_bytes()), None);
            assert_eq!(
                check("source", current.as_bytes()),
                Some((
                    WmCode::TransferFenceMismatch,
                    "/source/instance_id".to_owned()
                ))
            );
            assert_eq!(
                check("target", b"{}").map(|o| o.0),
                Some(WmCode::FenceDocumentInvalid)
            );
            assert_eq!(
                check("both", held).map(|o| o.0),
                Some(WmCode::InvalidArgument)
            );

            for (name, expected) in [
                ("target-binding.json", None),
                ("target-binding-stale.json", Some("/target/lease_id")),
                (
                    "target-binding-other-digest.json",
                    Some("/target/placement_digest"),
                ),
            ] {
                let text = vector(name);
                let mut binding = null_mut();
                let error = crate::api::wm_binding_parse(
                    text.as_ptr().cast(),
                    text.len(),
                    &raw mut binding,
                );
                assert!(error.is_null());
                let got = outcome(wm_fence_check_binding(
                    bound,
                    "target".as_ptr().cast(),
                    6,
                    binding,
                ));
                assert_eq!(got.map(|o| o.1), expected.map(str::to_owned), "{name}");
                crate::handles::wm_binding_free(binding);
            }
            let missing = outcome(wm_fence_check_binding(
                bound,
                "target".as_ptr().cast(),
                6,
                null(),
            ));
            assert_eq!(missing.map(|o| o.0), Some(WmCode::InvalidArgument));
            wm_bound_plan_free(bound);
        }
    }
}
