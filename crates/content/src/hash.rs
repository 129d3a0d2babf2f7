//! The hashes of the definition (contract §19.2) and the digest's text form.
//!
//! Every hash is XXH3-128 with seed 0. `tensor_key` = XXH3-128(UTF-8 of tensor_id);
//! `content` = XXH3-128(block bytes); `value` = XXH3-128(tensor_key ‖ row ‖ block ‖
//! content), 48 bytes, all little-endian. A digest is a sum of values modulo 2^128.

use std::fmt;
use std::str::FromStr;

use weight_manifest::error::{Code, Error};
use xxhash_rust::xxh3::xxh3_128;

/// The prefix of a digest's text form.
pub const DIGEST_PREFIX: &str = "xxh3sum128:";

/// The key binding block values to one tensor: XXH3-128 of the tensor_id's UTF-8 bytes.
pub fn tensor_key(tensor_id: &str) -> u128 {
    xxh3_128(tensor_id.as_bytes())
}

/// The hash of one block's bytes.
pub fn content(block: &[u8]) -> u128 {
    xxh3_128(block)
}

/// The value of block `block` of row `row` of the tensor with key `key`, whose bytes hash
/// to `content`.
pub fn value(key: u128, row: u64, block: u64, content: u128) -> u128 {
    let mut input = [0_u8; 48];
    input[..16].copy_from_slice(&key.to_le_bytes());
    input[16..24].copy_from_slice(&row.to_le_bytes());
    input[24..32].copy_from_slice(&block.to_le_bytes());
    input[32..].copy_from_slice(&content.to_le_bytes());
    xxh3_128(&input)
}

/// A sum of block values modulo 2^128: a tensor's digest, or a fragment's partial sum.
///
/// Its text form ([`fmt::Display`], [`FromStr`]) is `xxh3sum128:` and 32 lowercase hex
/// digits, most significant first; [`Digest::hex`] is the bare hex of a partial sum.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Digest(pub u128);

impl Digest {
    /// Adds `value` modulo 2^128.
    pub fn add(&mut self, value: u128) {
        self.0 = self.0.wrapping_add(value);
    }

    /// The 32 lowercase hex digits, most significant first.
    pub fn hex(self) -> String {
        format!("{:032x}", self.0)
    }

    /// Reads 32 lowercase hex digits (the form of [`Digest::hex`]); `None` otherwise.
    pub fn from_hex(text: &str) -> Option<Digest> {
        let ok = text.len() == 32 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        if !ok {
            return None;
        }
        u128::from_str_radix(text, 16).ok().map(Digest)
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{DIGEST_PREFIX}{:032x}", self.0)
    }
}

impl FromStr for Digest {
    type Err = Error;

    /// Reads `xxh3sum128:` and 32 lowercase hex digits (`content_manifest_invalid`
    /// otherwise).
    fn from_str(text: &str) -> Result<Digest, Error> {
        text.strip_prefix(DIGEST_PREFIX)
            .and_then(Digest::from_hex)
            .ok_or_else(|| {
                Error::new(
                    Code::ContentManifestInvalid,
                    format!("digest {text:?} is not xxh3sum128: and 32 lowercase hex digits"),
                )
            })
    }
}

/// Lowercase hex of `bytes`.
pub fn to_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut text = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        text.push(char::from(DIGITS[usize::from(b >> 4)]));
        text.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    text
}

/// The bytes of lowercase hex `text`; `None` for an odd length or another character.
pub fn from_hex(text: &str) -> Option<Vec<u8>> {
    fn digit(c: u8) -> Option<u8> {
        match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            _ => None,
        }
    }
    let raw = text.as_bytes();
    if !raw.len().is_multiple_of(2) {
        return None;
    }
    raw.chunks_exact(2)
        .map(|pair| Some(digit(pair[0])? << 4 | digit(pair[1])?))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xxh3_128_matches_the_reference_vector() {
        // XXH3_128 of the empty input, seed 0, from the xxHash reference (xxhsum -H2).
        assert_eq!(content(b""), 0x99aa_06d3_0147_98d8_6001_c324_468d_497f);
    }

    #[test]
    fn value_hashes_the_48_byte_layout() {
        let key = tensor_key("w");
        let mut input = Vec::new();
        input.extend_from_slice(&key.to_le_bytes());
        input.extend_from_slice(&7_u64.to_le_bytes());
        input.extend_from_slice(&3_u64.to_le_bytes());
        input.extend_from_slice(&9_u128.to_le_bytes());
        assert_eq!(value(key, 7, 3, 9), xxh3_128(&input));
        assert_ne!(value(key, 7, 3, 9), value(key, 3, 7, 9));
    }

    #[test]
    fn digest_text_round_trips_and_rejects_other_forms() {
        let d = Digest(0x0123_4567_89ab_cdef_0000_0000_0000_00ff);
        let text = d.to_string();
        assert_eq!(text, "xxh3sum128:0123456789abcdef00000000000000ff");
        assert_eq!(text.parse::<Digest>().unwrap(), d);
        for bad in [
            "0123456789abcdef00000000000000ff",
            "xxh3sum128:0123456789ABCDEF00000000000000ff",
            "xxh3sum128:123",
            "xxh3sum128:+123456789abcdef00000000000000ff",
        ] {
            let error = bad.parse::<Digest>().unwrap_err();
            assert_eq!(error.code(), Code::ContentManifestInvalid, "{bad}");
        }
        let mut sum = Digest(u128::MAX);
        sum.add(2);
        assert_eq!(sum, Digest(1));
    }

    #[test]
    fn hex_round_trips() {
        assert_eq!(to_hex(&[0, 0xab, 0x10]), "00ab10");
        assert_eq!(from_hex("00ab10"), Some(vec![0, 0xab, 0x10]));
        assert_eq!(from_hex("0"), None);
        assert_eq!(from_hex("AB"), None);
        assert_eq!(from_hex("+1"), None);
    }
}
