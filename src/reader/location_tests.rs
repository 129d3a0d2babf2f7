//! Unit tests of the location every `invalid_json` rejection of the reader carries
//! ([`crate::error::JsonLocation`]): byte offset, line, column (in characters).

use super::{read, read_str};
use crate::code::Code;
use crate::error::{Detail, JsonLocation};

const LABEL: &str = "placement manifest";

/// (line, column, offset).
type Where = (u64, u64, u64);

/// The (line, column, offset) of the rejection of `text`, which must be `invalid_json`
/// with the contract's message and no pointer.
fn located(text: &[u8]) -> Where {
    let shown = String::from_utf8_lossy(text);
    let error = read(text, LABEL, &crate::Limits::default()).expect_err(&shown);
    assert_eq!(error.code(), Code::InvalidJson, "{shown:?}");
    assert_eq!(error.message(), "placement manifest is not valid JSON");
    assert_eq!(error.path(), None, "{shown:?}");
    let at = error
        .json_location()
        .unwrap_or_else(|| panic!("{shown:?}: no location"));
    assert_eq!(error.detail(), Some(&Detail::JsonLocation(at)));
    (at.line, at.column, at.offset)
}

fn check(table: &[(&[u8], Where)]) {
    for &(text, expected) in table {
        assert_eq!(
            located(text),
            expected,
            "{:?}",
            String::from_utf8_lossy(text)
        );
    }
}

/// Texts where the first offending byte is where Python's `json.loads` stops too. The
/// expectations were derived once with Python 3 (`JSONDecodeError.lineno`, `.colno`, and
/// the UTF-8 length of `doc[:pos]` for the byte offset) and are kept as literals.
#[test]
fn structural_errors_agree_with_python_json() {
    check(&[
        (b"", (1, 1, 0)),
        (b"   ", (1, 4, 3)),
        (b"{} x", (1, 4, 3)),
        (b"{}{}", (1, 3, 2)),
        (b"{,}", (1, 2, 1)),
        (b"[1,]", (1, 4, 3)),
        (b"{\"a\":1,}", (1, 8, 7)),
        (b"['a']", (1, 2, 1)),
        (b"01", (1, 2, 1)),
        (b"-01", (1, 3, 2)),
        (b"[01]", (1, 3, 2)),
        (b"+1", (1, 1, 0)),
        (b"[1 2]", (1, 4, 3)),
        (b"[true false]", (1, 7, 6)),
        (b"{\"a\" 1}", (1, 6, 5)),
        (b"{\"a\":1 \"b\":2}", (1, 8, 7)),
        (b"{\"a\":{\"b\":[1,2,{\"c\":3,}]}}", (1, 23, 22)),
        (b"\xef\xbb\xbf{}", (1, 1, 0)),
        // Truncated: the end of the text.
        (b"{\"a\":[1,2", (1, 10, 9)),
        (b"[", (1, 2, 1)),
        (b"{\"a\"", (1, 5, 4)),
        (b"{\"a\":", (1, 6, 5)),
        // Control characters inside strings.
        (b"[\"a\tb\"]", (1, 4, 3)),
        (b"\"\n\"", (1, 2, 1)),
        // Several lines; CR does not end a line, LF does.
        (b"[1,\n 2,\n ]", (3, 2, 9)),
        (b"{\n  \"name\": \"x\",\n  \"size\": 12,,\n}", (3, 14, 30)),
        (b"{\r\n\"a\":\r\n}", (3, 1, 9)),
        (b"{\"k\":\"v\"}\n\n  ]", (3, 3, 13)),
        // Multi-byte characters count once in the column, by their bytes in the offset.
        ("[\"é\", \"日本語\" x]".as_bytes(), (1, 13, 19)),
        ("{\"😀\":1,\n \"ß\": [1, 2}".as_bytes(), (2, 12, 23)),
        ("[\"日本\", \"a\tb\"]".as_bytes(), (1, 10, 13)),
    ]);
}

