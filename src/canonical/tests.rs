//! Unit tests of the canonical encoder (contract §5).

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use super::{encode_value, hash, hex, sha256_hex, to_string, to_vec, write, EncodeError};
use crate::reader::read_str;

fn canon<T: Serialize + ?Sized>(value: &T) -> String {
    to_string(value).expect("encodable")
}

fn canon_json(text: &str) -> String {
    let value = read_str(text, "test", &crate::Limits::default()).expect("valid");
    let mut out = Vec::new();
    encode_value(&value, &mut out).expect("encodable");
    String::from_utf8(out).expect("ascii")
}

#[test]
fn string_escaping_table() {
    assert_eq!(canon("é"), r#""\u00e9""#);
    assert_eq!(canon("γ"), r#""\u03b3""#);
    assert_eq!(canon("\u{2028}"), r#""\u2028""#);
    assert_eq!(canon("\u{7f}"), r#""\u007f""#);
    assert_eq!(canon("😀"), r#""\ud83d\ude00""#);
    assert_eq!(canon("\u{10ffff}"), r#""\udbff\udfff""#);
    assert_eq!(canon("\u{ffff}"), r#""\uffff""#);
    assert_eq!(canon("a/b"), r#""a/b""#);
    assert_eq!(canon("\u{0}"), r#""\u0000""#);
    assert_eq!(
        canon("\"\\\u{8}\u{c}\n\r\t\u{1}\u{1f} ~"),
        r#""\"\\\b\f\n\r\t\u0001\u001f ~""#
    );
    assert_eq!(canon(&'é'), r#""\u00e9""#);
    let printable: String = (0x20u8..0x7f).map(char::from).collect();
    let expected = printable.replace('\\', "\\\\").replace('"', "\\\"");
    assert_eq!(canon(&printable), format!("\"{expected}\""));
}

#[test]
fn integers() {
    assert_eq!(canon(&0u64), "0");
    assert_eq!(canon(&u64::MAX), "18446744073709551615");
    assert_eq!(canon(&u128::MAX), "340282366920938463463374607431768211455");
    assert_eq!(
        canon(&i128::MIN),
        "-170141183460469231731687303715884105728"
    );
    assert_eq!(canon(&i64::MIN), "-9223372036854775808");
    assert_eq!(canon(&-7i8), "-7");
    assert_eq!(canon(&(1u8, 2u16, 3u32, -4i16, -5i32)), "[1,2,3,-4,-5]");
}

#[derive(Serialize)]
struct Sorted<'a> {
    _first: u64,
    aliases: Vec<&'a str>,
    name: Option<&'a str>,
    rank: Option<u32>,
    unit: Kind,
}

#[derive(Serialize)]
enum Kind {
    #[serde(rename = "view")]
    View,
}

#[derive(Serialize)]
struct Unsorted {
    b: u64,
    a: u64,
}

#[derive(Serialize)]
struct Repeated {
    a: u64,
    #[serde(rename = "a")]
    again: u64,
}

#[test]
fn structs_in_declaration_order() {
    let value = Sorted {
        _first: 1,
        aliases: vec!["x", "y"],
        name: None,
        rank: Some(3),
        unit: Kind::View,
    };
    assert_eq!(
        canon(&value),
        r#"{"_first":1,"aliases":["x","y"],"name":null,"rank":3,"unit":"view"}"#
    );
    let error = to_vec(&Unsorted { b: 1, a: 2 }).expect_err("unsorted");
    assert!(error.message().contains("sorted"), "{error}");
    assert!(to_vec(&Repeated { a: 1, again: 2 }).is_err());
}

#[test]
fn maps_are_sorted_by_code_point() {
    let map: HashMap<&str, u64> = [
        ("b", 1),
        ("_", 2),
        ("~", 3),
        ("é", 4),
        ("😀", 5),
        ("\u{ffff}", 6),
        ("", 7),
    ]
    .into_iter()
    .collect();
    assert_eq!(
        canon(&map),
        r#"{"":7,"_":2,"b":1,"~":3,"\u00e9":4,"\uffff":6,"\ud83d\ude00":5}"#
    );
    let nested: BTreeMap<String, BTreeMap<String, Vec<u64>>> = [(
        "k".to_owned(),
        [("z".to_owned(), vec![1]), ("a".to_owned(), vec![])]
            .into_iter()
            .collect(),
    )]
    .into_iter()
    .collect();
    assert_eq!(canon(&nested), r#"{"k":{"a":[],"z":[1]}}"#);
    assert_eq!(canon(&BTreeMap::<String, u8>::new()), "{}");
    let int_keys: BTreeMap<u8, u8> = [(1, 2)].into_iter().collect();
    assert!(to_vec(&int_keys).is_err());
}

#[derive(Serialize)]
enum Shapes {
    Unit,
    New(u8),
    Tuple(u8, u8),
    Record { a: u8, b: u8 },
}

#[test]
fn enums_and_units() {
    assert_eq!(canon(&Shapes::Unit), r#""Unit""#);
    assert_eq!(canon(&Shapes::New(1)), r#"{"New":1}"#);
    assert_eq!(canon(&Shapes::Tuple(1, 2)), r#"{"Tuple":[1,2]}"#);
    assert_eq!(
        canon(&Shapes::Record { a: 1, b: 2 }),
        r#"{"Record":{"a":1,"b":2}}"#
    );
    assert_eq!(canon(&()), "null");
    assert_eq!(canon(&[true, false]), "[true,false]");
    assert_eq!(canon::<[u8]>(&[]), "[]");
}

#[test]
fn unsupported_values() {
    assert!(to_vec(&1.5f64).is_err());
    assert!(to_vec(&1.0f32).is_err());
    assert!(to_vec(&serde_bytes_like()).is_err());
    assert!(encode(r#"{"a":2.0}"#).is_err());
    let error = EncodeError::new("x");
    assert_eq!(error.to_string(), "canonical JSON encoding failed: x");
}

struct RawBytes;

impl Serialize for RawBytes {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(b"ab")
    }
}

fn serde_bytes_like() -> RawBytes {
    RawBytes
}

fn encode(text: &str) -> Result<Vec<u8>, EncodeError> {
    let value = read_str(text, "test", &crate::Limits::default()).expect("valid");
    let mut out = Vec::new();
    encode_value(&value, &mut out).map(|()| out)
}

#[test]
fn document_tree() {
    assert_eq!(
        canon_json(
            r#" { "b" : [ 1 , -0 , -5, 18446744073709551616 ] , "a" : { "y" : null , "x" : true } , "_" : "\u00E9/" } "#
        ),
        r#"{"_":"\u00e9/","a":{"x":true,"y":null},"b":[1,0,-5,18446744073709551616]}"#
    );
    assert_eq!(
        canon_json(r#"{"\u00e9":1,"~":2,"\ud83d\ude00":3,"\uffff":4}"#),
        r#"{"~":2,"\u00e9":1,"\uffff":4,"\ud83d\ude00":3}"#
    );
    // The deepest tree the reader can build (its depth ceiling) encodes without
    // exhausting the stack.
    let depth = crate::reader::MAX_DEPTH;
    let deep = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    let limits = crate::Limits {
        max_depth: depth,
        ..crate::Limits::default()
    };
    let value = crate::reader::read_str(&deep, "test", &limits).expect("valid");
    let mut out = Vec::new();
    encode_value(&value, &mut out).expect("encodable");
    assert_eq!(out, deep.as_bytes());
}

#[test]
fn integer_text_is_normalised() {
    use crate::value::Value;
    let mut out = Vec::new();
    let values = [
        Value::NegInt("-007".into()),
        Value::NegInt("-0".into()),
        Value::BigUInt("00018446744073709551616".into()),
    ];
    for value in &values {
        encode_value(value, &mut out).expect("integer");
        out.push(b' ');
    }
    assert_eq!(out, b"-7 0 18446744073709551616 ");
    assert!(encode_value(&Value::NegInt("7".into()), &mut out).is_err());
    assert!(encode_value(&Value::BigUInt("1e3".into()), &mut out).is_err());
    assert!(encode_value(&Value::BigUInt(String::new().into()), &mut out).is_err());
}

#[derive(Serialize)]
struct EmptyPayload {
    fragments: [u8; 0],
    model_id: &'static str,
    revision: &'static str,
    schema: &'static str,
    tensors: [u8; 0],
}

#[test]
fn hashing_matches_the_empty_placement_example() {
    // Contract §17: the empty placement's placement_id and digest.
    let payload = EmptyPayload {
        fragments: [],
        model_id: "m",
        revision: "r",
        schema: "weight-placement",
        tensors: [],
    };
    let id = "65e60da33f39b251b1b47dfc71795c890e90c56bbab9c16ff7ab2414dcd15fd1";
    assert_eq!(hex(&hash(&payload).expect("encodable")), id);
    assert_eq!(sha256_hex(&to_vec(&payload).expect("encodable")), id);
    let wire = format!(
        r#"{{"fragments":[],"model_id":"m","placement_id":"sha256:{id}","revision":"r","tensors":[]}}"#
    );
    assert_eq!(canon_json(&wire), wire);
    let value = read_str(&wire, "test", &crate::Limits::default()).expect("valid");
    let mut hasher = sha2::Sha256::default();
    encode_value(&value, &mut hasher).expect("encodable");
    let digest = "2a889d6332b8b3ef102d1a0a3a49d34c83b56ff0e903df59a6d218d573e74960";
    assert_eq!(hex(&sha2::Digest::finalize(hasher).into()), digest);
    let mut hasher = sha2::Sha256::default();
    write(&payload, &mut hasher).expect("encodable");
    assert_eq!(hex(&sha2::Digest::finalize(hasher).into()), id);
    assert_eq!(
        sha256_hex(b""),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
}
