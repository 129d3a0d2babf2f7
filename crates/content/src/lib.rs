//! Layout-independent content digests of weight tensors (contract §19).
//!
//! A tensor's bytes are cut into blocks along its innermost dimension (a block is a run of
//! at most `block_elements` elements of one row). Each block is hashed with XXH3-128 and
//! bound to its tensor and coordinate; the tensor digest is the sum of those values modulo
//! 2^128. Any partition of the tensor into fragments therefore yields partials that add up
//! to the same digest: a trainer holding TP8/PP4 and a rollout holding TP4/PP8 compare
//! digests, not fragments. The pieces, one module each:
//!
//! - [`hash`]: the three XXH3-128 calls of the definition (tensor key, block content,
//!   block value) and the [`Digest`] text form;
//! - [`tensor`]: a tensor's validated geometry ([`Tensor`]) and fragment boxes;
//! - [`walk`]: the rows of a box inside a row-major buffer, and the blocks of a row piece;
//! - [`partial`]: a fragment's [`Partial`] (the sum of its whole blocks and the pieces of the
//!   blocks it holds only part of) and the digest of a whole tensor;
//! - [`mod@combine`]: partials of one tensor combined into its digest, replicas once, distinct
//!   boxes partitioning the tensor;
//! - [`blocks`]: the value of every whole block of a fragment (for delta updates);
//! - [`strided`]: a strided view of a fragment in a caller's memory, gathered row-major;
//! - [`manifest`]: the content manifest document (`schema/content.schema.json`).
//!
//! The construction protects against accidental corruption (bit flips, torn or skipped
//! writes, data at the wrong offset), not against an adversary: XXH3 is not a
//! cryptographic hash, and sums of hashes modulo 2^128 admit generalized-birthday attacks.
//!
//! ```
//! use weight_manifest_content::{combine, partial, Fragment, Tensor};
//!
//! let tensor = Tensor::new("w", &[2, 6], 1, 4)?;
//! let bytes: Vec<u8> = (0..12).collect();
//! let whole = partial::digest(&tensor, &bytes)?;
//! // Two column halves, cutting the blocks of each row at element 3.
//! let left: Vec<u8> = vec![0, 1, 2, 6, 7, 8];
//! let right: Vec<u8> = vec![3, 4, 5, 9, 10, 11];
//! let a = partial::partial(&tensor, &[0, 0], &[2, 3], &left)?;
//! let b = partial::partial(&tensor, &[0, 3], &[2, 3], &right)?;
//! let parts = [
//!     Fragment { global_offset: &[0, 0], local_shape: &[2, 3], partial: &a },
//!     Fragment { global_offset: &[0, 3], local_shape: &[2, 3], partial: &b },
//! ];
//! assert_eq!(combine::combine(&tensor, &parts)?, whole);
//! assert!(whole.to_string().starts_with("xxh3sum128:"));
//! # Ok::<(), weight_manifest::Error>(())
//! ```

#![forbid(unsafe_code)]

pub mod blocks;
pub mod combine;
mod errors;
pub mod hash;
pub mod manifest;
pub mod partial;
pub mod strided;
pub mod tensor;
pub mod walk;

pub use blocks::{block_values, BlockValue};
pub use combine::{combine, Fragment};
pub use hash::Digest;
pub use partial::{Edge, Partial};
pub use tensor::{Tensor, DEFAULT_BLOCK_ELEMENTS};
