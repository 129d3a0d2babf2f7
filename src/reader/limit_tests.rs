//! Unit tests of the reader's limits: depth, string length and document size, each
//! `limit_exceeded` with the limit named in the message and the pointer of the element
//! that crosses it.

use super::{read, read_str, MAX_DEPTH};
use crate::code::Code;
use crate::limits::Limits;

const LABEL: &str = "placement manifest";

/// A `limit_exceeded` error: code, message, pointer.
fn limit(text: &str, limits: &Limits) -> (Code, String, Option<String>) {
    match read_str(text, LABEL, limits) {
        Ok(value) => panic!("{text:?} accepted as {value:?}"),
        Err(error) => (
            error.code(),
            error.message().to_owned(),
            error.path().map(str::to_owned),
        ),
    }
}

fn nested_arrays(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

fn nested_objects(depth: usize) -> String {
    format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth))
}

#[test]
fn nesting_is_limited_without_recursion() {
    let defaults = Limits::default();
    assert_eq!(defaults.max_depth, 128);
    let message = "document nesting depth exceeds max_depth (128)".to_owned();
    assert!(read_str(&nested_arrays(128), LABEL, &crate::Limits::default()).is_ok());
    assert!(read_str(&nested_objects(128), LABEL, &crate::Limits::default()).is_ok());
    let zeros = "/0".repeat(128);
    let keys = "/a".repeat(128);
    assert_eq!(
        limit(&nested_arrays(129), &defaults),
        (Code::LimitExceeded, message.clone(), Some(zeros.clone()))
    );
    assert_eq!(
        limit(&nested_objects(129), &defaults),
        (Code::LimitExceeded, message.clone(), Some(keys.clone()))
    );
    // A million open containers: rejected at depth 129, long before the end of the text.
    assert_eq!(
        limit(&"[".repeat(1_000_000), &defaults),
        (Code::LimitExceeded, message.clone(), Some(zeros))
    );
    assert_eq!(
        limit(&"{\"a\":".repeat(1_000_000), &defaults),
        (Code::LimitExceeded, message, Some(keys))
    );
    // The ceiling: a limit can raise the depth to MAX_DEPTH, never above.
    let ceiling = Limits {
        max_depth: usize::MAX,
        ..defaults
    };
    assert!(read_str(&nested_arrays(MAX_DEPTH), LABEL, &ceiling).is_ok());
    assert_eq!(
        limit(&nested_arrays(MAX_DEPTH + 1), &ceiling).1,
        "document nesting depth exceeds max_depth (512)"
    );
}

#[test]
fn depth_pointer_names_the_container_that_crosses_the_limit() {
    let limits = Limits {
        max_depth: 3,
        ..Limits::default()
    };
    let text = r#"{"a":[1,{"b":2},{"c/~":{"d":[{}]}}]}"#;
    assert_eq!(
        limit(text, &limits),
        (
            Code::LimitExceeded,
            "document nesting depth exceeds max_depth (3)".to_owned(),
            Some("/a/2/c~1~0".to_owned())
        )
    );
    assert!(read_str(r#"{"a":[1,{"b":2},{"c":2}]}"#, LABEL, &limits).is_ok());
    // Array indexes count finished elements, across nested arrays and objects.
    assert_eq!(
        limit("[0,[1,2,[[3]]]]", &limits).2.as_deref(),
        Some("/1/2/0")
    );
    assert_eq!(
        limit(r#"[0,{"j":[],"k":[1,[2]]}]"#, &limits).2.as_deref(),
        Some("/1/k/1")
    );
    // Depth 0 rejects every container, at the root; scalars need no depth.
    let none = Limits {
        max_depth: 0,
        ..limits
    };
    assert_eq!(limit("[]", &none).2.as_deref(), Some(""));
    assert!(read_str("\"s\"", LABEL, &none).is_ok());
}

#[test]
fn string_length_is_limited_after_decoding() {
    let defaults = Limits::default();
    let at = format!("[\"{}\"]", "x".repeat(65_536));
    assert!(read_str(&at, LABEL, &crate::Limits::default()).is_ok());
    let over = format!("[1,\"{}\"]", "x".repeat(65_537));
    assert_eq!(
        limit(&over, &defaults),
        (
            Code::LimitExceeded,
            "string of 65537 bytes exceeds max_string_bytes (65536)".to_owned(),
            Some("/1".to_owned())
        )
    );
    let limits = Limits {
        max_string_bytes: 4,
        ..defaults
    };
    // Decoded UTF-8 bytes count: "\u00e9\u00e9" is 4 bytes, "ab\n\t" is 4, "ééa" is 5.
    assert!(read_str(r#"["\u00e9\u00e9","ab\n\t","abcd"]"#, LABEL, &limits).is_ok());
    assert_eq!(
        limit(r#"{"k":["ab","ééa"]}"#, &limits),
        (
            Code::LimitExceeded,
            "string of 5 bytes exceeds max_string_bytes (4)".to_owned(),
            Some("/k/1".to_owned())
        )
    );
    assert_eq!(
        limit(r#"{"k":"ab\u00e9\n"}"#, &limits).1,
        "string of 5 bytes exceeds max_string_bytes (4)"
    );
    // Member names count too, located at the object that holds them.
    assert_eq!(
        limit(r#"{"k":{"abcd":1,"abcde":2}}"#, &limits).2.as_deref(),
        Some("/k")
    );
    assert_eq!(
        limit(r#"[0,{"abcde":2}]"#, &limits).2.as_deref(),
        Some("/1")
    );
}

#[test]
fn document_size_is_checked_before_reading() {
    let limits = Limits {
        max_document_bytes: 4,
        ..Limits::default()
    };
    assert!(read(b"[10]", LABEL, &limits).is_ok());
    // Five bytes of invalid UTF-8: the size is checked first.
    let error = read(b"[\xff\xff\xff]", LABEL, &limits).unwrap_err();
    assert_eq!(
        (error.code(), error.message(), error.path()),
        (
            Code::LimitExceeded,
            "document of 5 bytes exceeds max_document_bytes (4)",
            Some("")
        )
    );
}

#[test]
fn limit_errors_come_in_text_order_with_other_reader_errors() {
    let limits = Limits {
        max_depth: 2,
        max_string_bytes: 2,
        ..Limits::default()
    };
    // An earlier syntax error wins over a later limit, and an earlier limit over a later
    // syntax error or duplicate key.
    assert_eq!(limit("[01,[[1]]]", &Limits::default()).0, Code::InvalidJson);
    assert_eq!(limit("[01,[[1]]]", &limits).0, Code::InvalidJson);
    assert_eq!(limit("[[[1]],01]", &limits).0, Code::LimitExceeded);
    assert_eq!(
        limit(r#"{"a":"abc","a":1}"#, &limits).0,
        Code::LimitExceeded
    );
}
