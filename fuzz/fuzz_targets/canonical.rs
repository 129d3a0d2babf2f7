//! Reader and canonical encoder: any accepted document without non-integer numbers
//! encodes to valid JSON (serde_json agrees), and read -> encode is a fixed point.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde::Deserialize;
use weight_manifest::{canonical, reader};

fuzz_target!(|data: &[u8]| {
    let Ok(value) = reader::read(data, "document", &weight_manifest::Limits::default()) else {
        return;
    };
    let mut first = Vec::new();
    if canonical::encode_value(&value, &mut first).is_err() {
        return; // non-integer numbers have no canonical form
    }
    assert!(first.is_ascii());
    let mut json = serde_json::Deserializer::from_slice(&first);
    json.disable_recursion_limit();
    serde::de::IgnoredAny::deserialize(&mut json).expect("canonical output is JSON");
    json.end().expect("canonical output is one JSON value");
    let reread = reader::read(&first, "document", &weight_manifest::Limits::default())
        .expect("canonical output reads back");
    let mut second = Vec::new();
    canonical::encode_value(&reread, &mut second).expect("re-encoding succeeds");
    assert_eq!(first, second, "read -> encode is a fixed point");
});
