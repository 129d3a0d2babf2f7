//! Comparison of a testee's response with a fixture's expectation (conformance.md).

use serde_json::Value as Json;

use weight_manifest::wire::FixtureExpect;

/// The outcome of one case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The response matches.
    Pass,
    /// The testee does not know the operation.
    Skipped,
    /// The response differs; the reason says how.
    Fail(String),
}

/// Compares `response` to `expect` for the case `id`.
pub fn compare(id: &str, expect: &FixtureExpect, response: &Json) -> Verdict {
    if response.get("id").and_then(Json::as_str) != Some(id) {
        return Verdict::Fail(format!("response id {} is not {id:?}", response["id"]));
    }
    if response.get("skipped") == Some(&Json::Bool(true)) {
        return Verdict::Skipped;
    }
    let Some(ok) = response.get("ok").and_then(Json::as_bool) else {
        return Verdict::Fail("response has no boolean `ok`".to_owned());
    };
    if ok != expect.ok {
        let got = if ok {
            "accepted".to_owned()
        } else {
            format!(
                "rejected with {}: {}",
                response["error"]["code"], response["error"]["message"]
            )
        };
        let wanted = if expect.ok {
            "acceptance".to_owned()
        } else {
            format!("rejection with {:?}", expect.code.as_deref().unwrap_or("?"))
        };
        return Verdict::Fail(format!("expected {wanted}, {got}"));
    }
    if ok {
        compare_result(expect, &response["result"])
    } else {
        compare_error(expect, &response["error"])
    }
}

fn compare_result(expect: &FixtureExpect, result: &Json) -> Verdict {
    let fields = [
        ("canonical", &expect.canonical),
        ("placement_id", &expect.placement_id),
        ("digest", &expect.digest),
        ("runtime", &expect.runtime),
        ("binding", &expect.binding),
        ("report", &expect.report),
        ("plan", &expect.plan),
        ("plan_id", &expect.plan_id),
    ];
    for (name, wanted) in fields {
        if let Some(wanted) = wanted {
            let got = result.get(name).and_then(Json::as_str);
            if got != Some(wanted.as_str()) {
                return Verdict::Fail(format!(
                    "result {name} differs: expected {wanted:?}, got {got:?}"
                ));
            }
        }
    }
    if let Some(wanted) = expect.generation {
        if result.get("generation").and_then(Json::as_u64) != Some(wanted) {
            return Verdict::Fail(format!(
                "result generation differs: expected {wanted}, got {}",
                result["generation"]
            ));
        }
    }
    Verdict::Pass
}

fn compare_error(expect: &FixtureExpect, error: &Json) -> Verdict {
    let code = error.get("code").and_then(Json::as_str);
    if code != expect.code.as_deref() {
        return Verdict::Fail(format!(
            "expected code {:?}, got {code:?} ({})",
            expect.code.as_deref().unwrap_or("?"),
            error["message"]
        ));
    }
    if error
        .get("message")
        .and_then(Json::as_str)
        .is_none_or(str::is_empty)
    {
        return Verdict::Fail("rejection has an empty message".to_owned());
    }
    if let Some(path) = &expect.path {
        let got = error.get("path").and_then(Json::as_str);
        if got != Some(path.as_str()) {
            return Verdict::Fail(format!("expected path {path:?}, got {got:?}"));
        }
    }
    Verdict::Pass
}
