//! Strings handed to C: NUL-terminated for convenience and with an explicit length,
//! because a message or a document may itself contain a NUL character.

use std::ffi::c_char;

/// An owned string with a NUL byte after its last byte.
#[derive(Debug)]
pub(crate) struct CText {
    /// The bytes followed by one NUL byte.
    bytes: Box<[u8]>,
}

impl CText {
    /// Copies `text` and appends the NUL byte.
    pub(crate) fn new(text: &str) -> CText {
        let mut bytes = Vec::with_capacity(text.len().saturating_add(1));
        bytes.extend_from_slice(text.as_bytes());
        bytes.push(0);
        CText {
            bytes: bytes.into_boxed_slice(),
        }
    }

    /// The text without the NUL byte.
    pub(crate) fn as_str(&self) -> &str {
        let text = self.bytes.split_last().map_or(&[][..], |(_, text)| text);
        std::str::from_utf8(text).unwrap_or_default()
    }

    /// Returns the pointer to the first byte and stores the length (without the NUL
    /// byte) in `len` unless it is NULL.
    ///
    /// # Safety
    /// `len` is NULL or valid for a write of one `usize`.
    pub(crate) unsafe fn expose(&self, len: *mut usize) -> *const c_char {
        // SAFETY: the caller promises `len` is NULL or writable; `as_mut` checks NULL.
        if let Some(len) = unsafe { len.as_mut() } {
            *len = self.bytes.len().saturating_sub(1);
        }
        self.bytes.as_ptr().cast()
    }
}

/// Stores 0 in `len` unless it is NULL and returns NULL: the answer of an accessor given
/// a NULL handle.
///
/// # Safety
/// `len` is NULL or valid for a write of one `usize`.
pub(crate) unsafe fn expose_none(len: *mut usize) -> *const c_char {
    // SAFETY: the caller promises `len` is NULL or writable; `as_mut` checks NULL.
    if let Some(len) = unsafe { len.as_mut() } {
        *len = 0;
    }
    std::ptr::null()
}

/// The bytes of a C argument `(ptr, len)`: `(NULL, 0)` is the empty text.
///
/// # Safety
/// Unless `ptr` is NULL, it points to `len` readable bytes that stay unchanged for `'a`.
pub(crate) unsafe fn bytes_arg<'a>(
    ptr: *const c_char,
    len: usize,
    name: &str,
) -> Result<&'a [u8], String> {
    if ptr.is_null() {
        return if len == 0 {
            Ok(&[])
        } else {
            Err(format!("{name} is NULL but its length is {len}"))
        };
    }
    if isize::try_from(len).is_err() {
        return Err(format!("{name} length {len} is too large"));
    }
    // SAFETY: `ptr` is non-NULL and, by the caller's promise, points to `len` readable,
    // unchanging bytes; `len` fits in `isize` (checked above).
    Ok(unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len) })
}

/// An optional C string argument `(ptr, len)`: NULL means "not given". Bytes that are not
/// UTF-8 are replaced (such a value can never equal a valid one, so it is rejected by the
/// check that follows, as any other wrong value).
///
/// # Safety
/// As for [`bytes_arg`].
pub(crate) unsafe fn optional_text_arg(
    ptr: *const c_char,
    len: usize,
    name: &str,
) -> Result<Option<String>, String> {
    if ptr.is_null() {
        return Ok(None);
    }
    // SAFETY: forwarded caller promise.
    let bytes = unsafe { bytes_arg(ptr, len, name) }?;
    Ok(Some(String::from_utf8_lossy(bytes).into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ctext_has_length_and_nul() {
        let text = CText::new("a\0b");
        let mut len = 99;
        // SAFETY: `len` is a valid local.
        let ptr = unsafe { text.expose(&raw mut len) };
        assert_eq!(len, 3);
        // SAFETY: `expose` points to len + 1 bytes owned by `text`.
        let bytes = unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), 4) };
        assert_eq!(bytes, b"a\0b\0");
        assert_eq!(text.as_str(), "a\0b");
        // SAFETY: NULL `len` is allowed.
        assert!(!unsafe { text.expose(std::ptr::null_mut()) }.is_null());
    }

    #[test]
    fn arguments() {
        // SAFETY: NULL pointers and a live local slice.
        unsafe {
            assert_eq!(bytes_arg(std::ptr::null(), 0, "text"), Ok(&[][..]));
            assert!(bytes_arg(std::ptr::null(), 1, "text").is_err());
            let data = b"view\xff";
            assert_eq!(bytes_arg(data.as_ptr().cast(), 4, "t"), Ok(&b"view"[..]));
            assert!(bytes_arg(data.as_ptr().cast(), usize::MAX, "t").is_err());
            assert_eq!(optional_text_arg(std::ptr::null(), 5, "o"), Ok(None));
            assert_eq!(
                optional_text_arg(data.as_ptr().cast(), 5, "o"),
                Ok(Some("view\u{fffd}".to_owned()))
            );
        }
    }
}
