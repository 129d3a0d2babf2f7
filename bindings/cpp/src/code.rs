//! The error codes as a C enum: `WmCode` is generated into `code_table.rs` from the
//! core's `Code::ALL` by `weight-manifest-codegen` (numbering: `WM_CODE_OK` is 0, the
//! code at index `i` of `Code::ALL` is `i + 1`, the C ABI's own codes are 1000 and up).
//! This module adds the lookup by number and checks the table against the core.

use std::ffi::c_char;

use weight_manifest::Code;

pub use crate::code_table::WmCode;
use crate::guard::guard;

impl WmCode {
    /// Every value of the enum, in numeric order.
    pub fn all() -> impl Iterator<Item = WmCode> {
        std::iter::once(WmCode::Ok)
            .chain(Code::ALL.iter().map(|&code| WmCode::from_core(code)))
            .chain([WmCode::InvalidArgument, WmCode::InternalError])
    }
}

/// The NUL-terminated name of a code number (`"fragment_overlap"` for
/// `WM_CODE_FRAGMENT_OVERLAP`), or NULL for a number that is no code. The string is static:
/// never free it.
#[no_mangle]
pub extern "C" fn wm_code_name(code: u32) -> *const c_char {
    guard(std::ptr::null(), || {
        WmCode::all()
            .find(|c| *c as u32 == code)
            .map_or(std::ptr::null(), |c| c.name().as_ptr())
    })
}

#[cfg(test)]
mod tests {
    use std::ffi::CStr;

    use super::*;

    /// The table follows `Code::ALL`: number 1 + index, the same spelling, no gaps (a code
    /// missing from the table would map to `InternalError` and fail here).
    #[test]
    fn codes_follow_the_core_table() {
        for (index, &code) in Code::ALL.iter().enumerate() {
            let c = WmCode::from_core(code);
            assert_eq!(
                c as usize,
                index + 1,
                "{code}: run `cargo run -p weight-manifest-codegen`"
            );
            assert_eq!(c.name().to_str().unwrap(), code.as_str());
        }
        // The contract's table is first, so its numbers are fixed.
        assert_eq!(WmCode::from_core(Code::InvalidJson) as u32, 1);
        assert_eq!(WmCode::from_core(Code::FragmentOverlap) as u32, 33);
        assert_eq!(WmCode::from_core(Code::BindingNbytesMismatch) as u32, 57);
    }

    #[test]
    fn names_by_number() {
        // SAFETY: `wm_code_name` returns NULL or a pointer to a static C string.
        let name = |n: u32| unsafe {
            let p = wm_code_name(n);
            (!p.is_null()).then(|| CStr::from_ptr(p).to_str().unwrap().to_owned())
        };
        assert_eq!(name(0).as_deref(), Some("ok"));
        assert_eq!(name(1).as_deref(), Some("invalid_json"));
        assert_eq!(name(33).as_deref(), Some("fragment_overlap"));
        assert_eq!(name(57).as_deref(), Some("binding_nbytes_mismatch"));
        let past = u32::try_from(Code::ALL.len()).unwrap() + 1;
        assert_eq!(name(past), None);
        assert_eq!(name(999), None);
        assert_eq!(name(1000).as_deref(), Some("invalid_argument"));
        assert_eq!(name(1001).as_deref(), Some("internal_error"));
        assert_eq!(name(u32::MAX), None);
    }
}
