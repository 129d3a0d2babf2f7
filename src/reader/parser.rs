//! The iterative parser: one left-to-right pass with an explicit stack of open containers.

use std::borrow::Cow;
use std::mem;

use super::dup;
use super::errors::{duplicate_key, invalid_json, non_finite};
use super::frame::Frame;
use super::locate::{locate, member_pointer, pointer};
use super::scan::{find_special, hex4, parse_u64, skip_digits, skip_whitespace};
use crate::code::Code;
use crate::error::Error;
use crate::limits::{depth_message, string_message, Limits};
use crate::value::{Object, Value};

/// Parser state over one document.
pub(super) struct Parser<'a, 'l> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    label: &'l str,
    /// The nesting limit in force (at most the reader's ceiling).
    max_depth: usize,
    /// The decoded-string limit in force, in UTF-8 bytes.
    max_string: usize,
}

impl<'a, 'l> Parser<'a, 'l> {
    pub(super) fn new(text: &'a str, label: &'l str, limits: &Limits) -> Self {
        Parser {
            text,
            bytes: text.as_bytes(),
            pos: 0,
            label,
            max_depth: limits.effective_depth(),
            max_string: limits.max_string_bytes,
        }
    }

    /// The `limit_exceeded` error for a string of `len` bytes; the caller locates it.
    #[cold]
    fn long_string(&self, len: usize) -> Error {
        Error::new(Code::LimitExceeded, string_message(len, self.max_string))
    }

    /// The `invalid_json` error at the current position (the first offending byte).
    #[cold]
    fn invalid(&self) -> Error {
        self.invalid_at(self.pos)
    }

    /// The `invalid_json` error whose first offending byte is at `offset` (or, at
    /// `bytes.len()`, the text ended early).
    #[cold]
    fn invalid_at(&self, offset: usize) -> Error {
        invalid_json(self.label, self.bytes, offset)
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    #[inline]
    fn skip_ws(&mut self) {
        self.pos = skip_whitespace(self.bytes, self.pos);
    }

    /// The text between two byte offsets that both lie on ASCII bytes or the end.
    #[inline]
    fn slice(&self, start: usize, end: usize) -> Result<&'a str, Error> {
        self.text
            .get(start..end)
            .ok_or_else(|| self.invalid_at(start))
    }

