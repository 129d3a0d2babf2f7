//! A placement as read, before the rules that span the document: what both placement
//! readers (the tree's and the one-pass) build and the placement's assembly consumes.

use crate::model::{Fragment, Rank, Tensor, Topology};

/// A part as written: its position in `parts` and its fragments with their positions.
pub(crate) struct DraftPart {
    pub(crate) participant_id: String,
    pub(crate) rank: Rank,
    pub(crate) fragments: Vec<(Fragment, usize)>,
    pub(crate) at: usize,
}

/// A placement as read, before the rules that span the document.
pub(crate) struct Draft {
    pub(crate) resource_id: String,
    pub(crate) revision: String,
    pub(crate) weight_generation: u64,
    pub(crate) placement_set_id: String,
    /// The id as written, to be checked against the recomputed one (`None`: compute it).
    pub(crate) placement_id: Option<String>,
    /// Checked, participants sorted.
    pub(crate) topology: Topology,
    pub(crate) topology_id: String,
    /// In document order.
    pub(crate) tensors: Vec<Tensor>,
    pub(crate) parts: Vec<DraftPart>,
    /// `Limits::max_geometry_work`, for the rules of the whole placement.
    pub(crate) work: u64,
}
