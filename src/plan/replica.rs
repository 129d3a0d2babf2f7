//! Replica choice: which of the source fragments holding a tile a region reads from.
//!
//! Prefer the replicas with the target's own DP rank; among the candidates, take the one
//! whose source rank has had the fewest bytes read so far, ties broken by rank order
//! (dp, tp, pp, ep). Loads accumulate over the whole plan in region order, so the choice
//! is deterministic.

use crate::coverage::group::rank_key;
use crate::mooncake::MooncakeReplicas;
use crate::validate::fxhash::FxHashMap;
use crate::wire::{ParallelRank, PlacementFragment};

type RankKey = (u64, u64, u64, u64);

/// How a region picks, among the source fragments holding its tile, the one it reads.
#[derive(Clone, Copy, Debug, Default)]
pub enum ReplicaChoice<'a> {
    /// This planner's default: the target's own DP rank if any, then the least loaded
    /// source rank so far (module documentation).
    #[default]
    Balanced,
    /// Mooncake's choice ([`MooncakeReplicas`]), so that regions compare one to one with
    /// upstream's `plan_placement_transfer`.
    Mooncake(&'a MooncakeReplicas),
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
