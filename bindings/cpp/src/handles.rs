//! The result handles: a validated placement, runtime manifest or binding manifest, with
//! their JSON text rendered once, on first request, and kept for the handle's lifetime.
//!
//! Handles are immutable: the accessors may be called from several threads at once.

use std::ffi::c_char;
use std::sync::OnceLock;

use weight_manifest::{Binding, Placement, Runtime};

use crate::guard::guard;
use crate::text::{expose_none, CText};

/// A validated placement manifest. Opaque; free it with `wm_placement_free`.
#[derive(Debug)]
pub struct WmPlacement {
    pub(crate) inner: Placement,
    canonical: OnceLock<CText>,
    id: CText,
    digest: CText,
}

/// A validated runtime manifest. Opaque; free it with `wm_runtime_free`.
#[derive(Debug)]
pub struct WmRuntime {
    pub(crate) inner: Runtime,
    json: OnceLock<CText>,
}

/// A validated runtime binding manifest. Opaque; free it with `wm_binding_free`.
#[derive(Debug)]
pub struct WmBinding {
    pub(crate) inner: Binding,
    json: OnceLock<CText>,
}

impl WmPlacement {
    pub(crate) fn new(inner: Placement) -> WmPlacement {
        WmPlacement {
            id: CText::new(inner.placement_id()),
            digest: CText::new(inner.digest()),
            canonical: OnceLock::new(),
            inner,
        }
    }

    fn canonical(&self) -> &CText {
        self.canonical
            .get_or_init(|| CText::new(&self.inner.to_json()))
    }
}

impl WmRuntime {
    pub(crate) fn new(inner: Runtime) -> WmRuntime {
        WmRuntime {
            inner,
            json: OnceLock::new(),
        }
    }

    fn json(&self) -> &CText {
        self.json.get_or_init(|| CText::new(&self.inner.to_json()))
    }
}

impl WmBinding {
    pub(crate) fn new(inner: Binding) -> WmBinding {
        WmBinding {
            inner,
            json: OnceLock::new(),
        }
    }

    fn json(&self) -> &CText {
        self.json.get_or_init(|| CText::new(&self.inner.to_json()))
    }
}

/// Runs an accessor that exposes a string of a handle: NULL handle, NULL result.
///
/// # Safety
/// `handle` is NULL or live for the call; `len` is NULL or writable.
pub(crate) unsafe fn expose<H>(
    handle: *const H,
    len: *mut usize,
    text: impl FnOnce(&H) -> &CText,
) -> *const c_char {
    // SAFETY: forwarded caller promises; `as_ref` checks NULL.
    let run = || unsafe {
        match handle.as_ref() {
            Some(handle) => text(handle).expose(len),
            None => expose_none(len),
        }
    };
    // SAFETY: as above, for the panic path.
    guard_or(run, || unsafe { expose_none(len) })
}

fn guard_or<T>(body: impl FnOnce() -> T, on_panic: impl FnOnce() -> T) -> T {
    match crate::guard::guard_error(body) {
        Ok(value) => value,
        Err(_) => on_panic(),
    }
}

/// Frees a handle allocated by this library; NULL does nothing.
///
/// # Safety
/// `handle` is NULL or an unfreed handle of this type allocated with `Box`.
pub(crate) unsafe fn free<H>(handle: *mut H) {
    if !handle.is_null() {
        // SAFETY: the caller hands over a `Box` this library allocated.
        let handle = unsafe { Box::from_raw(handle) };
        guard((), || drop(handle));
    }
}

/// The canonical placement JSON (contract §6.1: ASCII, no whitespace, no trailing
/// newline), NUL-terminated and owned by the handle; its length in `len` unless NULL.
/// NULL for a NULL handle.
///
/// # Safety
/// `placement` is NULL or a live handle; `len` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_placement_canonical(
    placement: *const WmPlacement,
    len: *mut usize,
) -> *const c_char {
    // SAFETY: forwarded caller promises.
    unsafe { expose(placement, len, WmPlacement::canonical) }
}

/// The `placement_id` (`sha256:<hex>`), NUL-terminated and owned by the handle; its length
/// in `len` unless NULL. NULL for a NULL handle.
///
/// # Safety
/// `placement` is NULL or a live handle; `len` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_placement_id(
    placement: *const WmPlacement,
    len: *mut usize,
) -> *const c_char {
    // SAFETY: forwarded caller promises.
    unsafe { expose(placement, len, |p| &p.id) }
}

/// The `digest` (64 lowercase hex digits), NUL-terminated and owned by the handle; its
/// length in `len` unless NULL. NULL for a NULL handle.
///
/// # Safety
/// `placement` is NULL or a live handle; `len` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_placement_digest(
    placement: *const WmPlacement,
    len: *mut usize,
) -> *const c_char {
    // SAFETY: forwarded caller promises.
    unsafe { expose(placement, len, |p| &p.digest) }
}

/// Frees a placement; NULL does nothing.
///
/// # Safety
/// `placement` is NULL or a placement from this library, not yet freed, not used after.
#[no_mangle]
pub unsafe extern "C" fn wm_placement_free(placement: *mut WmPlacement) {
    // SAFETY: forwarded caller promise.
    unsafe { free(placement) }
}

/// The runtime manifest as canonical JSON text, NUL-terminated and owned by the handle;
/// its length in `len` unless NULL. NULL for a NULL handle.
///
/// # Safety
/// `runtime` is NULL or a live handle; `len` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_runtime_json(
    runtime: *const WmRuntime,
    len: *mut usize,
) -> *const c_char {
    // SAFETY: forwarded caller promises.
    unsafe { expose(runtime, len, WmRuntime::json) }
}

/// Whether the runtime manifest has a generation; if so and `generation` is not NULL,
/// stores it there. False for a NULL handle.
///
/// # Safety
/// `runtime` is NULL or a live handle; `generation` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_runtime_generation(
    runtime: *const WmRuntime,
    generation: *mut u64,
) -> bool {
    guard(false, || {
        // SAFETY: the caller promises both pointers are NULL or valid; `as_*` check NULL.
        let (runtime, out) = unsafe { (runtime.as_ref(), generation.as_mut()) };
        match runtime.and_then(|r| r.inner.generation()) {
            Some(value) => {
                if let Some(out) = out {
                    *out = value;
                }
                true
            }
            None => false,
        }
    })
}

/// Frees a runtime manifest; NULL does nothing.
///
/// # Safety
/// `runtime` is NULL or a runtime from this library, not yet freed, not used after.
#[no_mangle]
pub unsafe extern "C" fn wm_runtime_free(runtime: *mut WmRuntime) {
    // SAFETY: forwarded caller promise.
    unsafe { free(runtime) }
}

/// The binding manifest as canonical JSON text, NUL-terminated and owned by the handle;
/// its length in `len` unless NULL. NULL for a NULL handle.
///
/// # Safety
/// `binding` is NULL or a live handle; `len` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_binding_json(
    binding: *const WmBinding,
    len: *mut usize,
) -> *const c_char {
    // SAFETY: forwarded caller promises.
    unsafe { expose(binding, len, WmBinding::json) }
}

/// Frees a binding manifest; NULL does nothing.
///
/// # Safety
/// `binding` is NULL or a binding from this library, not yet freed, not used after.
#[no_mangle]
pub unsafe extern "C" fn wm_binding_free(binding: *mut WmBinding) {
    // SAFETY: forwarded caller promise.
    unsafe { free(binding) }
}
