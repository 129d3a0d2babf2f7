//! An independent canonical-JSON oracle for the integration tests: `serde_json`'s tree
//! (whose maps sort their keys) re-serialised compactly, then every character outside
//! printable ASCII escaped as Python's `json.dumps(..., ensure_ascii=True)` does. It
//! shares no code with the crate's encoder or its generated writers.

use std::fmt::Write as _;

use sha2::{Digest, Sha256};

/// The canonical encoding (contract §5) of the JSON `text`.
pub fn canonical(text: &str) -> String {
    let value: serde_json::Value = serde_json::from_str(text).expect("valid JSON");
    ascii(&serde_json::to_string(&value).expect("serialisable"))
}

/// `prefix` + SHA-256 of the canonical encoding of the object `text` without `id_key`
/// and with `"schema": tag` added: the identity rule of contract §7.1.
pub fn identity(text: &str, id_key: &str, tag: &str, prefix: &str) -> String {
    let mut value: serde_json::Value = serde_json::from_str(text).expect("valid JSON");
    let object = value.as_object_mut().expect("an object");
    object.remove(id_key);
    object.insert("schema".to_owned(), tag.into());
    let payload = ascii(&serde_json::to_string(&value).expect("serialisable"));
    let digest = Sha256::digest(payload.as_bytes());
    let mut id = prefix.to_owned();
    for byte in digest {
        write!(id, "{byte:02x}").unwrap();
    }
    id
}

/// serde_json already writes `\"`, `\\`, the short escapes and `\u00xx` for the other
/// control characters; what remains is DEL and everything above ASCII.
fn ascii(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c == '\u{7f}' || !c.is_ascii() {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                write!(out, "\\u{unit:04x}").unwrap();
            }
        } else {
            out.push(c);
        }
    }
    out
}
