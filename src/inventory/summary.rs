//! Validating a runtime inventory without keeping its manifest: what `runtime validate
//! --inventory` needs, at a fraction of the memory of [`Runtime::from_inventory_json`].

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
