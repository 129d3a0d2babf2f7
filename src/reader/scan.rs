//! Byte-level scanning helpers for the reader: string runs, whitespace, hex digits.

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte lane of the 8-byte word `w` that is `"`, `\` or below 0x20,
/// exact up to and including the lowest such lane (lanes above it may be set spuriously:
/// the subtractions' borrows only run upwards), so `trailing_zeros / 8` locates the first.
#[inline]
fn special_lanes(w: u64) -> u64 {
    let quote = w ^ (ONES * u64::from(b'"'));
    let backslash = w ^ (ONES * u64::from(b'\\'));
    let zero_quote = quote.wrapping_sub(ONES) & !quote;
    let zero_backslash = backslash.wrapping_sub(ONES) & !backslash;
    let control = w.wrapping_sub(ONES * 0x20) & !w;
    (zero_quote | zero_backslash | control) & HIGHS
}

/// Whether `b` ends a run of plain string bytes.
#[inline]
fn is_special(b: u8) -> bool {
    b == b'"' || b == b'\\' || b < 0x20
}

/// The index of the first byte at or after `from` that is `"`, `\` or below 0x20, or
/// `bytes.len()` if there is none.
#[inline]
pub(crate) fn find_special(bytes: &[u8], from: usize) -> usize {
    let mut i = from;
    let rest = bytes.get(from..).unwrap_or_default();
    let mut chunks = rest.chunks_exact(8);
    for chunk in chunks.by_ref() {
        let Ok(word) = <[u8; 8]>::try_from(chunk) else {
            break;
        };
        let lanes = special_lanes(u64::from_le_bytes(word));
        if lanes != 0 {
            // At most 7: the index of the lowest marked lane.
            return i + (lanes.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(&b) = bytes.get(i) {
        if is_special(b) {
            return i;
        }
        i += 1;
    }
    i
}

/// The index of the first byte at or after `from` that is not JSON whitespace.
#[inline]
pub(crate) fn skip_whitespace(bytes: &[u8], from: usize) -> usize {
    let mut i = from;
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = bytes.get(i) {
        i += 1;
    }
    i
}

/// The index of the first byte at or after `from` that is not an ASCII digit.
#[inline]
pub(super) fn skip_digits(bytes: &[u8], from: usize) -> usize {
    let mut i = from;
    while let Some(b'0'..=b'9') = bytes.get(i) {
        i += 1;
    }
    i
}

/// The value of the four hex digits (either case) at `at`, if there are four.
#[inline]
pub(super) fn hex4(bytes: &[u8], at: usize) -> Option<u32> {
    let digits = bytes.get(at..at.checked_add(4)?)?;
    digits.iter().try_fold(0u32, |acc, &b| {
        let digit = char::from(b).to_digit(16)?;
        Some((acc << 4) | digit)
    })
}

/// The exact value of a run of ASCII digits, or `None` if it exceeds `u64::MAX`.
#[inline]
pub(crate) fn parse_u64(digits: &[u8]) -> Option<u64> {
    digits.iter().try_fold(0u64, |acc, &b| {
        acc.checked_mul(10)?
            .checked_add(u64::from(b.wrapping_sub(b'0')))
    })
}

#[cfg(test)]
mod tests {
    use super::{find_special, hex4, parse_u64, special_lanes};

    #[test]
    fn the_lowest_marked_lane_is_the_first_special_byte() {
        let special = |b: u8| b == b'"' || b == b'\\' || b < 0x20;
        // Every byte value in every lane, with every other byte value in a later lane (the
        // later lane may only be marked spuriously, never the earlier position).
        for b in 0u8..=255 {
            for lane in 0..8 {
                for later in [b'"', b'\\', 0x00, 0x1f, 0x20, 0x7f, 0x80, 0xff, b'a'] {
                    // `at == lane`: no later byte.
                    for at in lane..8 {
                        let mut word = *b"abcdefgh";
                        word[at] = later;
                        word[lane] = b;
                        let lanes = special_lanes(u64::from_le_bytes(word));
                        let first = word.iter().position(|&x| special(x));
                        let found = (lanes != 0).then(|| (lanes.trailing_zeros() / 8) as usize);
                        assert_eq!(found, first, "{b} at {lane}, {later} at {at}");
                    }
                }
            }
        }
    }

    #[test]
    fn finds_first_special_byte() {
        let text = b"0123456789abcdef\x7f\xc3\xa9xyz\"tail";
        assert_eq!(find_special(text, 0), 22);
        assert_eq!(find_special(text, 23), text.len());
        assert_eq!(find_special(b"ab\\c\"", 0), 2);
        assert_eq!(find_special(b"abcdefghijklmn\n", 3), 14);
        assert_eq!(find_special(b"", 0), 0);
        assert_eq!(find_special(b"ab", 5), 5);
    }

    #[test]
    fn hex_and_integers() {
        assert_eq!(hex4(b"00e9", 0), Some(0xe9));
        assert_eq!(hex4(b"xD83D", 1), Some(0xD83D));
        assert_eq!(hex4(b"d83", 0), None);
        assert_eq!(hex4(b"00g0", 0), None);
        assert_eq!(parse_u64(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_u64(b"18446744073709551616"), None);
    }
}
