//! The three inventories (§10) as document kinds of the reading pipeline, their types'
//! constructors, and the validation of a runtime inventory that keeps only its summary.

use super::labels::{BINDING_INVENTORY_LABEL, PLACEMENT_INVENTORY_LABEL, RUNTIME_INVENTORY_LABEL};
use super::summary::RuntimeSummary;
use super::{binding, fast, placement, runtime};
use crate::document::{self, Document};
use crate::error::Result;
use crate::model::{Binding, Placement, Runtime};
use crate::options::Options;
use crate::value::Value;

/// The runtime inventory (§10.3) as a document kind of the reading pipeline.
struct RuntimeInventoryDocument;

impl Document for RuntimeInventoryDocument {
    type Output = Runtime;
    const LABEL: &'static str = RUNTIME_INVENTORY_LABEL;

    fn fast(text: &str, options: &Options<'_>) -> Option<Runtime> {
        fast::runtime_inventory(text, options)
    }

    fn from_tree(document: &Value<'_>, options: &Options<'_>) -> Result<Runtime> {
        runtime::runtime_from_inventory(document, options)
    }
}

/// The binding inventory (§10.4) as a document kind of the reading pipeline.
struct BindingInventoryDocument;

impl Document for BindingInventoryDocument {
    type Output = Binding;
    const LABEL: &'static str = BINDING_INVENTORY_LABEL;

    fn from_tree(document: &Value<'_>, options: &Options<'_>) -> Result<Binding> {
        binding::binding_from_inventory(document, options)
    }
}

/// The placement inventory (§10.5) as a document kind of the reading pipeline.
struct PlacementInventoryDocument;

impl Document for PlacementInventoryDocument {
    type Output = Placement;
    const LABEL: &'static str = PLACEMENT_INVENTORY_LABEL;

    fn from_tree(document: &Value<'_>, options: &Options<'_>) -> Result<Placement> {
        placement::placement_from_inventory(document, options)
    }
}

impl Runtime {
    /// Reads a runtime inventory JSON document (§10.3) under `options` (limits, address
    /// semantics, owners); `max_fragments` bounds the records.
    pub fn from_inventory_json(text: impl AsRef<[u8]>, options: &Options<'_>) -> Result<Runtime> {
        document::read::<RuntimeInventoryDocument>(text.as_ref(), options)
    }

    /// Reads a runtime inventory already read into a [`Value`], under `options` (limits,
    /// address semantics, owners).
    pub fn from_inventory(document: &Value<'_>, options: &Options<'_>) -> Result<Runtime> {
        RuntimeInventoryDocument::from_tree(document, options)
    }
}

impl Binding {
    /// Reads a binding inventory JSON document (§10.4) under `options` (limits, address
    /// semantics, owners); `max_fragments` bounds the records.
    pub fn from_inventory_json(text: impl AsRef<[u8]>, options: &Options<'_>) -> Result<Binding> {
        document::read::<BindingInventoryDocument>(text.as_ref(), options)
    }

    /// Reads a binding inventory already read into a [`Value`], under `options` (limits,
    /// address semantics, owners).
    pub fn from_inventory(document: &Value<'_>, options: &Options<'_>) -> Result<Binding> {
        BindingInventoryDocument::from_tree(document, options)
    }
}

impl Placement {
    /// Reads a placement inventory JSON document (§10.5) under `options.limits` (the
    /// placement inventory has no other option); `max_fragments` bounds the records.
    pub fn from_inventory_json(text: impl AsRef<[u8]>, options: &Options<'_>) -> Result<Placement> {
        document::read::<PlacementInventoryDocument>(text.as_ref(), options)
    }

    /// Reads a placement inventory already read into a [`Value`], under `options.limits`.
    pub fn from_inventory(document: &Value<'_>, options: &Options<'_>) -> Result<Placement> {
        PlacementInventoryDocument::from_tree(document, options)
    }
}

/// Validates a runtime inventory JSON document (§10.3) under `options`: accepts and
/// rejects exactly as [`Runtime::from_inventory_json`], with the same error, but keeps only
/// the summary.
pub fn validate_runtime_inventory(
    text: impl AsRef<[u8]>,
    options: &Options<'_>,
) -> Result<RuntimeSummary> {
    document::read::<RuntimeSummaryDocument>(text.as_ref(), options)
}

/// The runtime inventory read for its summary: the compact path only ever says "valid";
/// anything else is read in full, which names the error (or, for what the compact path
/// does not read, accepts).
struct RuntimeSummaryDocument;

impl Document for RuntimeSummaryDocument {
    type Output = RuntimeSummary;
    const LABEL: &'static str = RUNTIME_INVENTORY_LABEL;

    fn fast(text: &str, options: &Options<'_>) -> Option<RuntimeSummary> {
        super::fast::runtime_inventory_summary(text, options)
            .or_else(|| RuntimeInventoryDocument::fast(text, options).map(|r| (&r).into()))
    }

    fn from_tree(document: &Value<'_>, options: &Options<'_>) -> Result<RuntimeSummary> {
        RuntimeInventoryDocument::from_tree(document, options).map(|r| (&r).into())
    }
}
