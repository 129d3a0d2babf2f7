//! The C ABI driven from Rust, as a C caller would, checked against the core.

use std::ffi::{c_char, CStr};
use std::ptr::{null, null_mut};

use super::*;
use weight_manifest::{Options, Placement, Runtime};

const EXAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/moe-ep-pp");

fn example(name: &str) -> Vec<u8> {
    std::fs::read(format!("{EXAMPLE}/{name}")).unwrap()
}

/// A borrowed `(pointer, length)` string as Rust text.
///
/// # Safety
/// `ptr` is NULL or points to `len` bytes.
unsafe fn text(ptr: *const c_char, len: usize) -> Option<String> {
    // SAFETY: forwarded caller promise.
    (!ptr.is_null()).then(|| unsafe {
        String::from_utf8(std::slice::from_raw_parts(ptr.cast::<u8>(), len).to_vec()).unwrap()
    })
}

/// The code, name, message and path of an error, which is then freed.
fn take(error: *mut WmError) -> (WmCode, String, String, Option<String>) {
    assert!(!error.is_null(), "expected an error");
    // SAFETY: `error` is a live error from the library; it is freed once, at the end.
    unsafe {
        let (mut message_len, mut path_len) = (0, 0);
        let message = wm_error_message(error, &raw mut message_len);
        let path = wm_error_path(error, &raw mut path_len);
        let result = (
            wm_error_code(error),
            CStr::from_ptr(wm_error_code_name(error))
                .to_str()
                .unwrap()
                .to_owned(),
            text(message, message_len).unwrap(),
            text(path, path_len),
        );
        wm_error_free(error);
        result
    }
}

fn parse(bytes: &[u8]) -> Result<*mut WmPlacement, (WmCode, String, String, Option<String>)> {
    let mut out = null_mut();
    // SAFETY: a live slice and a local out pointer.
    let error = unsafe { wm_placement_parse(bytes.as_ptr().cast(), bytes.len(), &raw mut out) };
    if error.is_null() {
        assert!(!out.is_null());
        Ok(out)
    } else {
        assert!(out.is_null());
        Err(take(error))
    }
}

#[test]
fn placement_parse_matches_the_core() {
    let bytes = example("placement.json");
    let core = Placement::from_json(&bytes, &Options::default()).unwrap();
    let handle = parse(&bytes).unwrap();
    // SAFETY: `handle` is live until freed at the end; the lengths are locals.
    unsafe {
        let mut len = 0;
        let id = wm_placement_id(handle, &raw mut len);
        assert_eq!(text(id, len).unwrap(), core.placement_id());
        assert_eq!(CStr::from_ptr(id).to_str().unwrap(), core.placement_id());
        let digest = wm_placement_digest(handle, &raw mut len);
        assert_eq!(text(digest, len).unwrap(), core.digest());
        let canonical = wm_placement_canonical(handle, &raw mut len);
        assert_eq!(text(canonical, len).unwrap(), core.to_json());
        // The same pointer on every call: the text is rendered once.
        assert_eq!(wm_placement_canonical(handle, null_mut()), canonical);
        wm_placement_free(handle);
    }
}

#[test]
fn rejections_carry_code_message_and_path() {
    let (code, name, message, path) = parse(b"{\"a\":1,\"a\":2}").unwrap_err();
    assert_eq!(
        (code, name.as_str()),
        (WmCode::DuplicateKey, "duplicate_key")
    );
    assert!(message.contains("duplicate"), "{message}");
    assert_eq!(path.as_deref(), Some("/a"), "the repeated member");

    let bad = br#"{"fragments":[],"model_id":"","placement_id":null,"revision":"r","tensors":[]}"#;
    let (code, _, _, path) = parse(bad).unwrap_err();
    assert_eq!(code, WmCode::EmptyString);
    assert_eq!(path.as_deref(), Some("/model_id"));
}

