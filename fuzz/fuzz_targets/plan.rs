//! Coverage and the reshard planner over two placements (the input split at its first NUL
//! byte, which no JSON text contains; without one the placement is planned onto itself):
//! never panics, a plan is deterministic, and its canonical text reads back strictly with
//! the same `plan_id`.
#![no_main]

use libfuzzer_sys::fuzz_target;

use weight_manifest::{coverage, plan, Placement, PlanLimits};
use weight_manifest::{Options, Plan};

/// Small limits keep one execution fast; the limit checks themselves are exercised too.
const LIMITS: PlanLimits = PlanLimits {
    max_regions: 1 << 12,
    max_segments: 1 << 16,
    // The default budget (SECURITY.md): hostile geometry fails closed, never slowly.
    max_geometry_work: 4096,
};

fuzz_target!(|data: &[u8]| {
    let (source, target) = match data.iter().position(|&b| b == 0) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, data),
    };
    let Ok(source) = Placement::from_json(source, &Options::default()) else {
        return;
    };
    let report = coverage(&source, &weight_manifest::Limits::default()).unwrap();
    weight_manifest::reader::read(
        report.to_json().as_bytes(),
        "coverage",
        &weight_manifest::Limits::default(),
    )
    .expect("a coverage report is valid JSON");
    let Ok(target) = Placement::from_json(target, &Options::default()) else {
        return;
    };
    let Ok(first) = plan(&source, &target, &LIMITS) else {
        return;
    };
    let again = plan(&source, &target, &LIMITS).expect("the same inputs plan again");
    assert_eq!(first.to_json(), again.to_json(), "plans are deterministic");
    let read = Plan::from_json(first.to_json().as_bytes(), &Options::default())
        .expect("an emitted plan reads back");
    assert_eq!(read.plan_id(), first.plan_id());
});
