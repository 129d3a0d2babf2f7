//! Mooncake's replica choice (`plan_placement_transfer`), for planning with this project's
//! planner region for region as upstream plans: a target of DP rank d reads the source DP
//! replica `sorted(complete replicas)[d % n]`; within it, the tensor's smallest owner (its
//! ownership-axis coordinates); among the fragments holding a box there, the first by
//! (dp, pp, ep, tp, placement_fragment_id), so a replicated tensor is read from its lowest
//! rank. A tensor owned on dp is read from its owner whatever the target's dp.

use std::collections::BTreeSet;

use weight_manifest::util::fxhash::FxHashMap as HashMap;
use weight_manifest::wire::PlacementFragment;
use weight_manifest::ReplicaPolicy;

use crate::model::MooncakePlacement;
use crate::model::{AxisKind, Rank, Semantics};

/// What upstream's planner knows of a source placement that ours does not: its axes.
#[derive(Clone, Debug)]
pub struct MooncakeReplicas {
    /// Complete DP replicas, ascending.
    dps: Vec<u64>,
    /// Per tensor: its ownership kinds and whether dp is one of them.
    tensors: HashMap<String, (Vec<AxisKind>, bool)>,
    /// Per tensor and dp the smallest owner; per dp-owned tensor under dp `u64::MAX`.
    owners: HashMap<String, HashMap<u64, Vec<u64>>>,
}

fn rank_of(f: &PlacementFragment) -> Rank {
    Rank {
        dp: f.rank.dp,
        tp: f.rank.tp,
        pp: f.rank.pp,
        ep: f.rank.ep,
    }
}

impl MooncakeReplicas {
    /// The choice upstream makes reading from `source`.
    pub fn new(source: &MooncakePlacement) -> MooncakeReplicas {
        let mut tensors = HashMap::default();
        for t in source.tensors() {
            let kinds = t.kinds(|s| matches!(s, Semantics::Ownership));
            let dp_owned = kinds.contains(&AxisKind::Dp);
            tensors.insert(t.tensor_id.clone(), (kinds, dp_owned));
        }
        let mut dps_of: HashMap<&str, BTreeSet<u64>> = HashMap::default();
        let mut owners: HashMap<String, HashMap<u64, Vec<u64>>> = HashMap::default();
        for f in source.fragments() {
            let Some((kinds, dp_owned)) = tensors.get(&f.tensor_id) else {
                continue;
            };
            let owner = f.rank.project(kinds);
            let dp = if *dp_owned { u64::MAX } else { f.rank.dp };
            if !dp_owned {
                dps_of
                    .entry(f.tensor_id.as_str())
                    .or_default()
                    .insert(f.rank.dp);
            }
            let per_dp = match owners.get_mut(f.tensor_id.as_str()) {
                Some(per_dp) => per_dp,
                None => owners.entry(f.tensor_id.clone()).or_default(),
            };
            let slot = per_dp.entry(dp).or_insert_with(|| owner.clone());
            if owner < *slot {
                *slot = owner;
            }
        }
        // A DP replica is complete when it holds every tensor not owned on dp.
        let mut complete: Option<BTreeSet<u64>> = None;
        for set in dps_of.values() {
            complete = Some(match complete {
                None => set.clone(),
                Some(c) => c.intersection(set).copied().collect(),
            });
        }
        MooncakeReplicas {
            dps: complete.unwrap_or_default().into_iter().collect(),
            tensors,
            owners,
        }
    }

    /// The source DP replica a target of DP rank `target_dp` reads.
    pub fn source_dp(&self, target_dp: u64) -> Option<u64> {
        let n = self.dps.len() as u64;
        if n == 0 {
            return None;
        }
        usize::try_from(target_dp % n)
            .ok()
            .and_then(|i| self.dps.get(i))
            .copied()
    }

    /// Upstream's choice among `replicas` (indices into `fragments`, all holding one box
    /// of one tensor) for a target of DP rank `target_dp`; `None` when none is eligible
    /// (upstream then finds the target uncovered).
    pub fn choose(
        &self,
        fragments: &[PlacementFragment],
        replicas: &[usize],
        target_dp: u64,
    ) -> Option<usize> {
        let first = fragments.get(*replicas.first()?)?;
        let (kinds, dp_owned) = self.tensors.get(&first.tensor_id)?;
        let dp = if *dp_owned {
            None
        } else {
            Some(self.source_dp(target_dp)?)
        };
        let owner = self
            .owners
            .get(first.tensor_id.as_str())?
            .get(&dp.unwrap_or(u64::MAX))?;
        replicas
            .iter()
            .copied()
            .filter(|&i| {
                let r = rank_of(&fragments[i]);
                dp.is_none_or(|d| r.dp == d) && r.project(kinds) == *owner
            })
            .min_by(|&a, &b| {
                let key = |i: usize| {
                    let f = &fragments[i];
                    (
                        f.rank.dp,
                        f.rank.pp,
                        f.rank.ep,
                        f.rank.tp,
                        &f.placement_fragment_id,
                    )
                };
                key(a).cmp(&key(b))
            })
    }
}

/// Mooncake's choice as the planner's replica policy:
/// `plan_with_choice(.., ReplicaChoice::Policy(&replicas))`.
impl ReplicaPolicy for MooncakeReplicas {
    fn source_dp(&self, target_dp: u64) -> Option<u64> {
        MooncakeReplicas::source_dp(self, target_dp)
    }

    fn choose(
        &self,
        fragments: &[PlacementFragment],
        replicas: &[usize],
        target_dp: u64,
    ) -> Option<usize> {
        MooncakeReplicas::choose(self, fragments, replicas, target_dp)
    }
}
