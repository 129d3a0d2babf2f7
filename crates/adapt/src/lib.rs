//! Rule-driven adapter: a canonical placement from a safetensors checkpoint and a rules
//! file, without a framework.
//!
//! The contract never infers semantics from tensor names; a framework adapter states them.
//! This adapter states them through explicit rules (`schema/adapter-rules.schema.json`):
//! each tensor is placed by the first rule whose regex matches its whole name, and a tensor
//! that no rule matches is an error. The pieces, one module each:
//!
//! - [`header`]: one safetensors header (names, dtypes, shapes) parsed and validated;
//! - [`checkpoint`]: the files — one `model.safetensors` or a sharded checkpoint through
//!   `model.safetensors.index.json` — read header-only, never the tensor data;
//! - [`rules`] (and its structural parser): the rules file as a compiled [`Rules`] value;
//! - [`layout`] (with `assign`): the rank grid, pipeline stages, expert ownership and
//!   even splits (in whole pieces of a model dimension where a rule says so);
//! - [`fuse`]: tensors an engine holds fused in one buffer (vLLM's `qkv_proj`);
//! - [`build`]: the placement, validated by [`weight_manifest::Placement::from_wire`] so every contract
//!   rule applies, and [`inventory`]: a runtime inventory template for tests and demos.
//!
//! ```
//! use weight_manifest::Options;
//! use weight_manifest_adapt::{self as adapt, AdaptOptions, Checkpoint, Grid, Rules};
//!
//! let header = br#"{"emb.weight":{"dtype":"BF16","shape":[8,4],"data_offsets":[0,64]},
//!                   "layers.0.w":{"dtype":"F32","shape":[4,4],"data_offsets":[64,128]}}"#;
//! let checkpoint = Checkpoint::from_header(header, "model.safetensors")?;
//! let rules = Rules::from_json(r#"{"layout_fingerprint": "demo:v1", "rules": [
//!     {"match": "emb\\.weight", "action": {"split": {"dim": 0, "over": "tp"}}},
//!     {"match": "layers\\.(?P<layer>\\d+)\\.w", "action": "replicate"}]}"#, &Options::default())?;
//! let options = AdaptOptions::new("demo", "r1", Grid { dp: 1, pp: 1, tp: 2, ep: 1 });
//! let placement = adapt::placement(&checkpoint, &rules, &options)?;
//! assert_eq!(placement.fragments().len(), 4);
//! assert_eq!(placement.fragments()[0].placement_fragment_id, "emb.weight@dp0.pp0.tp0.ep0");
//! assert_eq!(placement.tensors()[1].layer_id, Some(0));
//! # Ok::<(), weight_manifest::Error>(())
//! ```

mod assign;
pub mod build;
pub mod checkpoint;
pub mod fuse;
pub mod header;
pub mod inventory;
pub mod layout;
pub mod rules;
mod rules_parse;

pub use build::{adapt, placement, Adapted};
pub use checkpoint::{read_checkpoint, Checkpoint, ReadError};
pub use fuse::Fusion;
pub use header::HeaderTensor;
pub use inventory::{runtime_inventory_template, runtime_inventory_template_fused};
pub use rules::Rules;

use std::collections::BTreeMap;

use weight_manifest::error::{Code, Error};

/// The rank grid: every placement fragment sits on one (dp, pp, tp, ep) coordinate with
/// each coordinate below its size here. Every size must be at least 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grid {
    /// Data-parallel replicas; each repeats the whole layout.
    pub dp: u64,
    /// Pipeline stages.
    pub pp: u64,
    /// Tensor-parallel ranks per stage.
    pub tp: u64,
    /// Expert-parallel ranks per stage.
    pub ep: u64,
}

impl Default for Grid {
    fn default() -> Self {
        Grid {
            dp: 1,
            pp: 1,
            tp: 1,
            ep: 1,
        }
    }
}

impl Grid {
    /// Checks that every size is at least 1 (`adapt_grid_invalid`).
    pub fn check(&self) -> Result<(), Error> {
        for (name, size) in [
            ("dp", self.dp),
            ("pp", self.pp),
            ("tp", self.tp),
            ("ep", self.ep),
        ] {
            if size == 0 {
                return Err(Error::new(
                    Code::AdaptGridInvalid,
                    format!("{name} must be at least 1"),
                ));
            }
        }
        Ok(())
    }
}

/// What the placement is for: the model's id and revision, the rank grid and the model
/// dimensions the rules count pieces in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdaptOptions {
    /// The placement's model_id.
    pub model_id: String,
    /// The placement's revision.
    pub revision: String,
    /// The rank grid.
    pub grid: Grid,
    /// Model dimensions by name (`heads`, `kv_heads`, ...), for splits with `pieces`.
    pub dims: BTreeMap<String, u64>,
}

impl AdaptOptions {
    /// Options for `model_id` at `revision` on `grid`.
    pub fn new(model_id: impl Into<String>, revision: impl Into<String>, grid: Grid) -> Self {
        AdaptOptions {
            model_id: model_id.into(),
            revision: revision.into(),
            grid,
            dims: BTreeMap::new(),
        }
    }

    /// These options with the model dimension `name` set to `value`.
    #[must_use]
    pub fn with_dim(mut self, name: impl Into<String>, value: u64) -> Self {
        self.dims.insert(name.into(), value);
        self
    }
}

/// The most fragments one adaptation may produce (tensors × pieces × dp). A larger grid is
/// `adapt_grid_invalid` before anything is allocated.
pub const MAX_FRAGMENTS: u64 = 10_000_000;

/// An error with `code` at the JSON `pointer` of the rules file (or the index file).
pub(crate) fn error_at(
    code: Code,
    message: impl Into<String>,
    pointer: impl Into<String>,
) -> Error {
    Error::new(code, message).with_pointer(Some(pointer.into()))
}

/// The pointer of rule `index`, or of one of its members when `tail` is not empty.
pub(crate) fn rule_pointer(index: usize, tail: &str) -> String {
    format!("/rules/{index}{tail}")
}
