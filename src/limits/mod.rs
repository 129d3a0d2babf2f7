//! Fail-closed limits on the documents this crate reads (SECURITY.md, "Limits in force").
//!
//! Every document constructor reads under the [`Limits`] of the [`Options`](crate::Options)
//! it takes ([`Limits::default()`] unless set); [`coverage`](crate::coverage()) takes a
//! `Limits` and [`plan`](crate::plan()) its [`PlanLimits`](crate::PlanLimits).
//! A document over a limit is rejected with `limit_exceeded`; the message names the limit
//! and its value, and the pointer is the element at which the limit is crossed.
//!
//! Where each limit is checked:
//!
//! - `max_document_bytes`: before anything is read (pointer `""`);
//! - `max_depth`, `max_string_bytes`: by the strict reader, left to right, at the array,
//!   object or string that crosses the limit (for a member name: the object holding it);
//! - `max_tensors`, `max_fragments`: by the parsers and inventory readers, right after a
//!   member is found to be a sequence and before any of its elements is checked (pointer:
//!   the sequence); in an inventory, distinct tensor_ids are counted as records are read
//!   (pointer: the record that adds one too many);
//! - `max_dims`: on each tensor descriptor's `global_shape`, before the descriptor checks
//!   (pointer: the `global_shape` member);
//! - `max_geometry_work`: by the box searches (the §8.3 same-rank overlap sweep, coverage's
//!   tiling analysis, the planner's source search), as they run; the message names the
//!   tensor and there is no pointer. The readers apply their `Options`' value to the
//!   validation they run, [`crate::plan()`] its `PlanLimits::max_geometry_work` and
//!   [`crate::coverage()`] its `Limits`'.
//!
//! The fast parse paths never decide over a limit: whenever a limit could be exceeded they
//! hand the document to the general path, which reports it.

use std::fmt;

use crate::error::{Code, Error, Result};
use crate::path::Path;
use crate::value::Value;
use crate::wire::TensorDescriptor;

#[cfg(test)]
mod tests;

/// The deepest nesting any [`Limits::max_depth`] can allow: the reader never builds a
/// deeper tree, whatever the limit says, so dropping or encoding a tree (both recursive)
/// cannot exhaust the native stack.
pub const MAX_DEPTH_CEILING: usize = 512;

/// The limits a document is read under. [`Limits::default()`] accepts every realistic
/// manifest (the largest benchmark workload, a Kimi-K2 runtime inventory of 722 MB and
/// 1,063,440 fragments, is well inside every default) and bounds what a hostile document
/// can make the reader allocate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Bytes of document text, checked before anything is read. Default 1 GiB (2^30):
    /// about 1.4x the largest known inventory (722 MB); memory use is linear in it.
    pub max_document_bytes: u64,
    /// Nesting depth of arrays and objects (the top-level container is depth 1). Default
    /// 128: manifests nest at most 4 deep. Values above [`MAX_DEPTH_CEILING`] act as the
    /// ceiling.
    pub max_depth: usize,
    /// Dimensions per tensor (`global_shape` length). Default 64: far above any real
    /// tensor (PyTorch allows 64, most frameworks fewer), and it keeps per-dimension work
    /// (box overlap, byte products) small.
    pub max_dims: usize,
    /// Tensors per manifest (in an inventory: distinct tensor_ids). Default 2^22
    /// (4,194,304): about 60x the tensors of the largest MoE checkpoints.
    pub max_tensors: usize,
    /// Fragments per manifest; in an inventory, records (one record is one fragment).
    /// Default 2^24 (16,777,216): about 16x the 1,063,440 fragments of a Kimi-K2 runtime
    /// inventory.
    pub max_fragments: usize,
    /// UTF-8 bytes of one decoded string, member names included. Default 65,536: ids,
    /// dtypes, fingerprints and endpoints are short; a longer string is an attack or a bug.
    pub max_string_bytes: usize,
    /// Work units per box for one box-intersection search (a unit: one index node visited
    /// or one box compared); a search over n boxes, stored and queried, may spend n times
    /// this. Default 4,096: the searches of every real layout spend a few dozen units a
    /// box (O(log n)), the hostile slab layouts of SECURITY.md about a hundred; the index's
    /// worst case, O(n^(1−1/D)) a box for D = 2 × axes, grows with the dimension, and this
    /// caps it.
    pub max_geometry_work: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_document_bytes: 1 << 30,
            max_depth: 128,
            max_dims: 64,
            max_tensors: 1 << 22,
            max_fragments: 1 << 24,
            max_string_bytes: 65_536,
            max_geometry_work: DEFAULT_MAX_GEOMETRY_WORK,
        }
    }
}

