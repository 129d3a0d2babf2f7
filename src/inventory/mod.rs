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

pub use binding::{binding_from_inventory, binding_from_inventory_with_limits};
pub use placement::{placement_from_inventory, placement_from_inventory_with_limits};
pub use record::{
    binding_from_records, placement_from_records, runtime_from_records, Record,
    BINDING_RECORD_MEMBERS, BINDING_TOP_MEMBERS, DESCRIPTOR_MEMBERS, PLACEMENT_RECORD_MEMBERS,
    PLACEMENT_TOP_MEMBERS, RANK_MEMBERS, RUNTIME_RECORD_MEMBERS, RUNTIME_TOP_MEMBERS,
};
pub use runtime::{runtime_from_inventory, runtime_from_inventory_with_limits};
pub use summary::{
    validate_runtime_inventory, validate_runtime_inventory_with_limits, RuntimeSummary,
};

use crate::limits::Limits;
use crate::model::{Binding, Placement, Runtime};
use crate::reader;

/// Reads a runtime inventory JSON document (§10.3) under [`Limits::default()`].
pub fn read_runtime_inventory(text: &[u8], options: &InventoryOptions<'_>) -> Result<Runtime> {
    read_runtime_inventory_with_limits(text, options, &Limits::default())
}

/// [`read_runtime_inventory`] under `limits` (`max_fragments` bounds the records).
pub fn read_runtime_inventory_with_limits(
    text: &[u8],
    options: &InventoryOptions<'_>,
    limits: &Limits,
) -> Result<Runtime> {
    limits.check_document_bytes(text.len())?;
    if let Some(result) = crate::parse::fast_runtime_inventory(text, options, limits) {
        return result;
    }
    let document = reader::read_with_limits(text, "runtime inventory", limits)?;
    runtime_from_inventory_with_limits(&document, options, limits)
}

/// Reads a binding inventory JSON document (§10.4) under [`Limits::default()`].
pub fn read_binding_inventory(text: &[u8], options: &InventoryOptions<'_>) -> Result<Binding> {
    read_binding_inventory_with_limits(text, options, &Limits::default())
}

/// [`read_binding_inventory`] under `limits` (`max_fragments` bounds the records).
pub fn read_binding_inventory_with_limits(
    text: &[u8],
    options: &InventoryOptions<'_>,
    limits: &Limits,
) -> Result<Binding> {
    let document = reader::read_with_limits(text, "runtime binding inventory", limits)?;
    binding_from_inventory_with_limits(&document, options, limits)
}

/// Reads a placement inventory JSON document (§10.5) under [`Limits::default()`].
pub fn read_placement_inventory(text: &[u8]) -> Result<Placement> {
    read_placement_inventory_with_limits(text, &Limits::default())
}

/// [`read_placement_inventory`] under `limits` (`max_fragments` bounds the records).
pub fn read_placement_inventory_with_limits(text: &[u8], limits: &Limits) -> Result<Placement> {
    let document = reader::read_with_limits(text, "placement inventory", limits)?;
    placement_from_inventory_with_limits(&document, limits)
}

use crate::error::{Code, Error, Result};
use crate::model::Owner;
use crate::value::Value;

/// Resolves a record to the owner of its fragment's memory.
pub type OwnerResolver<'o> = dyn Fn(&Value<'_>) -> Option<Owner> + 'o;

/// Options of the runtime and binding inventory readers.
#[derive(Clone, Copy, Default)]
pub struct InventoryOptions<'o> {
    /// The `address_semantics` option (§10.2): not given (`None` or `null`) or `"view"`.
    /// Any other value is rejected with `address_semantics_invalid`.
    pub address_semantics: Option<&'o Value<'o>>,
    /// Called with each record; its result becomes that fragment's owner.
    pub owner_resolver: Option<&'o OwnerResolver<'o>>,
}

impl InventoryOptions<'_> {
    /// Options with `address_semantics` set to `"view"`.
    pub fn view() -> InventoryOptions<'static> {
        static VIEW: Value<'static> = Value::Str(std::borrow::Cow::Borrowed("view"));
        InventoryOptions {
            address_semantics: Some(&VIEW),
            owner_resolver: None,
        }
    }
}

/// §10.2: whether `view` semantics are declared; any other given value is an error.
fn view_semantics(options: &InventoryOptions<'_>) -> Result<bool> {
    match options.address_semantics {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Str(s)) if s == "view" => Ok(true),
        Some(_) => Err(Error::new(
            Code::AddressSemanticsInvalid,
            "address_semantics must be 'view'",
        )),
    }
}

fn offsets_require_view(path: &crate::Path<'_>) -> Error {
    Error::at(
        Code::OffsetsRequireViewSemantics,
        "non-zero runtime offsets require address_semantics='view'",
        path,
    )
}