#[test]
fn bytes_that_are_not_utf8_are_invalid_json() {
    let (code, name, _, _) = parse(b"{\"model_id\":\"\xff\"}").unwrap_err();
    assert_eq!((code, name.as_str()), (WmCode::InvalidJson, "invalid_json"));
    // NULL with length 0 is the empty text: invalid JSON, not a bad argument.
    let mut out = null_mut();
    // SAFETY: NULL text with length 0 is allowed; `out` is a local.
    let error = unsafe { wm_placement_parse(null(), 0, &raw mut out) };
    assert_eq!(take(error).0, WmCode::InvalidJson);
}

#[test]
fn invalid_json_carries_its_location() {
    let located = |bytes: &[u8]| {
        let mut out = null_mut();
        // SAFETY: a live slice and a local out pointer.
        let error = unsafe { wm_placement_parse(bytes.as_ptr().cast(), bytes.len(), &raw mut out) };
        assert!(!error.is_null());
        let (mut line, mut column, mut offset) = (0, 0, 0);
        // SAFETY: a live error and local out pointers; NULL pointers are allowed.
        let found = unsafe {
            assert_eq!(
                wm_error_json_location(error, &raw mut line, null_mut(), null_mut()),
                wm_error_json_location(error, &raw mut line, &raw mut column, &raw mut offset)
            );
            wm_error_json_location(error, &raw mut line, &raw mut column, &raw mut offset)
        };
        let (code, _, message, path) = take(error);
        (code, message, path, found.then_some((line, column, offset)))
    };
    assert_eq!(
        located("{\n  \"é\": tru!".as_bytes()),
        (
            WmCode::InvalidJson,
            "placement manifest is not valid JSON".to_owned(),
            None,
            Some((2, 11, 13))
        )
    );
    assert_eq!(located(b"{\"model_id\":\"\xff\"}").3, Some((1, 14, 13)));
    assert_eq!(located(b"[]").3, None);
    // SAFETY: a NULL error is allowed.
    assert!(!unsafe { wm_error_json_location(null(), null_mut(), null_mut(), null_mut()) });
}

#[test]
fn unusable_arguments_are_invalid_argument() {
    let mut out = std::ptr::dangling_mut::<WmPlacement>(); // overwritten with NULL
                                                           // SAFETY: NULL text with a length is reported, not read; `out` is a local.
    let error = unsafe { wm_placement_parse(null(), 3, &raw mut out) };
    assert!(out.is_null());
    let (code, name, message, path) = take(error);
    assert_eq!(
        (code, name.as_str(), path),
        (WmCode::InvalidArgument, "invalid_argument", None)
    );
    assert!(message.contains("NULL"), "{message}");
    // SAFETY: a NULL out pointer is reported, not written.
    let error = unsafe { wm_placement_parse(c"{}".as_ptr(), 2, null_mut()) };
    assert_eq!(take(error).0, WmCode::InvalidArgument);
    let mut runtime = null_mut();
    // SAFETY: NULL handles are reported, not read.
    let error = unsafe { wm_bind(null(), null(), &raw mut runtime) };
    assert_eq!(take(error).0, WmCode::InvalidArgument);
    // SAFETY: as above.
    let error = unsafe { wm_project_placement(null(), null(), 0, &raw mut out) };
    assert_eq!(take(error).0, WmCode::InvalidArgument);
}

#[test]
fn null_handles_and_errors_are_harmless() {
    // SAFETY: every function accepts NULL handles and NULL length pointers.
    unsafe {
        let mut len = 7;
        assert!(wm_placement_id(null(), &raw mut len).is_null());
        assert_eq!(len, 0);
        assert!(wm_runtime_json(null(), null_mut()).is_null());
        assert!(wm_binding_json(null(), null_mut()).is_null());
        assert!(!wm_runtime_generation(null(), null_mut()));
        assert_eq!(wm_error_code(null()), WmCode::Ok);
        assert_eq!(CStr::from_ptr(wm_error_code_name(null())), c"ok");
        assert!(wm_error_message(null(), null_mut()).is_null());
        assert!(wm_error_path(null(), null_mut()).is_null());
        wm_placement_free(null_mut());
        wm_runtime_free(null_mut());
        wm_binding_free(null_mut());
        wm_error_free(null_mut());
        assert_eq!(
            CStr::from_ptr(wm_version()).to_str().unwrap(),
            env!("CARGO_PKG_VERSION")
        );
    }
}