/// Default [`Limits::max_geometry_work`].
pub const DEFAULT_MAX_GEOMETRY_WORK: u64 = 4096;

impl Limits {
    /// The names [`Limits::set`] accepts, in field order.
    pub const NAMES: [&'static str; 7] = [
        "max_document_bytes",
        "max_depth",
        "max_dims",
        "max_tensors",
        "max_fragments",
        "max_string_bytes",
        "max_geometry_work",
    ];

    /// Sets the limit `name` (a field name, see [`Limits::NAMES`]) to `value`, a decimal
    /// integer (`_` separators allowed). `max_depth` accepts at most
    /// [`MAX_DEPTH_CEILING`].
    ///
    /// # Errors
    ///
    /// [`LimitSettingError`]: an unknown name, a value that is not a decimal integer in
    /// range, or a depth above the ceiling.
    pub fn set(&mut self, name: &str, value: &str) -> std::result::Result<(), LimitSettingError> {
        let digits: String = value.chars().filter(|c| *c != '_').collect();
        let bad = || LimitSettingError::InvalidValue {
            name: name.to_owned(),
            value: value.to_owned(),
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let number: u64 = digits.parse().map_err(|_| bad())?;
        let size = || usize::try_from(number).map_err(|_| bad());
        match name {
            "max_document_bytes" => self.max_document_bytes = number,
            "max_depth" => {
                let depth = size()?;
                if depth > MAX_DEPTH_CEILING {
                    return Err(LimitSettingError::AboveCeiling {
                        name: name.to_owned(),
                        value: depth,
                        ceiling: MAX_DEPTH_CEILING,
                    });
                }
                self.max_depth = depth;
            }
            "max_dims" => self.max_dims = size()?,
            "max_tensors" => self.max_tensors = size()?,
            "max_fragments" => self.max_fragments = size()?,
            "max_string_bytes" => self.max_string_bytes = size()?,
            "max_geometry_work" => self.max_geometry_work = number,
            _ => {
                return Err(LimitSettingError::UnknownName {
                    name: name.to_owned(),
                })
            }
        }
        Ok(())
    }

    /// Applies one `NAME=VALUE` setting (the CLI's `--limit`).
    ///
    /// # Errors
    ///
    /// As [`Limits::set`], or [`LimitSettingError::NotAPair`] for a setting without `=`.
    pub fn set_pair(&mut self, setting: &str) -> std::result::Result<(), LimitSettingError> {
        let (name, value) = setting
            .split_once('=')
            .ok_or_else(|| LimitSettingError::NotAPair {
                setting: setting.to_owned(),
            })?;
        self.set(name.trim(), value.trim())
    }

    /// The nesting depth the reader enforces: `max_depth`, at most [`MAX_DEPTH_CEILING`].
    pub fn effective_depth(&self) -> usize {
        self.max_depth.min(MAX_DEPTH_CEILING)
    }

    /// `max_document_bytes` on a document of `len` bytes.
    ///
    /// # Errors
    ///
    /// `limit_exceeded` at the root when `len` is above `max_document_bytes`.
    pub fn check_document_bytes(&self, len: usize) -> Result<()> {
        let len = u64::try_from(len).unwrap_or(u64::MAX);
        if len > self.max_document_bytes {
            return Err(exceeded(
                format!(
                    "document of {len} bytes exceeds max_document_bytes ({})",
                    self.max_document_bytes
                ),
                &Path::Root,
            ));
        }
        Ok(())
    }

    /// `max_tensors` on a sequence of `len` tensors at `path`.
    pub fn check_tensors(&self, len: usize, path: &Path<'_>) -> Result<()> {
        check_count(len, "tensors", "max_tensors", self.max_tensors, path)
    }

    /// `max_fragments` on a sequence of `len` fragments (or inventory records) at `path`.
    pub fn check_fragments(&self, len: usize, path: &Path<'_>) -> Result<()> {
        check_count(len, "fragments", "max_fragments", self.max_fragments, path)
    }

    /// `max_dims` on a `global_shape` member at `path`: only an array is counted (any
    /// other value is left to the descriptor checks).
    pub fn check_dims(&self, global_shape: &Value<'_>, path: &Path<'_>) -> Result<()> {
        match global_shape {
            Value::Array(dims) if dims.len() > self.max_dims => Err(exceeded(
                format!(
                    "tensor has {} dimensions, above max_dims ({})",
                    dims.len(),
                    self.max_dims
                ),
                path,
            )),
            _ => Ok(()),
        }
    }

    /// Whether the limits admit every shape the fast paths accept without looking: they
    /// read containers nested 4 deep and match member names (at most 21 bytes) as
    /// literals, so smaller limits leave the document to the general path.
    pub(crate) fn admits_fast_shapes(&self) -> bool {
        self.effective_depth() >= 4 && self.max_string_bytes >= 32
    }

    /// Whether a fast path's result is within the count limits: `max_tensors`,
    /// `max_fragments` and `max_dims` (every other limit is checked as it reads).
    pub(crate) fn admits_counts(&self, tensors: &[TensorDescriptor], fragments: usize) -> bool {
        tensors.len() <= self.max_tensors
            && fragments <= self.max_fragments
            && tensors
                .iter()
                .all(|t| t.global_shape.len() <= self.max_dims)
    }
}

fn check_count(len: usize, what: &str, name: &str, limit: usize, path: &Path<'_>) -> Result<()> {
    if len > limit {
        return Err(exceeded(
            format!("{len} {what} exceed {name} ({limit})"),
            path,
        ));
    }
    Ok(())
}

/// A `limit_exceeded` error at `path`.
#[cold]
pub(crate) fn exceeded(message: String, path: &Path<'_>) -> Error {
    Error::at(Code::LimitExceeded, message, path)
}

/// The reader's message for a container nested deeper than `max_depth`.
#[cold]
pub(crate) fn depth_message(max_depth: usize) -> String {
    format!("document nesting depth exceeds max_depth ({max_depth})")
}

/// The reader's message for a string of `len` bytes over `max_string_bytes`.
#[cold]
pub(crate) fn string_message(len: usize, max_string_bytes: usize) -> String {
    format!("string of {len} bytes exceeds max_string_bytes ({max_string_bytes})")
}

impl fmt::Display for Limits {
    /// `NAME=VALUE` pairs, space-separated, in field order.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "max_document_bytes={} max_depth={} max_dims={} max_tensors={} max_fragments={} max_string_bytes={} max_geometry_work={}",
            self.max_document_bytes,
            self.max_depth,
            self.max_dims,
            self.max_tensors,
            self.max_fragments,
            self.max_string_bytes,
            self.max_geometry_work
        )
    }
}

