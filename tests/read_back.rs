//! The derived documents read back: `Plan::from_json`, `BoundPlan::from_json` and
//! `Coverage::from_json` accept what the library wrote (the same canonical text comes out)
//! and reject, each with its code, a document that is not one or whose id or counts do not
//! match its contents.

#[allow(dead_code)]
mod plan_bind_support;
#[allow(dead_code)]
mod plan_support;

use plan_bind_support::bindings::{manifest, site, validated};
use plan_support::build::{tensor, tp_split};
use weight_manifest::{
    bind_plan, coverage, plan, BoundPlan, Code, Coverage, Fences, Options, Plan, PlanLimits,
};

fn bound() -> (Plan, BoundPlan) {
    let w = tensor("w", &[4, 6], 2);
    let (source, target) = (tp_split("s", &w, 0, 2), tp_split("t", &w, 1, 3));
    let plan = plan(&source, &target, &PlanLimits::default()).unwrap();
    let on = |p: &weight_manifest::Placement, instance: &str| {
        validated(&manifest(p, instance, 6, &mut |i, _| {
            site(&format!("w{i}"), "cuda:0")
        }))
    };
    let bound = bind_plan(
        &plan,
        &on(&source, "train"),
        &on(&target, "serve"),
        &Fences::default(),
    )
    .unwrap();
    (plan, bound)
}

fn code<T: std::fmt::Debug>(result: weight_manifest::Result<T>) -> Code {
    result.unwrap_err().code()
}

#[test]
fn a_plan_reads_back_with_its_totals() {
    let (plan, _) = bound();
    let read = Plan::from_json(plan.to_json(), &Options::default()).unwrap();
    assert_eq!(read.to_json(), plan.to_json());
    assert_eq!(read.plan_id(), plan.plan_id());
    let (a, b) = (read.stats(), plan.stats());
    assert_eq!(
        (a.regions, a.segments, a.bytes),
        (b.regions, b.segments, b.bytes)
    );
    assert!(a.sources.is_empty(), "a plan document names no ranks");
    // Whitespace and member order do not matter; the canonical text comes out.
    let pretty = serde_json::to_string_pretty(
        &serde_json::from_str::<serde_json::Value>(&plan.to_json()).unwrap(),
    )
    .unwrap();
    assert_eq!(Plan::from_json(pretty, &Options::default()).unwrap(), plan);
}

#[test]
fn a_bound_plan_reads_back_and_its_id_is_checked() {
    let (_, bound) = bound();
    let text = bound.to_json();
    let read = BoundPlan::from_json(&text, &Options::default()).unwrap();
    assert_eq!(read, bound);
    let read_code = |t: &str| code(BoundPlan::from_json(t, &Options::default()));
    // One copy's byte count with a digit more: still a bound plan, no longer its id.
    let copies = text.find("\"copies\":[").unwrap();
    let at = copies + text[copies..].find("\"nbytes\":").unwrap() + "\"nbytes\":".len();
    let moved = format!("{}1{}", &text[..at], &text[at..]);
    assert_ne!(moved, text);
    assert_eq!(read_code(&moved), Code::BoundPlanIdMismatch);
    assert_eq!(
        read_code(&text.replacen('{', "{\"extra\":1,", 1)),
        Code::BoundPlanDocumentInvalid
    );
    assert_eq!(read_code("[]"), Code::BoundPlanDocumentInvalid);
    assert_eq!(
        read_code(&text.replacen("\"pairs\"", "\"pair\"", 1)),
        Code::BoundPlanDocumentInvalid
    );
    assert_eq!(
        read_code(&text.replacen('{', "{\"plan_id\":\"x\",", 1)),
        Code::DuplicateKey
    );
    assert_eq!(read_code(&text[..text.len() - 1]), Code::InvalidJson);
}

#[test]
fn a_coverage_report_reads_back_and_its_counts_are_checked() {
    let source = tp_split("s", &tensor("w", &[4, 6], 2), 0, 2);
    let report = coverage(&source, &weight_manifest::Limits::default()).unwrap();
    let text = report.to_json();
    assert_eq!(
        Coverage::from_json(&text, &Options::default()).unwrap(),
        report
    );
    let read_code = |t: &str| code(Coverage::from_json(t, &Options::default()));
    assert!(text.contains("\"tensors_complete\":1"), "{text}");
    assert_eq!(
        read_code(&text.replacen("\"tensors_complete\":1", "\"tensors_complete\":2", 1)),
        Code::CoverageDocumentInvalid
    );
    assert_eq!(read_code("{}"), Code::CoverageDocumentInvalid);
    assert_eq!(read_code("7"), Code::CoverageDocumentInvalid);
    assert_eq!(read_code("{"), Code::InvalidJson);
}
