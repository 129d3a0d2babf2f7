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
mod errors;
pub mod fuse;
pub mod header;
pub mod inventory;
pub mod layout;
mod options;
pub mod rules;
mod rules_parse;
mod tensor_layout;

pub use build::{adapt, placement, Adapted};
pub use checkpoint::{read_checkpoint, Checkpoint, ReadError};
pub use fuse::Fusion;
pub use header::HeaderTensor;
pub use inventory::{runtime_inventory_template, runtime_inventory_template_fused};
pub use options::{AdaptOptions, Grid, MAX_FRAGMENTS};
pub use rules::Rules;
