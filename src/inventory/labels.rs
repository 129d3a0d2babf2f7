//! The inventories' labels in reader messages, and the rejection the three share
//! (§10.2: offsets without `view` semantics).

use crate::error::{Code, Error};

/// The document label of the runtime inventory (§10.3) in reader messages, e.g.
/// "runtime inventory is not valid JSON".
pub const RUNTIME_INVENTORY_LABEL: &str = "runtime inventory";
/// The document label of the binding inventory (§10.4).
pub const BINDING_INVENTORY_LABEL: &str = "runtime binding inventory";
/// The document label of the placement inventory (§10.5).
pub const PLACEMENT_INVENTORY_LABEL: &str = "placement inventory";

/// `offsets_require_view_semantics` for the record at `record`, at its non-zero offset
/// member (storage_offset when both are).
pub(crate) fn offsets_require_view(record: &crate::path::Path<'_>, storage_offset: u64) -> Error {
    let member = if storage_offset != 0 {
        crate::wire::key::STORAGE_OFFSET
    } else {
        crate::wire::key::BYTE_OFFSET
    };
    Error::at(
        Code::OffsetsRequireViewSemantics,
        "non-zero runtime offsets require address_semantics='view'",
        &record.key(member),
    )
}
