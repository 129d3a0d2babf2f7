//! The spread replica choice (`ReplicaChoice::Spread`) against a brute force: on small
//! random reshards with DP replicas on the source side, every way of reading each region
//! from one of the source fragments holding it is tried, and the plan's busiest source
//! (rank, or host when hosts are given) must send the fewest bytes any choice can (for
//! hosts: in all but a few cases, and never more than 4/3 of it). The candidates and the loads are computed here from the placements and the
//! plan's regions, not from the planner's statistics.

#[allow(dead_code)]
mod plan_support;

use std::collections::BTreeMap;

use plan_support::build::{fragment, placement, tensor, FragmentSpec, TensorSpec};
use plan_support::scenario::{grid, Rng};
use weight_manifest::wire::{ParallelRank, PlacementFragment};
use weight_manifest::{plan, plan_with_choice, Placement, PlanLimits, ReplicaChoice, SourceHosts};

type Rank = (u64, u64, u64, u64);

/// A random reshard: 1–3 tensors of 2 axes, a source tiling replicated over `source_dp`
/// DP ranks (TP rank = tile index), a target tiling over `target_dp` DP ranks.
fn scenario(seed: u64, source_dp: u64, target_dp: u64) -> (Vec<TensorSpec>, Placement, Placement) {
    let mut rng = Rng::new(seed);
    let tensors: Vec<TensorSpec> = (0..=rng.below(3))
        .map(|i| {
            tensor(
                &format!("w{i}"),
                &[2 + rng.below(5), 2 + rng.below(5)],
                1 + rng.below(2),
            )
        })
        .collect();
    let mut source: Vec<FragmentSpec> = Vec::new();
    let mut target: Vec<FragmentSpec> = Vec::new();
    for t in &tensors {
        let tiles = grid(&mut rng, &t.shape, &[0]);
        for dp in 0..source_dp {
            for (i, (offset, extent)) in tiles.iter().enumerate() {
                let id = format!("s/{}/{dp}/{i}", t.id);
                source.push(fragment(&id, &t.id, offset, extent, (dp, i as u64, 0, 0)));
            }
        }
        let tiles = grid(&mut rng, &t.shape, &[1]);
        for dp in 0..target_dp {
            for (i, (offset, extent)) in tiles.iter().enumerate() {
                let id = format!("t/{}/{dp}/{i}", t.id);
                target.push(fragment(&id, &t.id, offset, extent, (dp, i as u64, 0, 0)));
            }
        }
    }
    (
        tensors.clone(),
        placement(&tensors, &source),
        placement(&tensors, &target),
    )
}

/// Per region of `reshard`: its bytes, the source ranks of the fragments whose box holds
/// the region's box (found here from the source placement), and the rank it reads.
fn regions(
    tensors: &[TensorSpec],
    source: &Placement,
    reshard: &weight_manifest::Plan,
) -> Vec<(u64, Vec<Rank>, Rank)> {
    let rank = |r: &ParallelRank| (r.dp, r.tp, r.pp, r.ep);
    let by_id: BTreeMap<&str, &PlacementFragment> = source
        .fragments()
        .iter()
        .map(|f| (f.placement_fragment_id.as_str(), f))
        .collect();
    reshard
        .regions()
        .iter()
        .map(|region| {
            let itemsize = tensors
                .iter()
                .find(|t| t.id == region.tensor_id)
                .unwrap()
                .itemsize;
            let nbytes = region.shape.iter().product::<u64>() * itemsize;
            let holds = |f: &PlacementFragment| {
                f.tensor_id == region.tensor_id
                    && (0..region.shape.len()).all(|k| {
                        f.global_offset[k] <= region.global_offset[k]
                            && region.global_offset[k] + region.shape[k]
                                <= f.global_offset[k] + f.local_shape[k]
                    })
            };
            let candidates: Vec<Rank> = source
                .fragments()
                .iter()
                .filter(|f| holds(f))
                .map(|f| rank(&f.rank))
                .collect();
            let read = rank(&by_id[region.source_fragment_id.as_str()].rank);
            assert!(
                candidates.contains(&read),
                "a region reads a fragment that does not hold it"
            );
            (nbytes, candidates, read)
        })
        .collect()
}

/// The busiest group's bytes when region `i` reads rank `reads[i]`; `group` maps a rank
/// to its group (itself, or its host).
fn busiest(sizes: &[u64], reads: &[Rank], group: &dyn Fn(Rank) -> u64) -> u64 {
    let mut load: BTreeMap<u64, u64> = BTreeMap::new();
    for (n, &r) in sizes.iter().zip(reads) {
        *load.entry(group(r)).or_default() += n;
    }
    load.values().copied().max().unwrap_or(0)
}

/// The fewest bytes the busiest group can send, over every choice (brute force).
fn optimum(regions: &[(u64, Vec<Rank>, Rank)], group: &dyn Fn(Rank) -> u64) -> u64 {
    let sizes: Vec<u64> = regions.iter().map(|r| r.0).collect();
    let mut pick = vec![0usize; regions.len()];
    let mut best = u64::MAX;
    loop {
        let reads: Vec<Rank> = pick.iter().zip(regions).map(|(&p, r)| r.1[p]).collect();
        best = best.min(busiest(&sizes, &reads, group));
        // The next choice, odometer-wise.
        let mut k = 0;
        loop {
            if k == pick.len() {
                return best;
            }
            pick[k] += 1;
            if pick[k] < regions[k].1.len() {
                break;
            }
            pick[k] = 0;
            k += 1;
        }
    }
}

