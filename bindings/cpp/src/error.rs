//! The error object handed to C: a code (as `WmCode` and as its name), a message and,
//! where the contract defines one, a JSON pointer into the input document; an
//! `invalid_json` rejection also has the line, column and byte offset where the text
//! breaks; a rejection with numbers behind it has them as a JSON object and as one line
//! (the core's `Detail`).

use std::ffi::c_char;

use crate::code::WmCode;
use crate::guard::guard;
use crate::text::{expose_none, CText};
use weight_manifest::error::JsonLocation;

/// A rejection or a failed call. Opaque: read it with the `wm_error_*` accessors and free
/// it with `wm_error_free`.
#[derive(Debug)]
pub struct WmError {
    code: WmCode,
    name: CText,
    message: CText,
    path: Option<CText>,
    location: Option<JsonLocation>,
    detail_json: Option<CText>,
    detail_summary: Option<CText>,
}

impl WmError {
    /// A contract rejection from the core.
    pub(crate) fn from_core(error: &weight_manifest::Error) -> WmError {
        WmError {
            code: WmCode::from_core(error.code()),
            name: CText::new(error.code().as_str()),
            message: CText::new(error.message()),
            path: error.path().map(CText::new),
            location: error.json_location(),
            detail_json: detail(error).map(|d| CText::new(&d.to_json())),
            detail_summary: detail(error).map(|d| CText::new(&d.summary())),
        }
    }

    /// An error of the C ABI itself (`invalid_argument`, `internal_error`).
    pub(crate) fn abi(code: WmCode, message: &str) -> WmError {
        WmError {
            code,
            name: CText::new(code.name().to_str().unwrap_or_default()),
            message: CText::new(message),
            path: None,
            location: None,
            detail_json: None,
            detail_summary: None,
        }
    }

    /// The code.
    pub fn code(&self) -> WmCode {
        self.code
    }

    /// The code's name.
    pub fn name(&self) -> &str {
        self.name.as_str()
    }

    /// The message.
    pub fn message(&self) -> &str {
        self.message.as_str()
    }

    /// The JSON pointer, if any.
    pub fn path(&self) -> Option<&str> {
        self.path.as_ref().map(CText::as_str)
    }

    /// Where the text breaks, for an `invalid_json` rejection.
    pub fn json_location(&self) -> Option<JsonLocation> {
        self.location
    }

    /// The detail as a JSON object, if any.
    pub fn detail_json(&self) -> Option<&str> {
        self.detail_json.as_ref().map(CText::as_str)
    }

    /// The detail as one line, if any.
    pub fn detail_summary(&self) -> Option<&str> {
        self.detail_summary.as_ref().map(CText::as_str)
    }

    /// Moves the error to the heap for C.
    pub(crate) fn into_raw(self) -> *mut WmError {
        Box::into_raw(Box::new(self))
    }
}

/// The error's code; `WM_CODE_OK` for a NULL error (NULL means success).
///
/// # Safety
/// `error` is NULL or a live error returned by this library.
#[no_mangle]
pub unsafe extern "C" fn wm_error_code(error: *const WmError) -> WmCode {
    guard(WmCode::InternalError, || {
        // SAFETY: the caller promises `error` is NULL or live; `as_ref` checks NULL.
        unsafe { error.as_ref() }.map_or(WmCode::Ok, WmError::code)
    })
}

/// The error's code as its NUL-terminated wire name (`"fragment_overlap"`), owned by the
/// error; `"ok"` for a NULL error.
///
/// # Safety
/// `error` is NULL or a live error returned by this library.
#[no_mangle]
pub unsafe extern "C" fn wm_error_code_name(error: *const WmError) -> *const c_char {
    guard(std::ptr::null(), || {
        // SAFETY: the caller promises `error` is NULL or live; `as_ref` checks NULL.
        match unsafe { error.as_ref() } {
            // SAFETY: a NULL length pointer is allowed.
            Some(error) => unsafe { error.name.expose(std::ptr::null_mut()) },
            None => WmCode::Ok.name().as_ptr(),
        }
    })
}

/// The message (for people), NUL-terminated and owned by the error; its length in bytes
/// (the message may contain NUL characters) is stored in `len` unless `len` is NULL.
/// Returns NULL for a NULL error.
///
/// # Safety
/// `error` is NULL or a live error returned by this library; `len` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_error_message(error: *const WmError, len: *mut usize) -> *const c_char {
    guard(std::ptr::null(), || {
        // SAFETY: the caller promises `error` is NULL or live and `len` NULL or writable.
        unsafe {
            match error.as_ref() {
                Some(error) => error.message.expose(len),
                None => expose_none(len),
            }
        }
    })
}

