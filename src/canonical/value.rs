//! Canonical encoding of the reader's document tree, without recursion.

use std::slice;
use std::vec;

use super::escape::{write_integer_text, write_str, write_u64};
use super::sink::{EncodeError, Sink};
use crate::value::Value;

/// An open array or object: the elements or (sorted) members still to write.
enum Frame<'v, 'a> {
    Array(slice::Iter<'v, Value<'a>>),
    Object(vec::IntoIter<(&'v str, &'v Value<'a>)>),
}

/// Encodes a document tree canonically into `sink` (contract §5).
///
/// Object members are written sorted by key in code point order; integers held as text
/// (`NegInt`, `BigUInt`) are written normalised. Nesting depth is not limited by the native
/// stack.
///
/// # Errors
///
/// A `Float` (non-integer numbers never occur in emitted documents), an integer text that
/// is not decimal, or an object with two equal keys.
pub fn encode_value<S: Sink + ?Sized>(value: &Value<'_>, sink: &mut S) -> Result<(), EncodeError> {
    let mut stack: Vec<(Frame<'_, '_>, bool)> = Vec::new();
    open(value, sink, &mut stack)?;
    while let Some((frame, first)) = stack.last_mut() {
        let next = match frame {
            Frame::Array(items) => items.next().map(|item| (None, item)),
            Frame::Object(members) => members.next().map(|(key, item)| (Some(key), item)),
        };
        let Some((key, item)) = next else {
            sink.put(match frame {
                Frame::Array(_) => b"]",
                Frame::Object(_) => b"}",
            });
            stack.pop();
            continue;
        };
        if !*first {
            sink.put(b",");
        }
        *first = false;
        if let Some(key) = key {
            write_str(sink, key);
            sink.put(b":");
        }
        open(item, sink, &mut stack)?;
    }
    Ok(())
}

/// Writes a scalar completely, or the opening bracket of a container and pushes its frame.
fn open<'v, 'a, S: Sink + ?Sized>(
    value: &'v Value<'a>,
    sink: &mut S,
    stack: &mut Vec<(Frame<'v, 'a>, bool)>,
) -> Result<(), EncodeError> {
    match value {
        Value::Null => sink.put(b"null"),
        Value::Bool(true) => sink.put(b"true"),
        Value::Bool(false) => sink.put(b"false"),
        Value::UInt(n) => write_u64(sink, *n),
        Value::NegInt(text) => write_integer_text(sink, text, true)?,
        Value::BigUInt(text) => write_integer_text(sink, text, false)?,
        Value::Float(text) => {
            return Err(EncodeError::new(format!(
                "a non-integer number cannot be encoded canonically: {text}"
            )));
        }
        Value::Str(text) => write_str(sink, text),
        Value::Array(items) => {
            sink.put(b"[");
            stack.push((Frame::Array(items.iter()), true));
        }
        Value::Object(object) => {
            let mut members: Vec<(&str, &Value<'a>)> = object.iter().collect();
            members.sort_unstable_by(|a, b| a.0.cmp(b.0));
            if let Some(pair) = members.windows(2).find(|pair| pair[0].0 == pair[1].0) {
                return Err(EncodeError::new(format!(
                    "duplicate object key: {}",
                    pair[0].0
                )));
            }
            sink.put(b"{");
            stack.push((Frame::Object(members.into_iter()), true));
        }
    }
    Ok(())
}
