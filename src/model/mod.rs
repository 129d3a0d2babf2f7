//! Validated domain values: a value of these types exists only in validated form.

pub(crate) mod descriptor;
pub(crate) mod fragment;
pub(crate) mod rank;

pub(crate) mod binding;
pub(crate) mod order;
mod owner;
mod placement;
pub(crate) mod runtime;

pub use binding::Binding;
pub use owner::Owner;
pub use placement::Placement;
pub use runtime::Runtime;

pub(crate) use binding::construct_binding;
pub(crate) use placement::construct_placement;
pub(crate) use runtime::construct_runtime;
