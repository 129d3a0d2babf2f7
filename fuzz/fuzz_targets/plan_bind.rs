//! Strict plan reading and plan binding on hostile documents: the input is split at NUL
//! bytes into a plan, a source binding and a target binding (each a JSON text). Never
//! panics; a plan that reads writes back to its own canonical text with the same plan_id;
//! a bound plan reads back (`BoundPlan::from_json`, its bound_plan_id recomputed) as
//! itself.
#![no_main]

use libfuzzer_sys::fuzz_target;
use weight_manifest::{bind_plan, Binding, BoundPlan, Fences, Options, Plan};

fuzz_target!(|data: &[u8]| {
    let mut parts = data.splitn(3, |&b| b == 0);
    let plan_text = parts.next().unwrap_or_default();
    let options = Options::default();
    let Ok(plan) = Plan::from_json(plan_text, &options) else {
        return;
    };
    let again = Plan::from_json(plan.to_json(), &options).expect("a read plan reads back");
    assert_eq!(again.plan_id(), plan.plan_id());
    let (Some(source), Some(target)) = (parts.next(), parts.next()) else {
        return;
    };
    let read = |text: &[u8]| {
        Binding::from_json(text, &options).or_else(|_| Binding::from_inventory_json(text, &options))
    };
    let (Ok(source), Ok(target)) = (read(source), read(target)) else {
        return;
    };
    for fences in [
        Fences::default(),
        Fences {
            source_generation: Some(source.as_wire().generation),
            target_generation: Some(u64::MAX),
        },
    ] {
        let Ok(bound) = bind_plan(&plan, &source, &target, &fences) else {
            continue;
        };
        let back =
            BoundPlan::from_json(bound.to_json(), &options).expect("a bound plan reads back");
        assert_eq!(back, bound);
    }
});
