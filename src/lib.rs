//! # weight-manifest
//!
//! A schema-first implementation of the framework-neutral model-weight manifest
//! contract: where each piece of every weight tensor of a sharded model lives.
//!
//! - **placement** ([`Placement`]): stable, address-free, with a canonical
//!   `placement_id` and `digest` that match the reference implementation byte for byte;
//! - **runtime snapshot** ([`Runtime`]) and **binding** ([`Binding`]): where each fragment
//!   lives now, fenced by a lease and a generation;
//! - **inventories** ([`inventory`]), **projections** ([`project_placement`],
//!   [`project_binding`]) and [`bind`], each validated fail-closed.
//!
//! Every rejection is an [`Error`] with a stable [`Code`], the contract's message and,
//! where defined, a JSON pointer.
//!
//! ```
//! let text = r#"{"fragments":[],"model_id":"m","placement_id":null,"revision":"r","tensors":[]}"#;
//! let placement = weight_manifest::Placement::from_json(text, &weight_manifest::Options::default()).unwrap();
//! assert_eq!(
//!     placement.placement_id(),
//!     "sha256:65e60da33f39b251b1b47dfc71795c890e90c56bbab9c16ff7ab2414dcd15fd1"
//! );
//! assert_eq!(
//!     placement.digest(),
//!     "2a889d6332b8b3ef102d1a0a3a49d34c83b56ff0e903df59a6d218d573e74960"
//! );
//!
//! let bad = r#"{"fragments":[],"model_id":"","placement_id":null,"revision":"r","tensors":[]}"#;
//! let error = weight_manifest::Placement::from_json(bad, &weight_manifest::Options::default()).unwrap_err();
//! assert_eq!(error.code().as_str(), "empty_string");
//! assert_eq!(error.path(), Some("/model_id"));
//! ```

#![forbid(unsafe_code)]

pub mod canonical;
pub mod code;
pub mod coverage;
pub mod detail;
pub mod document;
pub mod error;
pub mod fence;
pub mod inventory;
pub mod limits;
mod options;
pub mod path;
pub mod plan;
pub mod plan_bind;
pub mod reader;
pub mod rules;
pub mod schema;
pub mod util;
pub mod value;
pub mod wire;

#[cfg(test)]
mod test_support;

mod bind;
pub mod construct;
mod derived;
mod geometry;
mod identity;
mod locate;
mod model;
mod parse;
mod project;

pub use bind::bind;
pub use code::Code;
pub use coverage::{coverage, Coverage};
pub use error::{Detail, DocumentKind, Error, Result};
pub use identity::logical_fragment_id;
pub use limits::{LimitSettingError, Limits};
pub use model::{Binding, Owner, Placement, Runtime};
pub use options::{AddressSemantics, Options, OwnerResolver};
pub use path::Path;
pub use plan::{
    plan, plan_quantized, plan_with_choice, Plan, PlanLimits, Quantization, ReplicaChoice,
    ReplicaPolicy, SourceHosts,
};
pub use plan_bind::{bind_plan, BoundPlan, Fences};
pub use project::{
    placement_fragment_id, project_binding, project_binding_value, project_placement,
    project_placement_value,
};
pub use value::{Object, Value};
