//! Validating a runtime inventory without keeping its manifest: what `runtime validate
//! --inventory` needs, at a fraction of the memory of [`Runtime::from_inventory_json`].

use super::labels::RUNTIME_INVENTORY_LABEL;
use super::runtime::RuntimeInventoryDocument;
use super::summary::RuntimeSummary;
use crate::document::{self, Document};
use crate::error::Result;
#[cfg(doc)]
use crate::model::Runtime;
use crate::options::Options;
use crate::value::Value;

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
