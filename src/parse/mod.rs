//! Strict parsers of the three wire forms: placement (§6.2), runtime manifest (§9.1) and
//! runtime binding manifest (§9.2). Exact key sets at every level.
//!
//! Each form is a document kind of the reading pipeline ([`crate::document`]), and its
//! type's three constructors are written here: `from_json` (text), `from_value` (a tree a
//! binding built) and `from_wire` (a typed value, encoded canonically and read as text, so
//! that typed and textual input run exactly the same checks).

mod binding;
mod elements;
mod fast;
mod placement;
mod runtime;

#[cfg(test)]
pub(crate) use fast::placement as fast_placement;

use serde::Serialize;

use crate::canonical;

/// The canonical JSON of a generated wire value, which the typed constructors parse so
/// that typed and textual input run exactly the same checks.
pub(crate) fn encode_wire<T: Serialize>(value: &T) -> Vec<u8> {
    canonical::to_vec(value)
        .unwrap_or_else(|e| unreachable!("wire types are always encodable: {e}"))
}
