//! Bound plans, proven on fake device memory: the source bytes are placed at their
//! binding addresses, the copy list is executed address by address, and every target
//! byte is checked (the physical simulator of `plan_bind_support::phys`). TP, EP, PP and
//! DP reshards, a target rank spread over several workers and devices, and random
//! scenarios with random sites.

mod oracle;
#[allow(dead_code)]
mod plan_bind_support;
#[allow(dead_code)]
mod plan_support;

use std::collections::BTreeSet;

use plan_bind_support::bindings::{binding, per_rank, site};
use plan_bind_support::phys;
use plan_support::build::{even_split, fragment, placement, tensor, tp_split, TensorSpec};
use plan_support::scenario::{scenario, Rng};
use proptest::prelude::*;
use weight_manifest::{bind_plan, plan, Binding, BoundPlan, Fences, Placement, PlanLimits};

fn total_bytes(p: &Placement) -> u64 {
    p.fragments().iter().map(|f| f.nbytes).sum()
}

/// Plans, binds and executes; checks the byte totals and the id; returns the bound plan.
fn check(source: &Placement, sb: &Binding, target: &Placement, tb: &Binding) -> BoundPlan {
    let plan = plan(source, target, &PlanLimits::default()).unwrap();
    let bound = bind_plan(&plan, sb, tb, &Fences::default()).unwrap();
    let copied = phys::run(&bound, (source, sb), (target, tb)).unwrap();
    assert_eq!(copied, total_bytes(target));
    let copies: usize = bound.pairs().iter().map(|p| p.copies.len()).sum();
    assert_eq!(copies, plan.regions().len());
    assert_eq!(bound.as_wire().plan_id, plan.plan_id());
    // The text is canonical and its id is the id of its contents, by an oracle that
    // shares no code with the crate's writers.
    let json = bound.to_json();
    assert_eq!(oracle::canonical(&json), json);
    assert_eq!(
        bound.bound_plan_id(),
        oracle::identity(&json, "bound_plan_id", "weight-bound-plan", "sha256:")
    );
    bound
}

fn workers(bound: &BoundPlan) -> BTreeSet<(String, String)> {
    bound
        .pairs()
        .iter()
        .map(|p| (p.source_worker_id.clone(), p.target_worker_id.clone()))
        .collect()
}

#[test]
fn tp_split_and_merge() {
    let w = tensor("w", &[8, 6], 2);
    let tp4 = tp_split("a", &w, 0, 4);
    let tp2 = tp_split("b", &w, 1, 2);
    let (b4, b2) = (per_rank(&tp4, "train"), per_rank(&tp2, "serve"));
    let merge = check(&tp4, &b4, &tp2, &b2);
    // Every TP4 rank sends to both TP2 ranks: 4 x 2 pairs, strided copies.
    assert_eq!(merge.pairs().len(), 8);
    assert!(merge.pairs().iter().all(|p| p.bytes == 12));
    let split = check(&tp2, &b2, &tp4, &b4);
    assert_eq!(split.pairs().len(), 8);
}

#[test]
fn ep_regroup() {
    let experts: Vec<TensorSpec> = (0..8)
        .map(|e| TensorSpec {
            expert: Some(e),
            layer: Some(1),
            ..tensor(&format!("experts.{e}.w"), &[4, 4], 2)
        })
        .collect();
    let on = |ep: u64, prefix: &str| {
        let frags: Vec<_> = (0..8u64)
            .map(|e| {
                let id = format!("{prefix}{e}");
                fragment(
                    &id,
                    &experts[plan_support::scenario::index(e)].id,
                    &[0, 0],
                    &[4, 4],
                    (0, 0, 0, e / (8 / ep)),
                )
            })
            .collect();
        placement(&experts, &frags)
    };
    let (ep2, ep4) = (on(2, "a"), on(4, "b"));
    let (b2, b4) = (per_rank(&ep2, "train"), per_rank(&ep4, "serve"));
    let bound = check(&ep2, &b2, &ep4, &b4);
    // EP rank e of 4 reads only from EP rank e / 2 of 2: one pair per target rank.
    assert_eq!(bound.pairs().len(), 4);
    for p in bound.pairs() {
        let ep = |w: &str| w.rsplit("-ep").next().unwrap().parse::<u64>().unwrap();
        assert_eq!(ep(&p.source_worker_id), ep(&p.target_worker_id) / 2);
        assert_eq!(p.bytes, 64);
    }
}