/// Runtime inventory -> project placement and binding -> bind, as the CLI's example does.
#[test]
fn project_and_bind_round_trip() {
    let runtime_text = example("runtime-inventory.json");
    let view = "view";
    // SAFETY: live slices and local out pointers; every handle is freed once.
    unsafe {
        let mut runtime = null_mut();
        let error = wm_runtime_from_inventory(
            runtime_text.as_ptr().cast(),
            runtime_text.len(),
            view.as_ptr().cast(),
            view.len(),
            &raw mut runtime,
        );
        assert!(error.is_null(), "{:?}", take(error));
        let core =
            Runtime::from_inventory_json(&runtime_text, &weight_manifest::Options::view()).unwrap();
        let mut generation = 0;
        assert_eq!(
            wm_runtime_generation(runtime, &raw mut generation),
            core.generation().is_some()
        );
        assert_eq!(Some(generation), core.generation());

        let mut placement = null_mut();
        assert!(wm_project_placement(runtime, null(), 0, &raw mut placement).is_null());
        let mut binding = null_mut();
        assert!(wm_project_binding(runtime, null(), 0, &raw mut binding).is_null());
        let mut bound = null_mut();
        assert!(wm_bind(placement, binding, &raw mut bound).is_null());
        let mut len = 0;
        let json = text(wm_runtime_json(bound, &raw mut len), len).unwrap();
        let expected = weight_manifest::bind(
            &weight_manifest::project_placement(&core, None).unwrap(),
            &weight_manifest::project_binding(&core, None).unwrap(),
        )
        .unwrap();
        assert_eq!(json, expected.to_json());
        let binding_json = text(wm_binding_json(binding, &raw mut len), len).unwrap();
        assert_eq!(
            binding_json,
            weight_manifest::project_binding(&core, None)
                .unwrap()
                .to_json()
        );

        // A wrong expected id is rejected; an empty one is an empty string.
        let mut other = null_mut();
        let wrong = "sha256:00";
        let error =
            wm_project_placement(runtime, wrong.as_ptr().cast(), wrong.len(), &raw mut other);
        assert_eq!(take(error).0, WmCode::PlacementIdMismatch);
        let error = wm_project_placement(runtime, c"".as_ptr(), 0, &raw mut other);
        assert_eq!(take(error).0, WmCode::EmptyString);

        wm_runtime_free(bound);
        wm_binding_free(binding);
        wm_placement_free(placement);
        wm_runtime_free(runtime);
    }
}

#[test]
fn address_semantics_other_than_view_is_rejected() {
    let text = example("binding-inventory.json");
    for semantics in ["View", "", "view\u{0}"] {
        let mut out = null_mut();
        // SAFETY: live slices and a local out pointer.
        let error = unsafe {
            wm_binding_from_inventory(
                text.as_ptr().cast(),
                text.len(),
                semantics.as_ptr().cast(),
                semantics.len(),
                &raw mut out,
            )
        };
        assert_eq!(
            take(error).0,
            WmCode::AddressSemanticsInvalid,
            "{semantics:?}"
        );
    }
}

/// The C++ wrapper documents handles as readable from several threads at once.
#[test]
fn handles_and_errors_may_cross_threads() {
    fn shared<T: Send + Sync>() {}
    shared::<WmPlacement>();
    shared::<WmRuntime>();
    shared::<WmBinding>();
    shared::<WmError>();
}
