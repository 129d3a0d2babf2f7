//! The operations (contract §14) over JSON text: each takes its inputs as `(pointer,
//! length)` bytes or handles, writes a new handle to `*out` and returns NULL, or writes
//! NULL to `*out` and returns a new error.
//!
//! Text is passed to the core as bytes, so text that is not UTF-8 is rejected with
//! `invalid_json` exactly as everywhere else.

use std::borrow::Cow;
use std::ffi::c_char;

use weight_manifest::inventory::{BINDING_INVENTORY_LABEL, RUNTIME_INVENTORY_LABEL};
use weight_manifest::{AddressSemantics, Binding, Options, Placement, Runtime, Value};

use crate::code::WmCode;
use crate::error::WmError;
use crate::guard::guard_error;
use crate::handles::{WmBinding, WmPlacement, WmRuntime};
use crate::text::{bytes_arg, optional_text_arg};

/// Why an operation produced no handle.
pub(crate) enum Failure {
    /// The contract rejected the input.
    Core(weight_manifest::Error),
    /// A C argument is unusable.
    Argument(String),
}

impl From<weight_manifest::Error> for Failure {
    fn from(error: weight_manifest::Error) -> Self {
        Failure::Core(error)
    }
}

impl From<String> for Failure {
    fn from(message: String) -> Self {
        Failure::Argument(message)
    }
}

/// Runs one operation: checks `out`, catches panics, and stores the handle or returns the
/// error.
///
/// # Safety
/// `out` is NULL or valid for a write of one pointer.
pub(crate) unsafe fn run<T>(
    out: *mut *mut T,
    body: impl FnOnce() -> Result<T, Failure>,
) -> *mut WmError {
    // SAFETY: the caller promises `out` is NULL or writable; `as_mut` checks NULL.
    let Some(out) = (unsafe { out.as_mut() }) else {
        return WmError::abi(WmCode::InvalidArgument, "the output pointer is NULL").into_raw();
    };
    *out = std::ptr::null_mut();
    let error = match guard_error(body) {
        Ok(Ok(value)) => {
            *out = Box::into_raw(Box::new(value));
            return std::ptr::null_mut();
        }
        Ok(Err(Failure::Core(error))) => WmError::from_core(&error),
        Ok(Err(Failure::Argument(message))) => WmError::abi(WmCode::InvalidArgument, &message),
        Err(panic) => WmError::abi(WmCode::InternalError, &panic),
    };
    error.into_raw()
}

/// A required handle argument.
///
/// # Safety
/// `handle` is NULL or live for `'a`.
pub(crate) unsafe fn handle_arg<'a, H>(handle: *const H, name: &str) -> Result<&'a H, Failure> {
    // SAFETY: the caller promises NULL or live; `as_ref` checks NULL.
    unsafe { handle.as_ref() }.ok_or_else(|| Failure::Argument(format!("{name} is NULL")))
}

/// Reads the optional `address_semantics` argument (any text, checked where §10.2 puts
/// it for the inventory `text` labelled `label`) and calls `read` with the options.
///
/// # Safety
/// As for [`optional_text_arg`].
unsafe fn with_options<T>(
    text: &[u8],
    label: &str,
    semantics: *const c_char,
    semantics_len: usize,
    read: impl FnOnce(&Options<'_>) -> weight_manifest::Result<T>,
) -> Result<T, Failure> {
    // SAFETY: forwarded caller promise.
    let semantics = unsafe { optional_text_arg(semantics, semantics_len, "address_semantics") }?;
    let value = semantics.map(|s| Value::Str(Cow::Owned(s)));
    let options = Options::default();
    let semantics = AddressSemantics::for_text(text, value.as_ref(), label, &options.limits)?;
    Ok(read(&options.with_address_semantics(semantics))?)
}

/// Parses and validates a placement manifest (`placement.parse`): `text` is `text_len`
/// bytes of JSON (NULL with length 0 is the empty text).
///
/// # Safety
/// `text` is NULL or points to `text_len` readable bytes; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_placement_parse(
    text: *const c_char,
    text_len: usize,
    out: *mut *mut WmPlacement,
) -> *mut WmError {
    // SAFETY: forwarded caller promises.
    unsafe {
        run(out, || {
            let text = bytes_arg(text, text_len, "text")?;
            Ok(WmPlacement::new(Placement::from_json(
                text,
                &Options::default(),
            )?))
        })
    }
}

/// Reads a placement inventory (`placement.from_inventory`, contract §10.5).
///
/// # Safety
/// `text` is NULL or points to `text_len` readable bytes; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_placement_from_inventory(
    text: *const c_char,
    text_len: usize,
    out: *mut *mut WmPlacement,
) -> *mut WmError {
    // SAFETY: forwarded caller promises.
    unsafe {
        run(out, || {
            let text = bytes_arg(text, text_len, "text")?;
            Ok(WmPlacement::new(Placement::from_inventory_json(
                text,
                &Options::default(),
            )?))
        })
    }
}