#[test]
fn pp_restaging() {
    let layers: Vec<TensorSpec> = (0..8)
        .map(|l| TensorSpec {
            layer: Some(l),
            ..tensor(&format!("layers.{l}.w"), &[3, 5], 4)
        })
        .collect();
    let staged = |pp: u64, prefix: &str| {
        let frags: Vec<_> = (0..8u64)
            .map(|l| {
                let id = format!("{prefix}{l}");
                fragment(
                    &id,
                    &layers[plan_support::scenario::index(l)].id,
                    &[0, 0],
                    &[3, 5],
                    (0, 0, l / (8 / pp), 0),
                )
            })
            .collect();
        placement(&layers, &frags)
    };
    let (pp2, pp4) = (staged(2, "a"), staged(4, "b"));
    let (b2, b4) = (per_rank(&pp2, "train"), per_rank(&pp4, "serve"));
    let bound = check(&pp4, &b4, &pp2, &b2);
    assert_eq!(bound.pairs().len(), 4);
    assert!(bound.pairs().iter().all(|p| p.bytes == 2 * 60));
    check(&pp2, &b2, &pp4, &b4);
}

#[test]
fn dp_replicas_read_their_own_replica() {
    let w = tensor("w", &[4, 8], 2);
    let ws = std::slice::from_ref(&w);
    let source_frags: Vec<_> = (0..2)
        .flat_map(|dp| even_split(&format!("s{dp}/"), &w, 0, 2, move |i| (dp, i, 0, 0)))
        .collect();
    let target_frags: Vec<_> = (0..2)
        .flat_map(|dp| even_split(&format!("t{dp}/"), &w, 1, 4, move |i| (dp, i, 0, 0)))
        .collect();
    let (source, target) = (placement(ws, &source_frags), placement(ws, &target_frags));
    let (sb, tb) = (per_rank(&source, "train"), per_rank(&target, "serve"));
    let bound = check(&source, &sb, &target, &tb);
    for (s, t) in workers(&bound) {
        assert_eq!(&s[6..9], &t[6..9], "{s} -> {t} crosses DP replicas");
    }
    assert_eq!(bound.pairs().len(), 16);
}

#[test]
fn one_rank_spread_over_several_workers_and_devices() {
    let tensors: Vec<TensorSpec> = (0..6)
        .map(|k| tensor(&format!("t{k}"), &[4, 6], 2))
        .collect();
    let split = |axis: usize, parts: u64, prefix: &str| {
        let frags: Vec<_> = tensors
            .iter()
            .flat_map(|t| even_split(prefix, t, axis, parts, |i| (0, i, 0, 0)))
            .collect();
        placement(&tensors, &frags)
    };
    let (source, target) = (split(1, 2, "s"), split(0, 2, "d"));
    let sb = per_rank(&source, "train");
    // Target TP rank 0 lives on two hosts and two devices each; rank 1 on one device.
    let mut k = 0;
    let tb = binding(&target, "serve", &mut |_, f| {
        if f.rank.tp == 0 {
            k += 1;
            site(&format!("host{}", k % 2), &format!("cuda:{}", (k / 2) % 2))
        } else {
            site("host2", "cuda:0")
        }
    });
    let bound = check(&source, &sb, &target, &tb);
    let targets: BTreeSet<String> = workers(&bound).into_iter().map(|(_, t)| t).collect();
    assert_eq!(
        targets,
        BTreeSet::from(["host0".into(), "host1".into(), "host2".into()])
    );
    let devices: BTreeSet<(String, String)> = bound
        .pairs()
        .iter()
        .flat_map(|p| &p.copies)
        .map(|c| (c.target.worker_id.clone(), c.target.device.clone()))
        .collect();
    assert_eq!(devices.len(), 5);
}

/// Random sites: each fragment on one of a few workers and devices.
fn random_binding(placement: &Placement, instance: &str, rng: &mut Rng) -> Binding {
    binding(placement, instance, &mut |_, _| {
        site(
            &format!("{instance}{}", rng.below(3)),
            &format!("cuda:{}", rng.below(2)),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 150,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Every random plan, bound to random sites, moves every target byte exactly once,
    /// and the same inputs give the same bound plan.
    #[test]
    fn bound_plans_move_every_byte(seed in any::<u64>()) {
        let s = scenario(seed);
        let source = placement(&s.tensors, &s.source);
        let target = placement(&s.tensors, &s.target);
        let mut rng = Rng::new(seed ^ 0x5eed);
        let sb = random_binding(&source, "a", &mut rng);
        let tb = random_binding(&target, "b", &mut rng);
        let bound = check(&source, &sb, &target, &tb);
        let plan = plan(&source, &target, &PlanLimits::default()).unwrap();
        let again = bind_plan(&plan, &sb, &tb, &Fences::default()).unwrap();
        prop_assert_eq!(again.to_json(), bound.to_json());
    }
}