    /// Reads the whole document: one value, optionally surrounded by whitespace.
    pub(super) fn parse(mut self) -> Result<Value<'a>, Error> {
        let mut frames: Vec<Frame<'a>> = Vec::new();
        let mut values: Vec<Value<'a>> = Vec::new();
        let mut members: Vec<(Cow<'a, str>, Value<'a>)> = Vec::new();
        'value: loop {
            self.skip_ws();
            let mut value = match self.peek() {
                Some(open @ (b'[' | b'{')) => {
                    if frames.len() >= self.max_depth {
                        let error = Error::new(Code::LimitExceeded, depth_message(self.max_depth));
                        return Err(error.with_pointer(Some(pointer(&frames, values.len(), true))));
                    }
                    self.pos += 1;
                    self.skip_ws();
                    if open == b'[' {
                        if self.peek() == Some(b']') {
                            self.pos += 1;
                            Value::Array(Vec::new())
                        } else {
                            frames.push(Frame::Array {
                                start: values.len(),
                            });
                            continue 'value;
                        }
                    } else if self.peek() == Some(b'}') {
                        self.pos += 1;
                        Value::Object(Object::default())
                    } else {
                        let key = self
                            .member_key()
                            .map_err(|e| locate(e, &frames, values.len(), true))?;
                        frames.push(Frame::Object {
                            start: members.len(),
                            key,
                        });
                        continue 'value;
                    }
                }
                _ => self
                    .scalar()
                    .map_err(|e| locate(e, &frames, values.len(), true))?,
            };
            // Attach the finished value to its container, closing containers as they end.
            loop {
                match frames.last_mut() {
                    None => {
                        self.skip_ws();
                        return if self.pos == self.bytes.len() {
                            Ok(value)
                        } else {
                            Err(self.invalid())
                        };
                    }
                    Some(Frame::Array { start }) => {
                        values.push(value);
                        self.skip_ws();
                        match self.peek() {
                            Some(b',') => {
                                self.pos += 1;
                                continue 'value;
                            }
                            Some(b']') => {
                                self.pos += 1;
                                let items = values.drain(*start..).collect();
                                frames.pop();
                                value = Value::Array(items);
                            }
                            _ => return Err(self.invalid()),
                        }
                    }
                    Some(Frame::Object { start, key }) => {
                        members.push((mem::take(key), value));
                        self.skip_ws();
                        match self.peek() {
                            Some(b',') => {
                                self.pos += 1;
                                self.skip_ws();
                                match self.member_key() {
                                    Ok(next) => *key = next,
                                    Err(e) => return Err(locate(e, &frames, values.len(), false)),
                                }
                                continue 'value;
                            }
                            Some(b'}') => {
                                self.pos += 1;
                                let start = *start;
                                let open = members.get(start..).unwrap_or_default();
                                if let Some(key) = dup::first_duplicate(open) {
                                    let at = member_pointer(&frames, values.len(), key);
                                    return Err(duplicate_key(key).with_pointer(Some(at)));
                                }
                                let object = members.drain(start..).collect();
                                frames.pop();
                                value = Value::Object(Object::from_members(object));
                            }
                            _ => return Err(self.invalid()),
                        }
                    }
                }
            }
        }
    }

    /// Reads `"key"` and the following `:` (with whitespace around the colon).
    fn member_key(&mut self) -> Result<Cow<'a, str>, Error> {
        if self.peek() != Some(b'"') {
            return Err(self.invalid());
        }
        self.pos += 1;
        let key = self.string()?;
        self.skip_ws();
        if self.peek() != Some(b':') {
            return Err(self.invalid());
        }
        self.pos += 1;
        Ok(key)
    }

    /// Reads a value that is not an array or object, starting at the current byte.
    fn scalar(&mut self) -> Result<Value<'a>, Error> {
        let rest = self.bytes.get(self.pos..).unwrap_or_default();
        let (value, len) = match rest.first() {
            Some(b'"') => {
                self.pos += 1;
                return Ok(Value::Str(self.string()?));
            }
            Some(b'-' | b'0'..=b'9') => return self.number(),
            _ if rest.starts_with(b"true") => (Value::Bool(true), 4),
            _ if rest.starts_with(b"false") => (Value::Bool(false), 5),
            _ if rest.starts_with(b"null") => (Value::Null, 4),
            _ if rest.starts_with(b"NaN") => return Err(non_finite("NaN")),
            _ if rest.starts_with(b"Infinity") => return Err(non_finite("Infinity")),
            _ => return Err(self.invalid_at(self.pos + literal_prefix(rest))),
        };
        self.pos += len;
        Ok(value)
    }

    /// Reads a number (or `-Infinity`); the current byte is `-` or a digit.
    fn number(&mut self) -> Result<Value<'a>, Error> {
        let start = self.pos;
        let negative = self.peek() == Some(b'-');
        if negative {
            self.pos += 1;
        }
        let int_start = self.pos;
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => self.pos = skip_digits(self.bytes, self.pos + 1),
            Some(b'I')
                if self
                    .bytes
                    .get(self.pos..)
                    .unwrap_or_default()
                    .starts_with(b"Infinity") =>
            {
                return Err(non_finite("-Infinity"));
            }
            _ => return Err(self.invalid()),
        }
        let int_end = self.pos;
        let mut integer = true;
        if self.peek() == Some(b'.') {
            self.pos = self.digits_after(self.pos + 1)?;
            integer = false;
        }
        if let Some(b'e' | b'E') = self.peek() {
            let mut at = self.pos + 1;
            if let Some(b'+' | b'-') = self.bytes.get(at) {
                at += 1;
            }
            self.pos = self.digits_after(at)?;
            integer = false;
        }
        let text = Cow::Borrowed(self.slice(start, self.pos)?);
        if !integer {
            return Ok(Value::Float(text));
        }
        let digits = self.bytes.get(int_start..int_end).unwrap_or_default();
        Ok(if negative {
            if digits == b"0" {
                Value::UInt(0)
            } else {
                Value::NegInt(text)
            }
        } else {
            match parse_u64(digits) {
                Some(n) => Value::UInt(n),
                None => Value::BigUInt(text),
            }
        })
    }

    /// The end of a run of at least one digit starting at `at`.
    fn digits_after(&self, at: usize) -> Result<usize, Error> {
        let end = skip_digits(self.bytes, at);
        if end == at {
            Err(self.invalid_at(at))
        } else {
            Ok(end)
        }
    }

    /// Reads the rest of a string whose opening quote has been consumed.
    #[inline]
    fn string(&mut self) -> Result<Cow<'a, str>, Error> {
        let start = self.pos;
        let end = find_special(self.bytes, start);
        match self.bytes.get(end) {
            Some(b'"') => {
                self.pos = end + 1;
                if end - start > self.max_string {
                    return Err(self.long_string(end - start));
                }
                Ok(Cow::Borrowed(self.slice(start, end)?))
            }
            Some(b'\\') => {
                let mut owned = String::with_capacity(end - start + 16);
                owned.push_str(self.slice(start, end)?);
                self.pos = end;
                self.escaped_string(owned).map(Cow::Owned)
            }
            // A control character, or the end of the text.
            _ => Err(self.invalid_at(end)),
        }
    }

    /// Continues a string at a backslash, decoding escapes into `out`.
    fn escaped_string(&mut self, mut out: String) -> Result<String, Error> {
        loop {
            // The current byte is the backslash of an escape.
            let escape_at = self.pos + 1;
            let escape = self.bytes.get(escape_at).copied();
            self.pos += 2;
            let decoded = match escape {
                Some(b'"') => '"',
                Some(b'\\') => '\\',
                Some(b'/') => '/',
                Some(b'b') => '\u{8}',
                Some(b'f') => '\u{c}',
                Some(b'n') => '\n',
                Some(b'r') => '\r',
                Some(b't') => '\t',
                Some(b'u') => self.unicode_escape()?,
                _ => return Err(self.invalid_at(escape_at)),
            };
            out.push(decoded);
            let start = self.pos;
            let end = find_special(self.bytes, start);
            out.push_str(self.slice(start, end)?);
            match self.bytes.get(end) {
                Some(b'"') => {
                    self.pos = end + 1;
                    if out.len() > self.max_string {
                        return Err(self.long_string(out.len()));
                    }
                    return Ok(out);
                }
                Some(b'\\') => self.pos = end,
                _ => return Err(self.invalid_at(end)),
            }
        }
    }

    /// Decodes the hex digits of a `\u` escape (after the `u`), joining a surrogate pair.
    fn unicode_escape(&mut self) -> Result<char, Error> {
        let first = self.pos;
        let unit = match hex4(self.bytes, first) {
            Some(unit) if !(0xDC00..=0xDFFF).contains(&unit) => unit,
            _ => return Err(self.invalid_at(self.bad_escape(first))),
        };
        self.pos += 4;
        let scalar = match unit {
            0xD800..=0xDBFF => {
                let next = self.bytes.get(self.pos..).unwrap_or_default();
                if !next.starts_with(b"\\u") {
                    let matched = usize::from(next.first() == Some(&b'\\'));
                    return Err(self.invalid_at(self.pos + matched));
                }
                let low_at = self.pos + 2;
                let Some(low @ 0xDC00..=0xDFFF) = hex4(self.bytes, low_at) else {
                    return Err(self.invalid_at(self.bad_low_surrogate(low_at)));
                };
                self.pos += 6;
                0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
            }
            _ => unit,
        };
        char::from_u32(scalar).ok_or_else(|| self.invalid_at(first))
    }

    /// The first offending byte of a `\u` escape whose hex digits start at `first` and that
    /// does not begin a scalar value: a byte that is no hex digit (or the end of the text),
    /// or the second digit of a lone low surrogate (`\uDC00` to `\uDFFF`).
    #[cold]
    fn bad_escape(&self, first: usize) -> usize {
        let lead = self.bytes.get(first).copied();
        (first..first + 4)
            .find(|&i| match self.bytes.get(i) {
                Some(&b) if i == first + 1 && matches!(lead, Some(b'd' | b'D')) => {
                    !matches!(b, b'0'..=b'9' | b'a'..=b'b' | b'A'..=b'B')
                }
                Some(b) => !b.is_ascii_hexdigit(),
                None => true,
            })
            .unwrap_or(first)
    }

    /// The first offending byte of the `\u` escape after a high surrogate, whose hex digits
    /// start at `first` and that is not a low surrogate (`\uDC00` to `\uDFFF`).
    #[cold]
    fn bad_low_surrogate(&self, first: usize) -> usize {
        (first..first + 4)
            .find(|&i| match self.bytes.get(i) {
                Some(b'd' | b'D') if i == first => false,
                Some(b'c'..=b'f' | b'C'..=b'F') if i == first + 1 => false,
                Some(b) if i >= first + 2 => !b.is_ascii_hexdigit(),
                _ => true,
            })
            .unwrap_or(first)
    }
}

/// The length of the longest beginning of `rest` that is a beginning of the literal
/// (`true`, `false`, `null`) its first byte starts: where a cut-off or misspelt literal
/// stops being one.
#[cold]
fn literal_prefix(rest: &[u8]) -> usize {
    let literal: &[u8] = match rest.first() {
        Some(b't') => b"true",
        Some(b'f') => b"false",
        Some(b'n') => b"null",
        _ => return 0,
    };
    rest.iter().zip(literal).take_while(|(a, b)| a == b).count()
}
