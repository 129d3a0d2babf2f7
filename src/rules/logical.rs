//! The logical view of a fragment (§8.2) that the fragment-set rules read: a placement's
//! or a runtime manifest's fragment without its physical members.

use crate::wire::ParallelRank;

/// The logical half of a fragment, as the fragment-set rules see it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LogicalFragment<'a> {
    /// placement_fragment_id for a placement, fragment_id for a runtime manifest.
    pub id: &'a str,
    /// The member that holds `id`.
    pub id_key: &'static str,
    pub tensor_id: &'a str,
    pub rank: &'a ParallelRank,
    pub global_offset: &'a [u64],
    pub local_shape: &'a [u64],
    pub nbytes: u64,
}
