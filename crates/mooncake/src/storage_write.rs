//! The text of a storage manifest: Python's `json.dumps(sort_keys=True,
//! separators=(",", ":"), ensure_ascii=False)`, so strings keep their non-ASCII scalars
//! as raw UTF-8 and only `"`, `\` and the C0 controls are escaped.

use weight_manifest::canonical::{write_u64, Sink};

use crate::storage::{MooncakeStorageManifest, StoredFragment};
use crate::write::{ints, list, tensor};

/// Writes `s` as a JSON string with `ensure_ascii=False` escaping.
fn raw_str(sink: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    sink.put(b"\"");
    let bytes = s.as_bytes();
    let mut run = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape: Option<&[u8]> = match b {
            b'"' => Some(b"\\\""),
            b'\\' => Some(b"\\\\"),
            b'\n' => Some(b"\\n"),
            b'\r' => Some(b"\\r"),
            b'\t' => Some(b"\\t"),
            0x08 => Some(b"\\b"),
            0x0c => Some(b"\\f"),
            _ => None,
        };
        if escape.is_none() && b >= 0x20 {
            continue;
        }
        sink.put(bytes.get(run..i).unwrap_or_default());
        match escape {
            Some(e) => sink.put(e),
            None => sink.put(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 0x0f)],
            ]),
        }
        run = i + 1;
    }
    sink.put(bytes.get(run..).unwrap_or_default());
    sink.put(b"\"");
}

fn fragment(sink: &mut Vec<u8>, f: &StoredFragment) {
    sink.put(b"{\"aliases\":");
    list(sink, &f.aliases, |k, a| raw_str(k, a));
    sink.put(b",\"fragment_id\":");
    raw_str(sink, &f.fragment_id);
    sink.put(b",\"global_offset\":");
    ints(sink, &f.global_offset);
    sink.put(b",\"local_shape\":");
    ints(sink, &f.local_shape);
    sink.put(b",\"nbytes\":");
    write_u64(sink, f.nbytes);
    sink.put(b",\"object_key\":");
    raw_str(sink, &f.object_key);
    sink.put(b",\"object_offset\":");
    write_u64(sink, f.object_offset);
    sink.put(b",\"tensor_id\":");
    raw_str(sink, &f.tensor_id);
    sink.put(b"}");
}

/// The manifest's text.
pub(crate) fn manifest_text(m: &MooncakeStorageManifest) -> String {
    let mut out: Vec<u8> = Vec::with_capacity(4096);
    let s = &mut out;
    s.put(b"{\"created_at\":");
    raw_str(s, &m.created_at);
    s.put(b",\"fragments\":");
    list(s, &m.fragments, fragment);
    s.put(b",\"group_id\":");
    raw_str(s, &m.group_id);
    s.put(b",\"manifest_key\":");
    raw_str(s, &m.manifest_key);
    s.put(b",\"namespace\":");
    raw_str(s, &m.namespace);
    s.put(b",\"resource_id\":");
    raw_str(s, &m.resource_id);
    s.put(b",\"resource_kind\":\"model_weight\",\"revision\":");
    raw_str(s, &m.revision);
    s.put(b",\"tensors\":");
    list(s, &m.tensors, |k, t| tensor(k, t, raw_str));
    s.put(b",\"weight_generation\":");
    write_u64(s, m.weight_generation);
    s.put(b"}");
    // Only whole UTF-8 strings and ASCII are written.
    String::from_utf8(out).unwrap_or_default()
}

impl MooncakeStorageManifest {
    /// The text upstream's `to_json` writes: sorted keys, no whitespace, raw UTF-8.
    pub fn to_json(&self) -> String {
        manifest_text(self)
    }

    /// `manifest_digest`: SHA-256 of the text's UTF-8 bytes, 64 lowercase hex digits.
    pub fn digest(&self) -> String {
        weight_manifest::canonical::sha256_hex(self.to_json().as_bytes())
    }
}