/// The RFC 6901 JSON pointer into the input document (`""` is the whole document),
/// NUL-terminated and owned by the error, with its length in `len` unless `len` is NULL;
/// NULL when the error has no location (or the error is NULL).
///
/// # Safety
/// `error` is NULL or a live error returned by this library; `len` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_error_path(error: *const WmError, len: *mut usize) -> *const c_char {
    // SAFETY: the caller makes this function's promises about `error` and `len`.
    unsafe { expose_member(error, len, |e| e.path.as_ref()) }
}

/// The numbers behind a rejection as a compact JSON object (keys sorted), e.g.
/// `{"expected":32,"got":31,"other":null}` for an `nbytes_mismatch`, NUL-terminated and
/// owned by the error, with its length in `len` unless `len` is NULL; NULL when the error
/// has no detail (or the error is NULL). Its members per rule are in docs/contract.md
/// ("Error locations"); pointers in it are into the same document as `wm_error_path`.
///
/// # Safety
/// `error` is NULL or a live error returned by this library; `len` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_error_detail_json(
    error: *const WmError,
    len: *mut usize,
) -> *const c_char {
    // SAFETY: the caller makes this function's promises about `error` and `len`.
    unsafe { expose_member(error, len, |e| e.detail_json.as_ref()) }
}

/// The detail as one line for people (e.g. `expected 32, got 31`), NUL-terminated and
/// owned by the error, with its length in `len` unless `len` is NULL; NULL when the error
/// has no detail (or the error is NULL).
///
/// # Safety
/// `error` is NULL or a live error returned by this library; `len` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_error_detail_summary(
    error: *const WmError,
    len: *mut usize,
) -> *const c_char {
    // SAFETY: the caller makes this function's promises about `error` and `len`.
    unsafe { expose_member(error, len, |e| e.detail_summary.as_ref()) }
}

/// Where the text stops being JSON, for an `invalid_json` rejection: stores the line
/// (1-based), the column (1-based, counted in characters, i.e. Unicode scalar values, from
/// the start of the line) and the byte offset (0-based) of the first offending byte (the
/// length of the text when it ends early; for text that is not UTF-8, the first byte of
/// the first ill-formed sequence) in each of `line`, `column`, `offset` that is not NULL,
/// and returns true. Lines end at LF only. Returns false, writing nothing, for any other
/// error and for a NULL error.
///
/// # Safety
/// `error` is NULL or a live error returned by this library; `line`, `column` and
/// `offset` are each NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_error_json_location(
    error: *const WmError,
    line: *mut u64,
    column: *mut u64,
    offset: *mut u64,
) -> bool {
    guard(false, || {
        // SAFETY: the caller promises `error` is NULL or live; `as_ref` checks NULL.
        let Some(at) = unsafe { error.as_ref() }.and_then(WmError::json_location) else {
            return false;
        };
        for (out, value) in [(line, at.line), (column, at.column), (offset, at.offset)] {
            // SAFETY: the caller promises each pointer is NULL or writable; `as_mut`
            // checks NULL.
            if let Some(out) = unsafe { out.as_mut() } {
                *out = value;
            }
        }
        true
    })
}

/// One optional text member of `error`, exposed to C (NULL when absent or `error` is NULL).
///
/// # Safety
/// `error` is NULL or a live error returned by this library; `len` is NULL or writable.
unsafe fn expose_member(
    error: *const WmError,
    len: *mut usize,
    member: fn(&WmError) -> Option<&CText>,
) -> *const c_char {
    guard(std::ptr::null(), || {
        // SAFETY: the caller promises `error` is NULL or live and `len` NULL or writable.
        unsafe {
            match error.as_ref().and_then(member) {
                Some(text) => text.expose(len),
                None => expose_none(len),
            }
        }
    })
}

/// A rejection's detail, except `invalid_json`'s location (see `wm_error_json_location`).
fn detail(error: &weight_manifest::Error) -> Option<&weight_manifest::Detail> {
    error
        .detail()
        .filter(|d| !matches!(d, weight_manifest::Detail::JsonLocation(_)))
}

/// Frees an error. NULL is allowed (and does nothing).
///
/// # Safety
/// `error` is NULL or an error returned by this library and not yet freed; it is not used
/// afterwards.
#[no_mangle]
pub unsafe extern "C" fn wm_error_free(error: *mut WmError) {
    if !error.is_null() {
        // SAFETY: the caller hands over an error this library allocated with `Box`.
        let error = unsafe { Box::from_raw(error) };
        guard((), || drop(error));
    }
}
