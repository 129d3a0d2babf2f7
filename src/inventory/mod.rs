//! The three inventory readers (contract §10): the documents through which a framework
//! describes what it holds. Unknown members are ignored at every level; a required member
//! that is absent is `missing_field`, one that is `null` goes on to its check.

mod binding;
mod descriptor;
mod members;
mod placement;
mod record;
mod runtime;
mod summary;

/// The row-major strides a record's `stride` must hold (§10.3 step 4.3.5), for writers of
/// inventories.
pub use crate::rules::stride::row_major_strides;
pub use record::{
    Record, BINDING_RECORD_MEMBERS, BINDING_TOP_MEMBERS, DESCRIPTOR_MEMBERS,
    PLACEMENT_RECORD_MEMBERS, PLACEMENT_TOP_MEMBERS, RANK_MEMBERS, RUNTIME_RECORD_MEMBERS,
    RUNTIME_TOP_MEMBERS,
};
pub use summary::{validate_runtime_inventory, RuntimeSummary};

use crate::error::{Code, Error, Result};
use crate::model::{Binding, Placement, Runtime};
use crate::options::Options;
use crate::reader;
use crate::value::Value;

/// The document label of the runtime inventory (§10.3) in reader messages, e.g.
/// "runtime inventory is not valid JSON".
pub const RUNTIME_INVENTORY_LABEL: &str = "runtime inventory";
/// The document label of the binding inventory (§10.4).
pub const BINDING_INVENTORY_LABEL: &str = "runtime binding inventory";
/// The document label of the placement inventory (§10.5).
pub const PLACEMENT_INVENTORY_LABEL: &str = "placement inventory";

impl Runtime {
    /// Reads a runtime inventory JSON document (§10.3) under `options` (limits, address
    /// semantics, owners); `max_fragments` bounds the records.
    pub fn from_inventory_json(text: impl AsRef<[u8]>, options: &Options<'_>) -> Result<Runtime> {
        options.apply(|| {
            let text = text.as_ref();
            options.limits.check_document_bytes(text.len())?;
            if let Some(result) = crate::parse::fast_runtime_inventory(text, options) {
                return result;
            }
            let document = reader::read(text, RUNTIME_INVENTORY_LABEL, &options.limits)?;
            runtime::runtime_from_inventory(&document, options)
        })
    }

    /// Reads a runtime inventory already read into a [`Value`] (the strict reader's label
    /// `runtime inventory`), under `options`.
    pub fn from_inventory(document: &Value<'_>, options: &Options<'_>) -> Result<Runtime> {
        options.apply(|| runtime::runtime_from_inventory(document, options))
    }
}

impl Binding {
    /// Reads a runtime binding inventory JSON document (§10.4) under `options`;
    /// `max_fragments` bounds the records.
    pub fn from_inventory_json(text: impl AsRef<[u8]>, options: &Options<'_>) -> Result<Binding> {
        options.apply(|| {
            let document = reader::read(text.as_ref(), BINDING_INVENTORY_LABEL, &options.limits)?;
            binding::binding_from_inventory(&document, options)
        })
    }

    /// Reads a binding inventory already read into a [`Value`], under `options`.
    pub fn from_inventory(document: &Value<'_>, options: &Options<'_>) -> Result<Binding> {
        options.apply(|| binding::binding_from_inventory(document, options))
    }
}

impl Placement {
    /// Reads a placement inventory JSON document (§10.5) under `options.limits`
    /// (`max_fragments` bounds the records); the placement inventory has no other option.
    pub fn from_inventory_json(text: impl AsRef<[u8]>, options: &Options<'_>) -> Result<Placement> {
        options.apply(|| {
            let document = reader::read(text.as_ref(), PLACEMENT_INVENTORY_LABEL, &options.limits)?;
            placement::placement_from_inventory(&document, &options.limits)
        })
    }

    /// Reads a placement inventory already read into a [`Value`], under `options.limits`.
    pub fn from_inventory(document: &Value<'_>, options: &Options<'_>) -> Result<Placement> {
        options.apply(|| placement::placement_from_inventory(document, &options.limits))
    }
}

fn offsets_require_view(path: &crate::Path<'_>) -> Error {
    Error::at(
        Code::OffsetsRequireViewSemantics,
        "non-zero runtime offsets require address_semantics='view'",
        path,
    )
}
