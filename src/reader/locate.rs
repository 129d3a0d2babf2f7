//! JSON pointers for the reader's `limit_exceeded`, `non_finite_number` and
//! `duplicate_key` errors, computed from the parser's stack of open containers only when
//! such an error is reported. (`invalid_json` has a line and column instead: the text is
//! not a document a pointer could resolve in.)

use super::frame::Frame;
use crate::code::Code;
use crate::error::Error;

/// Locates a limit or non-finite-number error raised while reading the value (or member
/// name) at the current position; other errors pass unchanged. `into_top` as in
/// [`pointer`].
#[cold]
pub(super) fn locate(error: Error, frames: &[Frame<'_>], values: usize, into_top: bool) -> Error {
    let located = matches!(error.code(), Code::LimitExceeded | Code::NonFiniteNumber);
    if located && error.path().is_none() {
        let at = pointer(frames, values, into_top);
        error.with_pointer(Some(at))
    } else {
        error
    }
}

/// The RFC 6901 pointer of the value being read: each open container contributes the
/// index or key of the child being read in it. With `into_top` false the innermost
/// container itself is meant (a member name being read: the object holding it).
///
/// An open array's current index is the number of its finished children, which lie on the
/// shared value stack from its `start` to the `start` of the next deeper open array (or to
/// the top, `values`): objects keep their members on a stack of their own.
#[cold]
pub(super) fn pointer(frames: &[Frame<'_>], values: usize, into_top: bool) -> String {
    let upto = if into_top {
        frames.len()
    } else {
        frames.len().saturating_sub(1)
    };
    let mut out = String::new();
    for (k, frame) in frames.iter().enumerate().take(upto) {
        out.push('/');
        match frame {
            Frame::Array { start } => {
                let end = frames
                    .get(k + 1..)
                    .unwrap_or_default()
                    .iter()
                    .find_map(|f| match f {
                        Frame::Array { start } => Some(*start),
                        Frame::Object { .. } => None,
                    })
                    .unwrap_or(values);
                out.push_str(&end.saturating_sub(*start).to_string());
            }
            Frame::Object { key, .. } => escape_into(&mut out, key),
        }
    }
    out
}

/// The pointer of member `key` of the innermost open object (a duplicate key: the object
/// is complete, its frame still open).
#[cold]
pub(super) fn member_pointer(frames: &[Frame<'_>], values: usize, key: &str) -> String {
    let mut out = pointer(frames, values, false);
    out.push('/');
    escape_into(&mut out, key);
    out
}

/// Appends `key` as an RFC 6901 reference token (`~` as `~0`, `/` as `~1`).
fn escape_into(out: &mut String, key: &str) {
    for c in key.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
}
