//! Comparison of a testee's response with a fixture's expectation (conformance.md).

use serde_json::Value as Json;

use weight_manifest::wire::FixtureExpect;

use crate::fixture::{Fixture, GenerationExpectation};

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

/// Compares `response` to the expectation of `fixture`.
pub fn compare(fixture: &Fixture, response: &Json) -> Verdict {
    let (id, expect) = (fixture.id.as_str(), &fixture.fixture.expect);
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
        compare_result(expect, fixture.expect_generation, &response["result"])
    } else {
        compare_error(expect, &response["error"])
    }
}

fn compare_result(
    expect: &FixtureExpect,
    generation: GenerationExpectation,
    result: &Json,
) -> Verdict {
    let fields = [
        ("canonical", &expect.canonical),
        ("placement_id", &expect.placement_id),
        ("digest", &expect.digest),
        ("runtime", &expect.runtime),
        ("binding", &expect.binding),
        ("report", &expect.report),
        ("plan", &expect.plan),
        ("plan_id", &expect.plan_id),
        ("bound_plan", &expect.bound_plan),
        ("bound_plan_id", &expect.bound_plan_id),
        ("partial", &expect.partial),
        ("values", &expect.values),
        ("content_manifest", &expect.content_manifest),
        ("topology_id", &expect.topology_id),
        ("mooncake_text", &expect.mooncake_text),
        ("mooncake_plan", &expect.mooncake_plan),
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
    // Absent: not checked; null: the result must have no generation (null or absent).
    let got = result.get("generation");
    let (agrees, wanted) = match generation {
        GenerationExpectation::Unchecked => (true, String::new()),
        GenerationExpectation::Null => (
            got.is_none_or(Json::is_null),
            "null (no generation)".to_owned(),
        ),
        GenerationExpectation::Is(wanted) => (
            got.and_then(Json::as_u64) == Some(wanted),
            wanted.to_string(),
        ),
    };
    if !agrees {
        return Verdict::Fail(format!(
            "result generation differs: expected {wanted}, got {}",
            result["generation"]
        ));
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn fixture(expect: &Json) -> Fixture {
        let document = json!({
            "description": "d.", "op": "runtime.parse", "input": { "document": "{}" },
            "expect": expect,
        });
        Fixture::from_value("g/case".to_owned(), document).unwrap()
    }

    fn answer(result: &Json) -> Json {
        json!({ "id": "g/case", "ok": true, "result": result })
    }

    #[test]
    fn generation_null_absent_and_given_are_three_expectations() {
        let null = fixture(&json!({ "ok": true, "generation": null }));
        let absent = fixture(&json!({ "ok": true }));
        let five = fixture(&json!({ "ok": true, "generation": 5 }));
        assert_eq!(null.expect_generation, GenerationExpectation::Null);
        assert_eq!(absent.expect_generation, GenerationExpectation::Unchecked);
        assert_eq!(five.expect_generation, GenerationExpectation::Is(5));
        // null: no generation, spelled null or left out; any integer fails.
        assert_eq!(
            compare(&null, &answer(&json!({ "generation": null }))),
            Verdict::Pass
        );
        assert_eq!(compare(&null, &answer(&json!({}))), Verdict::Pass);
        assert!(matches!(
            compare(&null, &answer(&json!({ "generation": 0 }))),
            Verdict::Fail(reason) if reason.contains("null (no generation)")
        ));
        // absent: anything goes.
        assert_eq!(
            compare(&absent, &answer(&json!({ "generation": 7 }))),
            Verdict::Pass
        );
        // an integer: exactly that one.
        assert_eq!(
            compare(&five, &answer(&json!({ "generation": 5 }))),
            Verdict::Pass
        );
        assert!(matches!(
            compare(&five, &answer(&json!({ "generation": null }))),
            Verdict::Fail(_)
        ));
        assert!(matches!(
            compare(&five, &answer(&json!({}))),
            Verdict::Fail(_)
        ));
    }
}
