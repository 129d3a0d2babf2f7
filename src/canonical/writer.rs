//! The direct canonical writer: [`Canonical`], implemented here for the leaves (integers,
//! strings, arrays, null) and generated for the wire types (`src/wire/writers.rs`), whose
//! writers put their keys as literals in sorted order. Byte for byte what the serde
//! [`Encoder`](super::ser::Encoder) writes (tested in `super::tests`), without its
//! per-member calls: the identities of a large placement are dominated by these bytes.

use super::escape::{write_str, write_u64};
use super::sink::Sink;

/// A value with a canonical encoding (contract §5) written straight into a [`Sink`].
pub trait Canonical {
    /// Appends the canonical encoding of `self` to `out`.
    fn write_canonical<S: Sink + ?Sized>(&self, out: &mut S);
}

impl Canonical for u64 {
    #[inline]
    fn write_canonical<S: Sink + ?Sized>(&self, out: &mut S) {
        write_u64(out, *self);
    }
}

impl Canonical for bool {
    #[inline]
    fn write_canonical<S: Sink + ?Sized>(&self, out: &mut S) {
        out.put(if *self { b"true" } else { b"false" });
    }
}

impl Canonical for str {
    #[inline]
    fn write_canonical<S: Sink + ?Sized>(&self, out: &mut S) {
        write_str(out, self);
    }
}

impl Canonical for String {
    #[inline]
    fn write_canonical<S: Sink + ?Sized>(&self, out: &mut S) {
        write_str(out, self);
    }
}

impl<T: Canonical> Canonical for [T] {
    fn write_canonical<S: Sink + ?Sized>(&self, out: &mut S) {
        out.put(b"[");
        for (i, item) in self.iter().enumerate() {
            if i > 0 {
                out.put(b",");
            }
            item.write_canonical(out);
        }
        out.put(b"]");
    }
}

impl<T: Canonical, const N: usize> Canonical for [T; N] {
    #[inline]
    fn write_canonical<S: Sink + ?Sized>(&self, out: &mut S) {
        self.as_slice().write_canonical(out);
    }
}

impl<T: Canonical> Canonical for Vec<T> {
    #[inline]
    fn write_canonical<S: Sink + ?Sized>(&self, out: &mut S) {
        self.as_slice().write_canonical(out);
    }
}

impl<T: Canonical> Canonical for Option<T> {
    #[inline]
    fn write_canonical<S: Sink + ?Sized>(&self, out: &mut S) {
        match self {
            Some(value) => value.write_canonical(out),
            None => out.put(b"null"),
        }
    }
}

impl<T: Canonical + ?Sized> Canonical for &T {
    #[inline]
    fn write_canonical<S: Sink + ?Sized>(&self, out: &mut S) {
        (**self).write_canonical(out);
    }
}

/// Text already in the canonical encoding, written as it is (a plan's regions, encoded
/// once as they were produced).
pub(crate) struct Raw<'a>(pub &'a [u8]);

impl Canonical for Raw<'_> {
    #[inline]
    fn write_canonical<S: Sink + ?Sized>(&self, out: &mut S) {
        out.put(self.0);
    }
}

/// A member whose text the caller puts in place afterwards: writes nothing but tells the
/// sink where it stands ([`Sink::hole`]).
pub(crate) struct Hole;

impl Canonical for Hole {
    #[inline]
    fn write_canonical<S: Sink + ?Sized>(&self, out: &mut S) {
        out.hole();
    }
}
