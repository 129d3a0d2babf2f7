//! Replica choice: which of the source fragments holding a tile a region reads from.
//!
//! Balanced (the default): prefer the replicas with the target's own DP rank; among the
//! candidates, take the one whose source rank has had the fewest bytes read so far, ties
//! broken by rank order (dp, tp, pp, ep). Loads accumulate over the whole plan in region
//! order, so the choice is deterministic. Another planner's choice (Mooncake's, in the
//! crate `weight-manifest-mooncake`) comes in as a [`ReplicaPolicy`]; the spread choice,
//! which lets every region read any replica, is `super::spread`.

use super::spread::SourceHosts;
use crate::coverage::group::rank_key;
use crate::util::fxhash::FxHashMap;
use crate::wire::{ParallelRank, PlacementFragment};

type RankKey = (u64, u64, u64, u64);

/// A replica choice other than the balanced one, supplied by the caller: which source DP
/// replica a target reads its tiles from, and which of the fragments holding a tile a
/// region reads. Whatever it chooses, the plan stays valid (every choice is a fragment
/// holding the tile); only which replica is read changes.
pub trait ReplicaPolicy {
    /// The source DP replica whose tiles a target of DP rank `target_dp` is planned
    /// against, or `None` for the target's own `target_dp`.
    fn source_dp(&self, target_dp: u64) -> Option<u64>;

    /// The one of `replicas` (indices into `fragments`, all holding the same box of one
    /// tensor, in rank order) a region of a target of DP rank `target_dp` reads, or `None`
    /// to leave it to the balanced choice.
    fn choose(
        &self,
        fragments: &[PlacementFragment],
        replicas: &[usize],
        target_dp: u64,
    ) -> Option<usize>;
}

/// How a region picks, among the source fragments holding its tile, the one it reads.
#[derive(Clone, Copy, Default)]
pub enum ReplicaChoice<'a> {
    /// This planner's default: the target's own DP rank if any, then the least loaded
    /// source rank so far (module documentation).
    #[default]
    Balanced,
    /// Every region may read from any replica of its tile: the one that keeps the busiest
    /// source host (when given) and then the busiest source rank sending the fewest
    /// bytes (`super::spread`). For sources with more DP replicas than the target.
    Spread(Option<&'a SourceHosts>),
    /// The caller's policy (Mooncake's, `weight_manifest_mooncake::MooncakeReplicas`, so
    /// that regions compare one to one with upstream's `plan_placement_transfer`); where it
    /// declines, the balanced choice.
    Policy(&'a dyn ReplicaPolicy),
}

impl std::fmt::Debug for ReplicaChoice<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ReplicaChoice::Balanced => "Balanced",
            ReplicaChoice::Spread(_) => "Spread(..)",
            ReplicaChoice::Policy(_) => "Policy(..)",
        })
    }
}

impl ReplicaChoice<'_> {
    /// The source DP replica a target of DP rank `target_dp` is planned against.
    pub(crate) fn source_dp(&self, target_dp: u64) -> u64 {
        match self {
            ReplicaChoice::Balanced | ReplicaChoice::Spread(_) => target_dp,
            ReplicaChoice::Policy(p) => p.source_dp(target_dp).unwrap_or(target_dp),
        }
    }

    /// The policy's choice among `replicas`, if it makes one.
    pub(crate) fn choose(
        &self,
        fragments: &[PlacementFragment],
        replicas: &[usize],
        target_dp: u64,
    ) -> Option<usize> {
        match self {
            ReplicaChoice::Balanced | ReplicaChoice::Spread(_) => None,
            ReplicaChoice::Policy(p) => p.choose(fragments, replicas, target_dp),
        }
    }
}

/// Bytes and regions read from each source rank so far.
#[derive(Default)]
pub(crate) struct Loads {
    by_rank: FxHashMap<RankKey, (u64, u128)>,
}

impl Loads {
    /// Chooses among `replicas` (fragment indices in rank order, not empty) for a target
    /// of DP rank `target_dp`, and charges `nbytes` to the chosen one's rank.
    pub(crate) fn choose(
        &mut self,
        fragments: &[PlacementFragment],
        replicas: &[usize],
        target_dp: u64,
        nbytes: u64,
    ) -> usize {
        let same_dp = replicas.iter().any(|&i| fragments[i].rank.dp == target_dp);
        let load = |i: usize| {
            self.by_rank
                .get(&rank_key(&fragments[i].rank))
                .map_or(0, |&(_, bytes)| bytes)
        };
        // `min_by_key` keeps the first minimum: replicas are in rank order.
        let chosen = replicas
            .iter()
            .copied()
            .filter(|&i| !same_dp || fragments[i].rank.dp == target_dp)
            .min_by_key(|&i| load(i))
            .unwrap_or(replicas[0]);
        self.charge(fragments, chosen, nbytes);
        chosen
    }

    /// Charges `nbytes` to the rank of fragment `chosen`.
    pub(crate) fn charge(&mut self, fragments: &[PlacementFragment], chosen: usize, nbytes: u64) {
        let entry = self
            .by_rank
            .entry(rank_key(&fragments[chosen].rank))
            .or_insert((0, 0));
        entry.0 = entry.0.saturating_add(1);
        entry.1 = entry.1.saturating_add(u128::from(nbytes));
    }

    /// (rank, regions, bytes) per source rank read from, in rank order.
    pub(crate) fn into_sorted(self) -> Vec<(ParallelRank, u64, u128)> {
        let mut ranks: Vec<(RankKey, (u64, u128))> = self.by_rank.into_iter().collect();
        ranks.sort_unstable();
        ranks
            .into_iter()
            .map(|((dp, tp, pp, ep), (regions, bytes))| {
                (ParallelRank { dp, ep, pp, tp }, regions, bytes)
            })
            .collect()
    }
}