/// Texts where Python's `json` reports the start of the token instead (numbers, literals,
/// strings, escapes): computed by hand as the first byte no JSON text could have there.
#[test]
fn token_errors_point_at_the_first_offending_byte() {
    check(&[
        // Numbers: the byte where a digit was required.
        (b"[1.]", (1, 4, 3)),
        (b"[1.5e]", (1, 6, 5)),
        (b"[1e+]", (1, 5, 4)),
        (b"[-]", (1, 3, 2)),
        (b"-", (1, 2, 1)),
        (b"[1.", (1, 4, 3)),
        // Literals: cut off is the end of the text; misspelt is the first wrong byte.
        (b"tru", (1, 4, 3)),
        (b"[trux]", (1, 5, 4)),
        (b"{\"a\":fals e}", (1, 10, 9)),
        (b"nul", (1, 4, 3)),
        (b"nan", (1, 2, 1)),
        (b"Infinit", (1, 1, 0)),
        (b"-Inf", (1, 2, 1)),
        (b"[NULL]", (1, 2, 1)),
        // Strings: an unterminated one ends at the end of the text.
        (b"{\"a\":\"abc", (1, 10, 9)),
        (b"\"", (1, 2, 1)),
        // Escapes: the byte after the backslash, or the first bad hex digit.
        (b"\"a\\x\"", (1, 4, 3)),
        (b"\"\\", (1, 3, 2)),
        (b"\"\\u12x4\"", (1, 6, 5)),
        (b"\"\\u12", (1, 6, 5)),
        // A high surrogate must be followed by `\u` and a low surrogate.
        (b"\"\\ud800\"", (1, 8, 7)),
        (b"\"\\ud800", (1, 8, 7)),
        (b"\"\\ud800\\n\"", (1, 9, 8)),
        (b"\"\\ud800\\u0041\"", (1, 10, 9)),
        (b"\"\\ud800\\ud800\"", (1, 11, 10)),
        (b"\"\\uD83D\\uDE0x\"", (1, 13, 12)),
        // A lone low surrogate is one from its second hex digit.
        (b"\"\\udc00\"", (1, 5, 4)),
        (b"\"\\uDFFF\"", (1, 5, 4)),
        (b"\"\\udcx\"", (1, 5, 4)),
        // Several lines with multi-byte characters before the position.
        ("{\n  \"é\": \"\\ud800\"\n}".as_bytes(), (2, 15, 17)),
        ("[\"日本語\",\n  \"ü\\q\"]".as_bytes(), (2, 6, 20)),
    ]);
}

/// The first byte of the first ill-formed UTF-8 sequence, checked before the syntax.
/// Expectations derived once with Python 3 (`UnicodeDecodeError.start`, and the line
/// and column of that offset in the decoded prefix).
#[test]
fn invalid_utf8_points_at_the_first_bad_sequence() {
    check(&[
        (b"\"\xff\"", (1, 2, 1)),
        (b"\"\xed\xa0\x80\"", (1, 2, 1)),
        (b"\"\xc3", (1, 2, 1)),
        (b"{\n \"\xc3\xa9\": \"\xc3\"}", (2, 8, 10)),
        // Decoded before it is parsed: the syntax error at `N` comes later.
        (b"[NaN, \"\xff\"]", (1, 8, 7)),
        (b"[\"\xe6\x97\xa5\n\xe6\x97\"]", (2, 1, 6)),
    ]);
}

#[test]
fn read_str_locates_too() {
    let error = read_str("[1,\n  x]", LABEL, &crate::Limits::default()).expect_err("invalid");
    assert_eq!(
        error.json_location(),
        Some(JsonLocation {
            offset: 6,
            line: 2,
            column: 3
        })
    );
    assert_eq!(
        error.to_string(),
        "error[invalid_json]: placement manifest is not valid JSON at line 2 column 3 (byte 6)"
    );
}

#[test]
fn other_rejections_have_no_location() {
    for text in [r#"{"a":NaN}"#, r#"{"a":1,"a":2}"#] {
        let error = read_str(text, LABEL, &crate::Limits::default()).expect_err(text);
        assert_ne!(error.code(), Code::InvalidJson);
        assert_eq!(error.json_location(), None, "{text}");
        assert!(!error.to_string().contains(" at line "), "{error}");
    }
}