/// Why a limit setting ([`Limits::set`], [`Limits::set_pair`]) was refused. Its
/// `Display` is the message the CLI prints.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LimitSettingError {
    /// The name is not one of [`Limits::NAMES`].
    UnknownName {
        /// The name given.
        name: String,
    },
    /// The value is not a non-negative decimal integer that fits the limit.
    InvalidValue {
        /// The limit's name.
        name: String,
        /// The value given.
        value: String,
    },
    /// The value is above the limit's ceiling ([`MAX_DEPTH_CEILING`] for `max_depth`).
    AboveCeiling {
        /// The limit's name.
        name: String,
        /// The value given.
        value: usize,
        /// The largest value accepted.
        ceiling: usize,
    },
    /// The setting has no `=`.
    NotAPair {
        /// The setting given.
        setting: String,
    },
}

impl std::fmt::Display for LimitSettingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LimitSettingError::UnknownName { name } => write!(
                f,
                "unknown limit {name:?}; the limits are {}",
                Limits::NAMES.join(", ")
            ),
            LimitSettingError::InvalidValue { name, value } => write!(
                f,
                "limit {name}: {value:?} is not a non-negative decimal integer"
            ),
            LimitSettingError::AboveCeiling {
                name,
                value,
                ceiling,
            } => write!(
                f,
                "limit {name}: {value} is above the reader's ceiling of {ceiling}"
            ),
            LimitSettingError::NotAPair { setting } => {
                write!(f, "limit {setting:?} is not NAME=VALUE")
            }
        }
    }
}

impl std::error::Error for LimitSettingError {}
