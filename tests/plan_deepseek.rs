//! The DeepSeek-V3-like reshard (TP8/EP8/PP4/DP2 to TP4/EP16/PP8/DP2): the plan exists
//! within the default limits, fills every target fragment exactly, and reads each region
//! from the target's own DP replica. Its speed is measured in BENCHMARKS.md, not here.
//!
//! `RUSTFLAGS="--cfg wm_tools" cargo test --release --test plan_deepseek write_reshard_workload` writes
//! the two placements to `target/plan-bench/` (or `$PLAN_BENCH_DIR`) for the CLI benchmark.

#[allow(dead_code)]
mod plan_support;

use std::collections::HashMap;

use plan_support::deepseek;
use weight_manifest::{plan, Placement, PlanLimits};

fn placements() -> (Placement, Placement) {
    let source = deepseek::source();
    let target = deepseek::target(&source);
    (
        Placement::from_wire(&source).unwrap(),
        Placement::from_wire(&target).unwrap(),
    )
}

#[test]
fn deepseek_v3_reshard_plans_within_the_default_limits() {
    let (source, target) = placements();
    assert_eq!(source.fragments().len(), 102_704);
    let plan = plan(&source, &target, &PlanLimits::default()).unwrap();
    let stats = plan.stats();

    // Every target byte is written once: per target fragment, the regions add up.
    let mut written: HashMap<&str, u64> = HashMap::new();
    for r in plan.regions() {
        *written.entry(r.target_fragment_id.as_str()).or_default() += r.nbytes;
    }
    for f in target.fragments() {
        assert_eq!(
            written.get(f.placement_fragment_id.as_str()),
            Some(&f.nbytes)
        );
    }
    let target_bytes: u128 = target
        .fragments()
        .iter()
        .map(|f| u128::from(f.nbytes))
        .sum();
    assert_eq!(stats.bytes, target_bytes);

    // Each DP replica of the target reads from its own DP replica of the source.
    let dp_of: HashMap<&str, u64> = source
        .fragments()
        .iter()
        .chain(target.fragments())
        .map(|f| (f.placement_fragment_id.as_str(), f.rank.dp))
        .collect();
    assert!(plan
        .regions()
        .iter()
        .all(|r| dp_of[r.source_fragment_id.as_str()] == dp_of[r.target_fragment_id.as_str()]));

    // Every source rank is read from, and the figures are consistent.
    assert_eq!(stats.sources.len(), 2 * 4 * 8);
    assert_eq!(
        stats.sources.iter().map(|s| s.regions).sum::<u64>(),
        stats.regions
    );
    assert!(stats.regions < PlanLimits::default().max_regions / 4);
    assert!(stats.segments < PlanLimits::default().max_segments / 4);
    println!(
        "regions {} segments {} bytes {}",
        stats.regions, stats.segments, stats.bytes
    );
}

/// A tool, not a check: it writes the benchmark inputs (BENCHMARKS.md; `--cfg wm_tools`).
#[cfg(wm_tools)]
#[test]
fn write_reshard_workload() {
    let dir = std::env::var_os("PLAN_BENCH_DIR").map_or_else(
        || std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/plan-bench"),
        std::path::PathBuf::from,
    );
    std::fs::create_dir_all(&dir).unwrap();
    let (source, target) = placements();
    std::fs::write(
        dir.join("deepseek-v3.tp8-ep8-pp4-dp2.json"),
        source.to_json(),
    )
    .unwrap();
    std::fs::write(
        dir.join("deepseek-v3.tp4-ep16-pp8-dp2.json"),
        target.to_json(),
    )
    .unwrap();
    eprintln!("wrote {}", dir.display());
}