/// An independent count of the location of the end of `text`: lines by `str::lines`
/// semantics on LF, columns by `chars`.
fn end_of(text: &str) -> Where {
    let line = text.matches('\n').count() + 1;
    let last = text.rsplit('\n').next().unwrap_or_default();
    let column = last.chars().count() + 1;
    let wide = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
    (wide(line), wide(column), wide(text.len()))
}

/// Every cut-off of a valid document (on a character boundary) ends early: its location is
/// the end of the text.
#[test]
fn truncations_are_located_at_the_end() {
    let text = "{\n  \"名前\": [1, -2, 3.5e-1, \"x\\u00e9\\ud83d\\ude00\\n\"],\r\n  \"ß😀\": {\"b\": [true, false, null]},\n  \"c\": -0\n}";
    assert!(read_str(text, LABEL, &crate::Limits::default()).is_ok());
    for end in (0..text.len()).filter(|&end| text.is_char_boundary(end)) {
        let cut = &text[..end];
        assert_eq!(located(cut.as_bytes()), end_of(cut), "{cut:?}");
    }
    // Cut inside a multi-byte character: the UTF-8 check points at its first byte.
    let at = text.find('名').unwrap_or_default();
    assert_eq!(located(&text.as_bytes()[..=at]), end_of(&text[..at]));
}

/// The reported offset `k` of any rejected text is its first offending byte: the text
/// before it still reads as far as `k` (complete, or ending early at `k`), and the text
/// through it is rejected at `k` again. (For UTF-8 text: invalid UTF-8 is found before
/// the syntax, so a syntax error may come first.)
fn assert_first_offending(text: &[u8]) {
    if std::str::from_utf8(text).is_err() {
        return;
    }
    let Err(error) = read(text, LABEL, &crate::Limits::default()) else {
        return;
    };
    let Some(at) = error.json_location() else {
        return;
    };
    let k = usize::try_from(at.offset).unwrap_or(usize::MAX);
    let shown = String::from_utf8_lossy(text);
    assert!(k <= text.len(), "{shown:?}");
    if let Err(before) = read(&text[..k], LABEL, &crate::Limits::default()) {
        assert_eq!(
            before.json_location().map(|at| at.offset),
            Some(at.offset),
            "{shown:?} before {k}: {before}"
        );
    }
    if k < text.len() {
        let through =
            read(&text[..=k], LABEL, &crate::Limits::default()).expect_err("rejected through k");
        assert_eq!(through.json_location(), Some(at), "{shown:?} through {k}");
    }
}

#[test]
fn every_single_byte_change_is_located_at_its_first_offending_byte() {
    let text =
        "{\"a\":[1,-2,3.5e-1,\"x\\u00e9\\ud83d\\ude00\\n\",true,false,null,{\"b\":{}}],\"é\":-0}";
    for b in [
        b'"', b'\\', b'u', b'd', b'c', b'0', b'-', b'.', b'e', b'x', b' ', b'\n', b'{', b'}', b'[',
        b']', b',', b':', b't', b'n', 0x01,
    ] {
        for i in 0..text.len() {
            let mut bytes = text.as_bytes().to_vec();
            bytes[i] = b;
            assert_first_offending(&bytes);
        }
    }
}

proptest::proptest! {
    #![proptest_config(crate::test_support::fixed_seed(2000, 0x10ca_7e00))]

    /// Token soup from the JSON alphabet: every `invalid_json` is located at its first
    /// offending byte.
    #[test]
    fn token_soup_is_located_at_the_first_offending_byte(tokens in proptest::collection::vec(
        proptest::sample::select(vec![
            "{", "}", "[", "]", ",", ":", " ", "\n", "\"", "\"k\"", "\\", "\\u", "d83d", "de00",
            "dc", "0", "-", "1", ".", "e", "+", "tr", "ue", "null", "é", "日", "\u{1}", "\\n",
            "\\ud800", "\"\\u0061\"",
        ]),
        0..24,
    )) {
        assert_first_offending(tokens.concat().as_bytes());
    }
}
