//! The leaves of the encoding: strings (contract §5 escaping table) and integers.

use super::sink::{EncodeError, Sink};

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Bytes written as themselves: printable ASCII except `"` and `\`.
const PLAIN: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0x20;
    while b < 0x7f {
        table[b] = b != b'"' as usize && b != b'\\' as usize;
        b += 1;
    }
    table
};

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Whether some byte of `w` is not [`PLAIN`]: `"`, `\`, below 0x20, or 0x7f and above.
/// Exact as a yes/no answer (the carries of the subtractions only add lanes above a hit).
#[inline]
fn word_needs_escape(w: u64) -> bool {
    let quote = w ^ (ONES * u64::from(b'"'));
    let backslash = w ^ (ONES * u64::from(b'\\'));
    let zero_quote = quote.wrapping_sub(ONES) & !quote;
    let zero_backslash = backslash.wrapping_sub(ONES) & !backslash;
    let control = w.wrapping_sub(ONES * 0x20) & !w;
    let high = w | w.wrapping_add(ONES);
    (zero_quote | zero_backslash | control | high) & HIGHS != 0
}

/// Whether every byte of `bytes` is written as itself.
#[inline]
fn all_plain(bytes: &[u8]) -> bool {
    let mut chunks = bytes.chunks_exact(8);
    for chunk in chunks.by_ref() {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        if word_needs_escape(u64::from_le_bytes(word)) {
            return false;
        }
    }
    chunks.remainder().iter().all(|&b| PLAIN[usize::from(b)])
}

/// Writes `s` as a JSON string literal with Python's `ensure_ascii` escaping.
pub fn write_str<S: Sink + ?Sized>(sink: &mut S, s: &str) {
    sink.put(b"\"");
    let bytes = s.as_bytes();
    if all_plain(bytes) {
        sink.put(bytes);
        sink.put(b"\"");
        return;
    }
    let mut run = 0;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if PLAIN[usize::from(b)] {
            i += 1;
            continue;
        }
        sink.put(bytes.get(run..i).unwrap_or_default());
        if b < 0x80 {
            write_ascii_escape(sink, b);
            i += 1;
        } else if let Some(c) = s.get(i..).and_then(|rest| rest.chars().next()) {
            write_scalar_escape(sink, c);
            i += c.len_utf8();
        } else {
            // Unreachable for a `str`: `i` is always on a scalar boundary here.
            i += 1;
        }
        run = i;
    }
    sink.put(bytes.get(run..).unwrap_or_default());
    sink.put(b"\"");
}

fn write_ascii_escape<S: Sink + ?Sized>(sink: &mut S, b: u8) {
    let short: &[u8] = match b {
        b'"' => b"\\\"",
        b'\\' => b"\\\\",
        0x08 => b"\\b",
        0x0c => b"\\f",
        b'\n' => b"\\n",
        b'\r' => b"\\r",
        b'\t' => b"\\t",
        _ => return write_unit(sink, u16::from(b)),
    };
    sink.put(short);
}

fn write_scalar_escape<S: Sink + ?Sized>(sink: &mut S, c: char) {
    let mut units = [0u16; 2];
    for unit in c.encode_utf16(&mut units) {
        write_unit(sink, *unit);
    }
}

/// Writes `\u` and four lowercase hex digits.
fn write_unit<S: Sink + ?Sized>(sink: &mut S, unit: u16) {
    let nibble = |shift: u16| HEX[usize::from((unit >> shift) & 0x0f)];
    sink.put(&[b'\\', b'u', nibble(12), nibble(8), nibble(4), nibble(0)]);
}

/// Writes an unsigned integer in decimal.
pub(super) fn write_u128<S: Sink + ?Sized>(sink: &mut S, mut n: u128) {
    let mut buf = [0u8; 39];
    let mut at = buf.len();
    loop {
        at -= 1;
        // `n % 10` is below 10, so the cast is exact.
        #[allow(clippy::cast_possible_truncation)]
        let digit = (n % 10) as u8;
        buf[at] = b'0' + digit;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    sink.put(buf.get(at..).unwrap_or_default());
}

/// Writes an unsigned 64-bit integer in decimal.
#[inline]
pub fn write_u64<S: Sink + ?Sized>(sink: &mut S, n: u64) {
    sink.put(itoa::Buffer::new().format(n).as_bytes());
}

/// Writes a signed integer in decimal.
pub(super) fn write_i128<S: Sink + ?Sized>(sink: &mut S, n: i128) {
    if n < 0 {
        sink.put(b"-");
    }
    write_u128(sink, n.unsigned_abs());
}

/// Writes an integer held as decimal text (optionally signed), normalised: no leading
/// zeros, and zero without a sign.
pub(super) fn write_integer_text<S: Sink + ?Sized>(
    sink: &mut S,
    text: &str,
    negative: bool,
) -> Result<(), EncodeError> {
    let digits = if negative {
        text.strip_prefix('-')
    } else {
        Some(text)
    };
    let digits = digits
        .filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
        .ok_or_else(|| EncodeError::new(format!("not a decimal integer: {text}")))?;
    let trimmed = digits.trim_start_matches('0');
    if trimmed.is_empty() {
        sink.put(b"0");
    } else {
        if negative {
            sink.put(b"-");
        }
        sink.put(trimmed.as_bytes());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{all_plain, word_needs_escape, PLAIN};

    #[test]
    fn word_test_matches_the_table() {
        for b in 0u8..=255 {
            for lane in 0..8 {
                for fill in [b'a', 0x7e, 0x20, 0xff] {
                    let mut word = [fill; 8];
                    word[lane] = b;
                    let expected = word.iter().any(|&x| !PLAIN[usize::from(x)]);
                    assert_eq!(word_needs_escape(u64::from_le_bytes(word)), expected);
                }
            }
        }
        assert!(all_plain(b"model.layers.0.self_attn.q_a_proj.weight"));
        assert!(!all_plain(b"model.layers.0.self_attn.q_a_proj.weight\x7f"));
        assert!(!all_plain("caf\u{e9} au lait".as_bytes()));
    }
}
