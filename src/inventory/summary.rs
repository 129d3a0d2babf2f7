//! Validating a runtime inventory without keeping its manifest: what `runtime validate
//! --inventory` needs, at a fraction of the memory of [`Runtime::from_inventory_json`].

use crate::error::Result;
use crate::model::Runtime;
use crate::options::Options;

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

/// Validates a runtime inventory JSON document (§10.3) under `options`: accepts and
/// rejects exactly as [`Runtime::from_inventory_json`], with the same error, but keeps only
/// the summary.
pub fn validate_runtime_inventory(
    text: impl AsRef<[u8]>,
    options: &Options<'_>,
) -> Result<RuntimeSummary> {
    options.apply(|| {
        let text = text.as_ref();
        options.limits.check_document_bytes(text.len())?;
        // The compact path only ever says "valid"; anything else is read in full, which names
        // the error (or, for what the compact path does not read, accepts).
        if let Some(summary) = crate::parse::fast_runtime_inventory_summary(text, options) {
            return Ok(summary);
        }
        Runtime::from_inventory_json(text, options).map(|runtime| (&runtime).into())
    })
}
