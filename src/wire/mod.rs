//! The wire types, generated from `schema/` by `weight-manifest-codegen`.
//!
//! They are the shapes of the documents, nothing more: values of these types are not
//! validated. The validated domain values ([`crate::Placement`] and friends) hold them.

#[rustfmt::skip]
#[allow(clippy::all, clippy::pedantic, missing_docs)]
mod generated;
pub use generated::*;

// Generated for every wire type: not every writer has a caller.
#[rustfmt::skip]
#[allow(dead_code, clippy::wildcard_imports, clippy::too_many_arguments)]
pub(crate) mod writers;
pub use writers::key;

/// The position of `name` in `fields` (a wire type's `FIELDS`, or any list of names), for
/// `const` items and blocks.
///
/// # Panics
///
/// When `name` is not in `fields`; evaluated in a `const` item or block, that is a build
/// error, which is what it is for.
pub const fn field_index(fields: &[&str], name: &str) -> usize {
    let mut i = 0;
    while i < fields.len() {
        if same(fields[i], name) {
            return i;
        }
        i += 1;
    }
    panic!("not a member of the list")
}

/// Whether two strings are equal, at compile time.
const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}
