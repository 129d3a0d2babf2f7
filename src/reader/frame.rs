//! The parser's stack element, which the error locator reads to build a pointer.

use std::borrow::Cow;

/// An open array or object. Finished children wait on the parser's shared value and member
/// stacks from `start` on, so each container is allocated once, at its exact size.
pub(super) enum Frame<'a> {
    Array { start: usize },
    Object { start: usize, key: Cow<'a, str> },
}
