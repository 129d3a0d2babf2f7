//! Unit tests of the strict reader (contract §4).

use std::borrow::Cow;

use super::{read, read_str};
use crate::code::Code;
use crate::value::{Object, Value};

const LABEL: &str = "placement manifest";

fn ok(text: &str) -> Value<'_> {
    match read_str(text, LABEL, &crate::Limits::default()) {
        Ok(value) => value,
        Err(error) => panic!("{text:?} rejected: {error}"),
    }
}

fn err(text: &[u8]) -> (Code, String) {
    match read(text, LABEL, &crate::Limits::default()) {
        Ok(value) => panic!("{:?} accepted as {value:?}", String::from_utf8_lossy(text)),
        Err(error) => (error.code(), error.message().to_owned()),
    }
}

fn assert_invalid(text: &[u8]) {
    let (code, message) = err(text);
    assert_eq!(
        code,
        Code::InvalidJson,
        "{:?}",
        String::from_utf8_lossy(text)
    );
    assert_eq!(message, "placement manifest is not valid JSON");
}

fn string(value: &Value<'_>) -> Cow<'static, str> {
    match value {
        Value::Str(s) => Cow::Owned(s.to_string()),
        other => panic!("not a string: {other:?}"),
    }
}

#[test]
fn syntax_violations_are_invalid_json() {
    let cases: &[&[u8]] = &[
        b"",
        b"   ",
        b"\xef\xbb\xbf{}",
        b"{} x",
        b"{}{}",
        b"{,}",
        b"[1,]",
        b"{\"a\":1,}",
        b"['a']",
        b"{'a':1}",
        b"01",
        b"-01",
        b"-00",
        b"00",
        b"+1",
        b".5",
        b"1.",
        b"1.e3",
        b"-",
        b"1e",
        b"1e+",
        b"-.5",
        b"--1",
        b"0x10",
        b"{\"a\" 1}",
        b"{\"a\":}",
        b"{1:2}",
        b"[1 2]",
        b"/* c */ {}",
        b"{} // c",
        b"tru",
        b"nul",
        b"True",
        b"none",
        b"undefined",
        b"\"abc",
        b"\"a\x01b\"",
        b"\"\x1f\"",
        b"\"tab\there\"",
        b"\"\\x41\"",
        b"\"\\u12\"",
        b"\"\\u12G4\"",
        b"\"\\U0041\"",
        b"\"\\",
        b"[",
        b"{",
        b"{\"a\"",
        b"{\"a\":1",
        b"\x0c{}",
        b"\xa0{}",
        b"{\"a\":1}\x00",
        b"[-]",
        b"-nan",
        b"-NaN",
        b"Infinit",
        b"-Inf",
        b"nan",
    ];
    for case in cases {
        assert_invalid(case);
    }
}

#[test]
fn invalid_utf8_is_invalid_json_even_after_other_errors() {
    assert_invalid(b"\"\xff\"");
    assert_invalid(b"\"\xed\xa0\x80\"");
    assert_invalid(b"\"\xc3\"");
    // Bytes are decoded before they are parsed, as in the reference.
    assert_invalid(b"[NaN, \"\xff\"]");
}

#[test]
fn whitespace_is_space_tab_lf_cr_only() {
    assert_eq!(
        ok(" \t\r\n{ \"a\" \t:\n1 , \"b\":[ ] }\r\n")
            .as_object()
            .map(Object::len),
        Some(2)
    );
    assert_invalid(b"\x0b1");
    assert_invalid("\u{2028}1".as_bytes());
}

#[test]
fn top_level_may_be_any_value() {
    assert_eq!(ok("null"), Value::Null);
    assert_eq!(ok(" true "), Value::Bool(true));
    assert_eq!(ok("false"), Value::Bool(false));
    assert_eq!(ok("7"), Value::UInt(7));
    assert_eq!(ok("[]"), Value::Array(Vec::new()));
    assert_eq!(ok("\"s\""), Value::Str(Cow::Borrowed("s")));
}

#[test]
fn non_finite_tokens() {
    for (text, token) in [
        ("NaN", "NaN"),
        ("Infinity", "Infinity"),
        ("-Infinity", "-Infinity"),
        ("[1, NaN", "NaN"),
        ("{\"a\": -Infinity", "-Infinity"),
        ("[Infinity]x", "Infinity"),
    ] {
        let (code, message) = err(text.as_bytes());
        assert_eq!(code, Code::NonFiniteNumber, "{text}");
        assert_eq!(
            message,
            format!("non-finite JSON number is unsupported: {token}")
        );
    }
}

#[test]
fn integers_keep_exact_values() {
    assert_eq!(ok("0"), Value::UInt(0));
    assert_eq!(ok("-0"), Value::UInt(0));
    assert_eq!(ok("18446744073709551615"), Value::UInt(u64::MAX));
    assert_eq!(
        ok("18446744073709551616"),
        Value::BigUInt("18446744073709551616".into())
    );
    assert_eq!(
        ok("99999999999999999999"),
        Value::BigUInt("99999999999999999999".into())
    );
    let long = format!("1{}", "0".repeat(5000));
    assert_eq!(ok(&long), Value::BigUInt(long.as_str().into()));
    assert_eq!(ok("-1"), Value::NegInt("-1".into()));
    assert_eq!(
        ok("-18446744073709551616"),
        Value::NegInt("-18446744073709551616".into())
    );
    assert!(matches!(ok("-5"), Value::NegInt(Cow::Borrowed(_))));
}

#[test]
fn fractions_and_exponents_are_floats() {
    for text in [
        "2.0", "3.2e1", "1e400", "-0.0", "-0", "0e0", "1E+2", "1e-2", "-1.5E-07",
    ] {
        let value = ok(text);
        if text == "-0" {
            assert_eq!(value, Value::UInt(0));
        } else {
            assert_eq!(value, Value::Float(text.into()), "{text}");
        }
    }
}

#[test]
fn escapes_decode_to_scalars() {
    let value = ok(r#""\"\\\/\b\f\n\r\t\u0041\u00e9\u00E9\u03b3\ud83d\ude00\uD83D\uDE00x""#);
    assert_eq!(
        string(&value),
        "\"\\/\u{8}\u{c}\n\r\tA\u{e9}\u{e9}\u{3b3}\u{1f600}\u{1f600}x"
    );
    assert_eq!(string(&ok(r#""\u0000""#)), "\u{0}");
    assert!(matches!(
        ok("\"plain é\""),
        Value::Str(Cow::Borrowed("plain é"))
    ));
    assert!(matches!(ok(r#""a\nb""#), Value::Str(Cow::Owned(_))));
    assert_eq!(string(&ok("\"\u{7f}\u{2028}\"")), "\u{7f}\u{2028}");
}

#[test]
fn lone_and_reversed_surrogates_are_invalid() {
    for text in [
        r#""\ud800""#,
        r#""\ud800x""#,
        r#""\udc00""#,
        r#""\ude00\ud83d""#,
        r#""\ud83d\u0041""#,
        r#""\ud83d\ud83d""#,
        r#""\ud83d\n""#,
        r#""\ud83d\u00""#,
    ] {
        assert_invalid(text.as_bytes());
    }
}

#[test]
fn objects_keep_document_order() {
    let value = ok(r#"{"b":1,"a":[true,null,{"c":"d"}],"":{}}"#);
    let object = value.as_object().expect("object");
    let keys: Vec<&str> = object.iter().map(|(k, _)| k).collect();
    assert_eq!(keys, ["b", "a", ""]);
    assert_eq!(object.get("b"), Some(&Value::UInt(1)));
}

#[test]
fn duplicate_keys() {
    let cases = [
        (r#"{"a":1,"a":2}"#, "a"),
        (r#"{"a":1,"\u0061":2}"#, "a"),
        (r#"{"b":1,"a":2,"a":3,"b":4}"#, "a"),
        (r#"{"b":1,"a":2,"b":3,"a":4}"#, "b"),
        (r#"[{"x":[{"k":1,"k":1}]}]"#, "k"),
        (r#"{"é":1,"\u00e9":2}"#, "é"),
        (r#"{"a\nb":1,"a\nb":2}"#, "a\nb"),
    ];
    for (text, key) in cases {
        let (code, message) = err(text.as_bytes());
        assert_eq!(code, Code::DuplicateKey, "{text}");
        assert_eq!(message, format!("duplicate JSON field: {key}"));
    }
}

#[test]
fn duplicate_keys_in_large_objects() {
    let mut members: Vec<String> = (0..1000).map(|i| format!("\"k{i}\":{i}")).collect();
    let text = format!("{{{}}}", members.join(","));
    assert_eq!(ok(&text).as_object().map(Object::len), Some(1000));
    members.push("\"k500\":0".to_owned());
    members.push("\"k7\":0".to_owned());
    let (code, message) = err(format!("{{{}}}", members.join(",")).as_bytes());
    assert_eq!(code, Code::DuplicateKey);
    assert_eq!(message, "duplicate JSON field: k500");
}

#[test]
fn error_order_follows_section_4_5() {
    let table: [(&str, Code); 8] = [
        (r#"{"a":1,"a":NaN}"#, Code::NonFiniteNumber),
        (r#"{"a":1,"a":2}x"#, Code::DuplicateKey),
        (r#"{"x":{"a":1,"a":2},"#, Code::DuplicateKey),
        (r#"{"a":1,"a":2"#, Code::InvalidJson),
        (r#"{"a":1,"a":2,}"#, Code::InvalidJson),
        (r#"[{"a":1,"a":2}, 01]"#, Code::DuplicateKey),
        (r#"[01, {"a":1,"a":2}]"#, Code::InvalidJson),
        (r#"{"a":{"b":1,"b":2},"a":3}"#, Code::DuplicateKey),
    ];
    for (text, code) in table {
        assert_eq!(err(text.as_bytes()).0, code, "{text}");
    }
    assert_eq!(
        err(br#"{"a":{"b":1,"b":2},"a":3}"#).1,
        "duplicate JSON field: b"
    );
}

#[test]
fn label_is_interpolated() {
    let error =
        read_str("{", "runtime binding inventory", &crate::Limits::default()).expect_err("invalid");
    assert_eq!(
        error.message(),
        "runtime binding inventory is not valid JSON"
    );
    assert_eq!(error.path(), None);
}

#[test]
fn never_panics_on_truncations() {
    let text = r#"{"a":[1,-2,3.5e-1,"x\u00e9\ud83d\ude00\n",true,false,null,{"b":{}}],"c":-0}"#;
    assert!(read_str(text, LABEL, &crate::Limits::default()).is_ok());
    for end in 0..text.len() {
        assert!(
            read(&text.as_bytes()[..end], LABEL, &crate::Limits::default()).is_err(),
            "{end}"
        );
    }
    for b in 0..=255u8 {
        for at in 0..text.len() {
            let mut bytes = text.as_bytes().to_vec();
            bytes[at] = b;
            let _ = read(&bytes, LABEL, &crate::Limits::default());
        }
    }
}

proptest::proptest! {
    #![proptest_config(crate::test_support::fixed_seed(2000, 0x7ead_e500))]

    /// Token soup from the JSON alphabet: the reader never panics, and what it accepts it
    /// accepts again after canonical re-encoding.
    #[test]
    fn token_soup_never_panics(tokens in proptest::collection::vec(
        proptest::sample::select(vec![
            "{", "}", "[", "]", ",", ":", " ", "\"", "\"k\"", "\"a\"", "\\", "\\u", "d83d", "de00",
            "0", "-", "1", ".", "e", "+", "18446744073709551616", "true", "null", "NaN", "é",
            "\u{1}", "\\n", "\\ud800", "\"\\u0061\"",
        ]),
        0..24,
    )) {
        let text = tokens.concat();
        if let Ok(value) = read_str(&text, LABEL, &crate::Limits::default()) {
            let mut out = Vec::new();
            if crate::canonical::encode_value(&value, &mut out).is_ok() {
                let again = read(&out, LABEL, &crate::Limits::default());
                proptest::prop_assert!(again.is_ok(), "{text:?} -> {out:?}");
            }
        }
    }
}
