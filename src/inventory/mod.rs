//! The three inventory readers (contract §10): the documents through which a framework
//! describes what it holds. Unknown members are ignored at every level; a required member
//! that is absent is `missing_field`, one that is `null` goes on to its check.

mod binding;
mod descriptor;
mod fast;
mod labels;
mod member_reader;
mod placement;
mod record;
mod runtime;
pub(crate) mod summary;
mod validate;

/// The row-major strides a record's `stride` must hold (§10.3 step 4.3.5), for writers of
/// inventories.
pub use crate::rules::stride::row_major_strides;
pub use labels::{BINDING_INVENTORY_LABEL, PLACEMENT_INVENTORY_LABEL, RUNTIME_INVENTORY_LABEL};
pub use record::{
    Record, BINDING_RECORD_MEMBERS, BINDING_TOP_MEMBERS, PLACEMENT_RECORD_MEMBERS,
    PLACEMENT_TOP_MEMBERS, RANK_MEMBERS, RUNTIME_RECORD_MEMBERS, RUNTIME_TOP_MEMBERS,
};
pub use summary::RuntimeSummary;
pub use validate::validate_runtime_inventory;

#[cfg(test)]
pub(crate) use fast::{
    runtime_inventory as fast_runtime_inventory,
    runtime_inventory_summary as fast_runtime_inventory_summary,
};
