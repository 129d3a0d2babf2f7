//! Utilities shared by the modules of this crate and by the crates built on it: the fast
//! hasher of the validation maps and sets, and the stable sorts of §1.5 by a string key.
//! A leaf: it imports nothing of the crate.

pub mod fxhash;
pub(crate) mod order;