/// How many choices the brute force would try.
fn choices(regions: &[(u64, Vec<Rank>, Rank)]) -> u128 {
    regions.iter().map(|r| r.1.len() as u128).product()
}

#[test]
fn the_busiest_source_rank_sends_the_fewest_bytes_any_choice_can() {
    let mut checked = 0;
    let mut better_than_balanced = 0;
    for seed in 0..400 {
        let (source_dp, target_dp) = (2 + seed % 3, 1 + seed % 2);
        let (tensors, source, target) = scenario(seed, source_dp, target_dp);
        let limits = PlanLimits::default();
        let spread =
            plan_with_choice(&source, &target, &limits, ReplicaChoice::Spread(None)).unwrap();
        let ours = regions(&tensors, &source, &spread);
        if choices(&ours) > 200_000 {
            continue;
        }
        let rank_itself = |r: Rank| r.0 * 1_000 + r.1;
        let sizes: Vec<u64> = ours.iter().map(|r| r.0).collect();
        let reads: Vec<Rank> = ours.iter().map(|r| r.2).collect();
        let best = optimum(&ours, &rank_itself);
        assert_eq!(busiest(&sizes, &reads, &rank_itself), best, "seed {seed}");
        // The regions are the balanced plan's; only the replicas read differ.
        let balanced = plan(&source, &target, &limits).unwrap();
        let theirs = regions(&tensors, &source, &balanced);
        assert_eq!(theirs.len(), ours.len(), "seed {seed}");
        let reads: Vec<Rank> = theirs.iter().map(|r| r.2).collect();
        if busiest(&sizes, &reads, &rank_itself) > best {
            better_than_balanced += 1;
        }
        checked += 1;
    }
    assert!(
        checked >= 200,
        "only {checked} scenarios small enough to brute-force"
    );
    assert!(
        better_than_balanced >= checked / 4,
        "{better_than_balanced} of {checked}"
    );
}

#[test]
fn with_hosts_the_busiest_host_sends_almost_always_the_fewest_bytes_any_choice_can() {
    let (mut checked, mut exact) = (0, 0);
    for seed in 1_000..1_300 {
        let (tensors, source, target) = scenario(seed, 2 + seed % 3, 1 + seed % 2);
        // Two hosts: ranks of even TP on one, odd on the other, DP 0 always on the first.
        let host = |r: Rank| u64::from(r.0 != 0 && !r.1.is_multiple_of(2));
        let named: Vec<(ParallelRank, &str)> = source
            .fragments()
            .iter()
            .map(|f| {
                (
                    f.rank.clone(),
                    if host((f.rank.dp, f.rank.tp, 0, 0)) == 0 {
                        "a"
                    } else {
                        "b"
                    },
                )
            })
            .collect();
        let hosts = SourceHosts::new(named);
        let spread = plan_with_choice(
            &source,
            &target,
            &PlanLimits::default(),
            ReplicaChoice::Spread(Some(&hosts)),
        )
        .unwrap();
        let ours = regions(&tensors, &source, &spread);
        if choices(&ours) > 200_000 {
            continue;
        }
        let sizes: Vec<u64> = ours.iter().map(|r| r.0).collect();
        let reads: Vec<Rank> = ours.iter().map(|r| r.2).collect();
        let (got, best) = (busiest(&sizes, &reads, &host), optimum(&ours, &host));
        // A heuristic (the module docs of `plan::spread`): never worse than 4/3 of the
        // optimum, and on this fixed set almost always the optimum itself.
        assert!(
            got >= best && 3 * got <= 4 * best,
            "seed {seed}: {got} against {best}"
        );
        exact += usize::from(got == best);
        checked += 1;
    }
    assert!(
        checked >= 150,
        "only {checked} scenarios small enough to brute-force"
    );
    assert!(
        exact * 100 >= checked * 97,
        "the optimum in only {exact} of {checked}"
    );
}

#[test]
fn four_source_replicas_into_two_halve_the_busiest_rank() {
    // A source of DP 4 (each a whole copy of 8 row blocks) into a target of DP 2: the
    // balanced choice reads every target from its own dp, so DP 0 and 1 send a whole copy
    // each; spread, every replica sends half a copy.
    let t = tensor("w", &[8, 4], 2);
    let mut source = Vec::new();
    for dp in 0..4 {
        for i in 0..8 {
            source.push(fragment(
                &format!("s{dp}/{i}"),
                "w",
                &[i, 0],
                &[1, 4],
                (dp, 0, 0, 0),
            ));
        }
    }
    let target: Vec<FragmentSpec> = (0..2)
        .map(|dp| fragment(&format!("t{dp}"), "w", &[0, 0], &[8, 4], (dp, 0, 0, 0)))
        .collect();
    let tensors = vec![t];
    let (source, target) = (placement(&tensors, &source), placement(&tensors, &target));
    let limits = PlanLimits::default();
    let per_rank = |p: &weight_manifest::Plan| {
        let mut load: BTreeMap<Rank, u64> = BTreeMap::new();
        for (n, _, r) in regions(&tensors, &source, p) {
            *load.entry(r).or_default() += n;
        }
        load
    };
    let copy = 8 * 4 * 2;
    let balanced = per_rank(&plan(&source, &target, &limits).unwrap());
    assert_eq!(balanced.values().copied().max(), Some(copy));
    let spread = per_rank(
        &plan_with_choice(&source, &target, &limits, ReplicaChoice::Spread(None)).unwrap(),
    );
    assert_eq!(spread.len(), 4);
    assert!(spread.values().all(|&b| b == copy / 2), "{spread:?}");
}
