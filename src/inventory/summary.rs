//! Validating a runtime inventory without keeping its manifest: what `runtime validate
//! --inventory` needs, at a fraction of the memory of [`read_runtime_inventory`].
//!
//! [`read_runtime_inventory`]: super::read_runtime_inventory

use super::{read_runtime_inventory_with_limits, InventoryOptions};
use crate::error::Result;
use crate::limits::Limits;
use crate::model::Runtime;

/// What a valid runtime inventory holds: the counts and generation of the runtime
/// manifest it reads into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RuntimeSummary {
    /// Distinct tensors (descriptors).
    pub tensors: usize,
    /// Fragments (one per record).
    pub fragments: usize,
    /// The manifest's generation.
    pub generation: Option<u64>,
}

impl From<&Runtime> for RuntimeSummary {
    fn from(runtime: &Runtime) -> Self {
        RuntimeSummary {
            tensors: runtime.tensors().len(),
            fragments: runtime.fragments().len(),
            generation: runtime.generation(),
        }
    }
}

/// Validates a runtime inventory JSON document (§10.3) under [`Limits::default()`]:
/// accepts and rejects exactly as [`read_runtime_inventory`](super::read_runtime_inventory),
/// with the same error, but keeps only the summary.
pub fn validate_runtime_inventory(
    text: &[u8],
    options: &InventoryOptions<'_>,
) -> Result<RuntimeSummary> {
    validate_runtime_inventory_with_limits(text, options, &Limits::default())
}

/// [`validate_runtime_inventory`] under `limits`.
pub fn validate_runtime_inventory_with_limits(
    text: &[u8],
    options: &InventoryOptions<'_>,
    limits: &Limits,
) -> Result<RuntimeSummary> {
    limits.check_document_bytes(text.len())?;
    // The compact path only ever says "valid"; anything else is read in full, which names
    // the error (or, for what the compact path does not read, accepts).
    if let Some(summary) = crate::parse::fast_runtime_inventory_summary(text, options, limits) {
        return Ok(summary);
    }
    read_runtime_inventory_with_limits(text, options, limits).map(|runtime| (&runtime).into())
}
