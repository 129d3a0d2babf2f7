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
    Record, BINDING_RECORD_MEMBERS, BINDING_TOP_MEMBERS, PLACEMENT_RECORD_MEMBERS,
    PLACEMENT_TOP_MEMBERS, RANK_MEMBERS, RUNTIME_RECORD_MEMBERS, RUNTIME_TOP_MEMBERS,
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

/// A fast path: decides a whole document, or returns `None` for the general path.
type FastPath<T> = fn(&[u8], &Options<'_>) -> Option<Result<T>>;

/// Reads an inventory text labelled `label`: the fast path when it decides, else the
/// strict reader and `read`.
fn from_text<T>(
    text: &[u8],
    options: &Options<'_>,
    label: &str,
    fast: Option<FastPath<T>>,
    read: fn(&Value<'_>, &Options<'_>) -> Result<T>,
) -> Result<T> {
    options.apply(|| {
        if let Some(fast) = fast {
            options.limits.check_document_bytes(text.len())?;
            if let Some(result) = fast(text, options) {
                return result;
            }
        }
        read(&reader::read(text, label, &options.limits)?, options)
    })
}

/// Which options an inventory kind reads, for the docs.
macro_rules! options_doc {
    (all) => {
        "`options` (limits, address semantics, owners)"
    };
    (limits) => {
        "`options.limits` (the placement inventory has no other option)"
    };
}

/// The two inventory constructors of a kind: from JSON text and from a read tree.
macro_rules! inventory_constructors {
    ($($kind:ident($what:literal, $label:ident, $fast:expr, $read:path, $clause:literal, $options:ident);)*) => {$(
        impl $kind {
            #[doc = concat!(
                "Reads a ", $what, " JSON document (", $clause, ") under ",
                options_doc!($options), "; `max_fragments` bounds the records."
            )]
            pub fn from_inventory_json(
                text: impl AsRef<[u8]>,
                options: &Options<'_>,
            ) -> Result<$kind> {
                from_text(text.as_ref(), options, $label, $fast, $read)
            }

            #[doc = concat!(
                "Reads a ", $what, " already read into a [`Value`], under ",
                options_doc!($options), "."
            )]
            pub fn from_inventory(document: &Value<'_>, options: &Options<'_>) -> Result<$kind> {
                options.apply(|| $read(document, options))
            }
        }
    )*};
}

#[rustfmt::skip]
inventory_constructors! {
    Runtime("runtime inventory", RUNTIME_INVENTORY_LABEL, Some(crate::parse::fast_runtime_inventory), runtime::runtime_from_inventory, "§10.3", all);
    Binding("binding inventory", BINDING_INVENTORY_LABEL, None, binding::binding_from_inventory, "§10.4", all);
    Placement("placement inventory", PLACEMENT_INVENTORY_LABEL, None, placement::placement_from_inventory, "§10.5", limits);
}

/// `offsets_require_view_semantics` for the record at `record`, at its non-zero offset
/// member (storage_offset when both are).
fn offsets_require_view(record: &crate::Path<'_>, storage_offset: u64) -> Error {
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
