//! Mooncake's one-pass placement reader against the tree reader: on every text, either
//! the one-pass reader leaves it to the tree reader, or both give the same placement (equal
//! values, the same canonical text and ids). It never rejects: on every text the tree
//! reader rejects, it answers `None`, so `from_json` gives the tree reader's code, message
//! and pointer. The texts: every case of the oracle corpus (tests/mooncake/corpus/, as
//! recorded from upstream, and rewritten canonically), mutations of them, and the
//! DeepSeek-V3-like placement's export.

#[allow(dead_code)]
#[path = "../../../tests/plan_support/mod.rs"]
mod plan_support;

use serde_json::Value;
use weight_manifest::{Limits, Options, Placement};
use weight_manifest_mooncake::{export, ExportOptions, MooncakePlacement};

fn corpus_inputs() -> Vec<(String, String, bool)> {
    let path = format!(
        "{}/tests/mooncake/corpus/placement.json",
        concat!(env!("CARGO_MANIFEST_DIR"), "/../..")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let doc: Value = serde_json::from_str(&text).expect("corpus is JSON");
    doc["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .map(|c| {
            (
                c["id"].as_str().expect("id").to_owned(),
                c["input"].as_str().expect("input").to_owned(),
                c["expect"]["ok"].as_bool() == Some(true),
            )
        })
        .collect()
}

/// Both readers on `text`; whether the one-pass reader decided.
fn agree(id: &str, text: &[u8], limits: &Limits) -> bool {
    let general =
        MooncakePlacement::from_json_general(text, &Options::default().with_limits(*limits));
    let fast =
        MooncakePlacement::from_json_one_pass(text, &Options::default().with_limits(*limits));
    let combined = MooncakePlacement::from_json(text, &Options::default().with_limits(*limits));
    match (&general, &fast) {
        (Ok(g), Some(f)) => {
            assert_eq!(f, g, "{id}: placements differ");
            assert_eq!(f.to_json(), g.to_json(), "{id}");
            assert_eq!(f.placement_id(), g.placement_id(), "{id}");
            assert_eq!(f.topology_id(), g.topology_id(), "{id}");
            assert_eq!(f.digest(), g.digest(), "{id}");
        }
        (Err(e), Some(_)) => panic!("{id}: the tree reader rejects ({e}), the one-pass accepts"),
        (_, None) => {}
    }
    // What callers get is always the tree reader's answer, rejections included.
    match (&combined, &general) {
        (Ok(c), Ok(g)) => assert_eq!(c, g, "{id}"),
        (Err(c), Err(g)) => {
            assert_eq!(c.code(), g.code(), "{id}");
            assert_eq!(c.message(), g.message(), "{id}");
            assert_eq!(c.path(), g.path(), "{id}");
        }
        _ => panic!("{id}: from_json and the tree reader disagree"),
    }
    fast.is_some()
}

#[test]
fn every_corpus_case_reads_the_same_through_both_readers() {
    let limits = Limits::default();
    let (mut accepted, mut decided) = (0, 0);
    for (id, input, ok) in corpus_inputs() {
        let fast = agree(&id, input.as_bytes(), &limits);
        if ok {
            accepted += 1;
            // The corpus writes upstream's accepted inputs with spaces; the one-pass reader
            // reads them as it reads the canonical form. Only escapes are left to the tree
            // reader.
            let escaped = input.contains('\\');
            assert!(
                fast || escaped,
                "{id}: an accepted case left to the tree reader"
            );
            decided += usize::from(fast);
            let canonical = MooncakePlacement::from_json(input.as_bytes(), &Options::default())
                .unwrap()
                .to_json();
            let fast = agree(&id, canonical.as_bytes(), &limits);
            assert!(fast || canonical.contains('\\'), "{id} canonical");
        } else {
            assert!(!fast, "{id}: a rejected case accepted");
        }
    }
    assert!(accepted >= 80, "{accepted} accepted cases");
    assert!(decided + 5 >= accepted, "{decided} of {accepted} decided");
}

/// Texts near an accepted one: each member value replaced by another kind of value,
/// truncations, a duplicated key, an escape, whitespace.
fn mutations(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let step = (bytes.len() / 97).max(1);
    for i in (0..bytes.len()).step_by(step) {
        out.push(text[..i].to_owned());
        for with in [
            "0", "-1", "\"\"", "null", "1.0", "[]", "{}", "\\u0041", " ", "\"x\",",
        ] {
            if text.is_char_boundary(i) && text.is_char_boundary(i + 1) {
                out.push(format!("{}{with}{}", &text[..i], &text[i + 1..]));
                out.push(format!("{}{with}{}", &text[..i], &text[i..]));
            }
        }
    }
    for (from, to) in [
        ("\"nbytes\":", "\"nbytes\":1,\"nbytes\":"),
        ("\"aliases\":[]", "\"aliases\":[\"a\"]"),
        ("\"pipeline_stage_id\":null,", ""),
        ("\"rank\":{", "\"rank\":{\"dp\":0,"),
        ("\"semantics\":\"split\"", "\"semantics\":\"ownership\""),
        ("\"semantics\":\"replicated\"", "\"semantics\":\"split\""),
        ("\"kind\":\"tp\"", "\"kind\":\"ep\""),
        ("\"model_weight\"", "\"model\""),
        ("\"tp_size\":", "\"tp_size\":0"),
    ] {
        out.push(text.replacen(from, to, 1));
    }
    out
}

#[test]
fn mutated_corpus_cases_read_the_same_through_both_readers() {
    let limits = Limits::default();
    let mut checked = 0;
    for (id, input, ok) in corpus_inputs().into_iter().filter(|c| c.2).step_by(3) {
        assert!(ok);
        let canonical = MooncakePlacement::from_json(input.as_bytes(), &Options::default())
            .unwrap()
            .to_json();
        for (k, text) in mutations(&canonical).iter().enumerate() {
            agree(&format!("{id} mutation {k}"), text.as_bytes(), &limits);
            checked += 1;
        }
    }
    assert!(checked > 10_000, "{checked} mutations");
}

#[test]
fn small_limits_leave_the_text_to_the_tree_reader() {
    let (id, input, _) = corpus_inputs()
        .into_iter()
        .find(|c| c.2)
        .expect("an accepted case");
    let text = MooncakePlacement::from_json(input.as_bytes(), &Options::default())
        .unwrap()
        .to_json();
    let defaults = Limits::default();
    let small = [
        Limits {
            max_depth: 5,
            ..defaults
        },
        Limits {
            max_string_bytes: 16,
            ..defaults
        },
        Limits {
            max_document_bytes: 100,
            ..defaults
        },
        Limits {
            max_tensors: 0,
            ..defaults
        },
        Limits {
            max_fragments: 0,
            ..defaults
        },
        Limits {
            max_dims: 0,
            ..defaults
        },
    ];
    for limits in &small {
        assert!(
            !agree(&id, text.as_bytes(), limits),
            "{id}: decided under {limits:?}"
        );
        assert!(MooncakePlacement::from_json(
            text.as_bytes(),
            &Options::default().with_limits(*limits)
        )
        .is_err());
    }
}

#[test]
fn the_deepseek_v3_export_reads_the_same_through_both_readers() {
    let source = Placement::from_wire(&plan_support::deepseek::source()).unwrap();
    let text = export(&source, &ExportOptions::default())
        .unwrap()
        .to_json();
    assert!(agree("deepseek-v3", text.as_bytes(), &Limits::default()));
}