/// Parses and validates a runtime manifest (`runtime.parse`, contract §9.1).
///
/// # Safety
/// `text` is NULL or points to `text_len` readable bytes; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_runtime_parse(
    text: *const c_char,
    text_len: usize,
    out: *mut *mut WmRuntime,
) -> *mut WmError {
    // SAFETY: forwarded caller promises.
    unsafe {
        run(out, || {
            let text = bytes_arg(text, text_len, "text")?;
            Ok(WmRuntime::new(Runtime::from_json(
                text,
                &Options::default(),
            )?))
        })
    }
}

/// Reads a runtime inventory (`runtime.from_inventory`, contract §10.3).
/// `address_semantics` (`address_semantics_len` bytes) is the §10.2 option: NULL means not
/// given; any value but `view` is rejected with `address_semantics_invalid`.
///
/// # Safety
/// `text` and `address_semantics` are each NULL or point to as many readable bytes as
/// their length says; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_runtime_from_inventory(
    text: *const c_char,
    text_len: usize,
    address_semantics: *const c_char,
    address_semantics_len: usize,
    out: *mut *mut WmRuntime,
) -> *mut WmError {
    // SAFETY: forwarded caller promises.
    unsafe {
        run(out, || {
            let text = bytes_arg(text, text_len, "text")?;
            with_options(
                text,
                RUNTIME_INVENTORY_LABEL,
                address_semantics,
                address_semantics_len,
                |options| Runtime::from_inventory_json(text, options),
            )
            .map(WmRuntime::new)
        })
    }
}

/// Parses and validates a runtime binding manifest (`binding.parse`, contract §9.2).
///
/// # Safety
/// `text` is NULL or points to `text_len` readable bytes; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_binding_parse(
    text: *const c_char,
    text_len: usize,
    out: *mut *mut WmBinding,
) -> *mut WmError {
    // SAFETY: forwarded caller promises.
    unsafe {
        run(out, || {
            let text = bytes_arg(text, text_len, "text")?;
            Ok(WmBinding::new(Binding::from_json(
                text,
                &Options::default(),
            )?))
        })
    }
}

/// Reads a runtime binding inventory (`binding.from_inventory`, contract §10.4), with the
/// `address_semantics` option as for `wm_runtime_from_inventory`.
///
/// # Safety
/// `text` and `address_semantics` are each NULL or point to as many readable bytes as
/// their length says; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_binding_from_inventory(
    text: *const c_char,
    text_len: usize,
    address_semantics: *const c_char,
    address_semantics_len: usize,
    out: *mut *mut WmBinding,
) -> *mut WmError {
    // SAFETY: forwarded caller promises.
    unsafe {
        run(out, || {
            let text = bytes_arg(text, text_len, "text")?;
            with_options(
                text,
                BINDING_INVENTORY_LABEL,
                address_semantics,
                address_semantics_len,
                |options| Binding::from_inventory_json(text, options),
            )
            .map(WmBinding::new)
        })
    }
}

/// Projects a runtime manifest to its placement (`project.placement`, contract §11.1).
/// `placement_id` (`placement_id_len` bytes) is the expected id: NULL means not given.
///
/// # Safety
/// `runtime` is NULL or a live handle; `placement_id` is NULL or points to
/// `placement_id_len` readable bytes; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_project_placement(
    runtime: *const WmRuntime,
    placement_id: *const c_char,
    placement_id_len: usize,
    out: *mut *mut WmPlacement,
) -> *mut WmError {
    // SAFETY: forwarded caller promises.
    unsafe {
        run(out, || {
            let runtime = handle_arg(runtime, "runtime")?;
            let id = optional_text_arg(placement_id, placement_id_len, "placement_id")?;
            let placement = weight_manifest::project_placement(&runtime.inner, id.as_deref())?;
            Ok(WmPlacement::new(placement))
        })
    }
}

/// Projects a runtime manifest to its binding (`project.binding`, contract §11.2), with
/// the optional expected `placement_id` as for `wm_project_placement`.
///
/// # Safety
/// `runtime` is NULL or a live handle; `placement_id` is NULL or points to
/// `placement_id_len` readable bytes; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_project_binding(
    runtime: *const WmRuntime,
    placement_id: *const c_char,
    placement_id_len: usize,
    out: *mut *mut WmBinding,
) -> *mut WmError {
    // SAFETY: forwarded caller promises.
    unsafe {
        run(out, || {
            let runtime = handle_arg(runtime, "runtime")?;
            let id = optional_text_arg(placement_id, placement_id_len, "placement_id")?;
            let binding = weight_manifest::project_binding(&runtime.inner, id.as_deref())?;
            Ok(WmBinding::new(binding))
        })
    }
}

/// Binds a placement and a binding into a runtime manifest (`bind`, contract §12).
///
/// # Safety
/// `placement` and `binding` are each NULL or a live handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_bind(
    placement: *const WmPlacement,
    binding: *const WmBinding,
    out: *mut *mut WmRuntime,
) -> *mut WmError {
    // SAFETY: forwarded caller promises.
    unsafe {
        run(out, || {
            let placement = handle_arg(placement, "placement")?;
            let binding = handle_arg(binding, "binding")?;
            let runtime = weight_manifest::bind(&placement.inner, &binding.inner)?;
            Ok(WmRuntime::new(runtime))
        })
    }
}
