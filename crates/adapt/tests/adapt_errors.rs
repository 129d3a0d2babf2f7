//! Bad rules, bad headers and bad grids fail with a code, a message and, for rules, the
//! JSON pointer of the member at fault.

mod adapt_support;

use adapt_support::{header_json, preset, root, scratch, write_header_file, write_sharded};
use weight_manifest::Options;
use weight_manifest::{Code, Error};
use weight_manifest_adapt::{self as adapt, AdaptOptions, Checkpoint, Grid, ReadError, Rules};

fn minilm() -> Checkpoint {
    let text =
        std::fs::read(root().join("tests/vectors/minilm/model.safetensors.header.json")).unwrap();
    Checkpoint::from_header(&text, "model.safetensors").unwrap()
}

fn grid(tp: u64, pp: u64, ep: u64) -> Grid {
    Grid { dp: 1, pp, tp, ep }
}

fn adapt_with(checkpoint: &Checkpoint, rules: &str, grid: Grid) -> Result<(), Error> {
    let rules = Rules::from_json(rules, &Options::default())?;
    adapt::placement(checkpoint, &rules, &AdaptOptions::new("m", "r", grid)).map(|_| ())
}

/// The preset `bert.json` with `edit` applied to its JSON value.
fn bert_edited(edit: impl FnOnce(&mut serde_json::Value)) -> String {
    let mut value: serde_json::Value = serde_json::from_str(&preset("bert.json")).unwrap();
    edit(&mut value);
    value.to_string()
}

fn assert_error(result: Result<(), Error>, code: Code, pointer: Option<&str>, needles: &[&str]) {
    let error = result.expect_err("expected a rejection");
    assert_eq!(error.code(), code, "{error}");
    assert_eq!(error.path(), pointer, "{error}");
    for needle in needles {
        assert!(error.message().contains(needle), "{error} lacks {needle}");
    }
}

#[test]
fn unmatched_tensor_is_named() {
    let rules = bert_edited(|v| {
        v["rules"]
            .as_array_mut()
            .unwrap()
            .retain(|r| !r["match"].as_str().unwrap().contains("pooler"));
    });
    assert_error(
        adapt_with(&minilm(), &rules, grid(1, 1, 1)),
        Code::AdaptUnmatchedTensor,
        Some("/rules"),
        &["no rule matches tensor pooler.dense.bias"],
    );
}

#[test]
fn uneven_split_names_tensor_dim_and_sizes() {
    assert_error(
        adapt_with(&minilm(), &preset("bert.json"), grid(5, 1, 1)),
        Code::AdaptUnevenSplit,
        Some("/rules/0/action"),
        &["tensor embeddings.word_embeddings.weight: dim 0 of size 30522 does not split evenly over tp 5"],
    );
    // Six layers over four stages.
    assert_error(
        adapt_with(&minilm(), &preset("bert.json"), grid(1, 4, 1)),
        Code::AdaptUnevenSplit,
        Some("/pp"),
        &["6 layers do not split evenly over pp 4", "encoder.layer.0."],
    );
}

#[test]
fn regex_errors_point_at_the_rule() {
    let rules = bert_edited(|v| v["rules"][4]["match"] = "encoder\\.layer\\.(?P<layer>\\d+".into());
    assert_error(
        adapt_with(&minilm(), &rules, grid(1, 1, 1)),
        Code::AdaptRegexInvalid,
        Some("/rules/4/match"),
        &["rule 4: invalid regex"],
    );
    let rules = bert_edited(|v| v["rules"][2]["match"] = "(?P<layers>\\d+)\\.x".into());
    assert_error(
        adapt_with(&minilm(), &rules, grid(1, 1, 1)),
        Code::AdaptRegexInvalid,
        Some("/rules/2/match"),
        &["named group layers is neither layer nor expert"],
    );
}

#[test]
fn unknown_actions_point_at_the_action() {
    let rules = bert_edited(|v| v["rules"][1]["action"] = "shard".into());
    assert_error(
        adapt_with(&minilm(), &rules, grid(1, 1, 1)),
        Code::AdaptUnknownAction,
        Some("/rules/1/action"),
        &["unknown action shard"],
    );
    let rules = bert_edited(|v| v["rules"][3]["action"] = serde_json::json!({"slice": {"dim": 0}}));
    assert_error(
        adapt_with(&minilm(), &rules, grid(1, 1, 1)),
        Code::AdaptUnknownAction,
        Some("/rules/3/action"),
        &["unknown action slice"],
    );
}

#[test]
fn malformed_rules_are_located() {
    let cases: Vec<(String, &str, &str)> = vec![
        ("[]".into(), "", "adapter rules must be an object"),
        (r#"{"rules": []}"#.into(), "", "lacks the required member layout_fingerprint"),
        (r#"{"layout_fingerprint": "", "rules": []}"#.into(), "/layout_fingerprint", "non-empty"),
        (r#"{"layout_fingerprint": "f", "rules": {}}"#.into(), "/rules", "rules must be an array"),
        (r#"{"layout_fingerprint": "f", "rules": [], "extra": 1}"#.into(), "/extra", "unknown member extra"),
        (r#"{"layout_fingerprint": "f", "rules": [{"match": "a"}]}"#.into(), "/rules/0", "lacks the required member action"),
        (r#"{"layout_fingerprint": "f", "rules": [{"match": 3, "action": "replicate"}]}"#.into(), "/rules/0/match", "match must be a string"),
        (r#"{"layout_fingerprint": "f", "rules": [{"match": "a", "action": {"split": {"dim": 0, "over": "pp"}}}]}"#.into(), "/rules/0/action/split/over", "over must be"),
        (r#"{"layout_fingerprint": "f", "rules": [{"match": "a", "action": {"split": {"dim": -1, "over": "tp"}}}]}"#.into(), "/rules/0/action/split/dim", "dim must be an integer"),
        (r#"{"layout_fingerprint": "f", "rules": [{"match": "a", "action": {"split": {"dim": 0, "over": "tp"}, "x": 1}}]}"#.into(), "/rules/0/action", "exactly one member"),
        (r#"{"layout_fingerprint": "f", "rules": [{"match": "a", "action": 7}]}"#.into(), "/rules/0/action", "a string or an object"),
        (r#"{"layout_fingerprint": "f", "rules": [{"match": "a", "action": "replicate", "stage": "middle"}]}"#.into(), "/rules/0/stage", "stage must be"),
        (r#"{"layout_fingerprint": "f", "rules": [{"match": "a", "action": "own_by_expert"}]}"#.into(), "/rules/0/match", "needs an expert group"),
        (r#"{"layout_fingerprint": "f", "rules": [], "pp": {"split": "odd"}}"#.into(), "/pp/split", "split must be \"even\""),
        (r#"{"layout_fingerprint": "f", "rules": [], "pp": {"split": "even", "stages": []}}"#.into(), "/pp", "exactly one of"),
        (r#"{"layout_fingerprint": "f", "rules": [], "pp": {"stages": [[0, 2], [2, 5]]}}"#.into(), "/pp/stages/1", "overlap"),
        (r#"{"layout_fingerprint": "f", "rules": [], "pp": {"stages": [[3, 2]]}}"#.into(), "/pp/stages/0", "after last layer"),
        (r#"{"layout_fingerprint": "f", "rules": [], "experts": 0}"#.into(), "/experts", "at least 1"),
    ];
    for (text, pointer, needle) in cases {
        assert_error(
            Rules::from_json(&text, &Options::default()).map(|_| ()),
            Code::AdaptRulesInvalid,
            Some(pointer),
            &[needle],
        );
    }
    // The strict JSON reader runs first.
    let error = Rules::from_json(r#"{"rules": [], "rules": []}"#, &Options::default()).unwrap_err();
    assert_eq!(error.code(), Code::DuplicateKey);
    // Typed input runs the same semantic checks.
    let mut wire = Rules::from_json(preset("bert.json"), &Options::default())
        .unwrap()
        .as_wire()
        .clone();
    wire.rules[0].match_ = "(".into();
    assert_eq!(
        Rules::from_wire(&wire).unwrap_err().path(),
        Some("/rules/0/match")
    );
}

#[test]
fn rule_values_out_of_range_for_the_checkpoint() {
    let checkpoint = minilm();
    let rules = bert_edited(|v| v["rules"][0]["action"]["split"]["dim"] = 2.into());
    assert_error(
        adapt_with(&checkpoint, &rules, grid(1, 1, 1)),
        Code::AdaptRulesInvalid,
        Some("/rules/0/action/split/dim"),
        &["tensor embeddings.word_embeddings.weight: dim 2 is out of range for shape [30522, 384]"],
    );
    let rules = bert_edited(|v| v["rules"][10]["stage"] = 2.into());
    assert_error(
        adapt_with(&checkpoint, &rules, grid(1, 2, 1)),
        Code::AdaptRulesInvalid,
        Some("/rules/10/stage"),
        &["stage 2 is not below pp 2"],
    );
    let rules = bert_edited(|v| v["pp"] = serde_json::json!({"stages": [[0, 2], [3, 5]]}));
    assert_error(
        adapt_with(&checkpoint, &rules, grid(1, 3, 1)),
        Code::AdaptRulesInvalid,
        Some("/pp/stages"),
        &["pp lists 2 stages but pp is 3"],
    );
    let rules = bert_edited(|v| v["pp"] = serde_json::json!({"stages": [[0, 2], [4, 5]]}));
    assert_error(
        adapt_with(&checkpoint, &rules, grid(1, 2, 1)),
        Code::AdaptRulesInvalid,
        Some("/pp/stages"),
        &["layer 3 is in no stage range"],
    );
    let rules = bert_edited(|v| v["pp"] = serde_json::json!({"split": "even", "layers": 4}));
    assert_error(
        adapt_with(&checkpoint, &rules, grid(1, 2, 1)),
        Code::AdaptRulesInvalid,
        Some("/pp/layers"),
        &["layer 4 is not below layers 4"],
    );
    // Explicit, uneven stages are fine.
    let rules = bert_edited(|v| v["pp"] = serde_json::json!({"stages": [[0, 1], [2, 5]]}));
    adapt_with(&checkpoint, &rules, grid(2, 2, 1)).unwrap();
}

#[test]
fn expert_errors() {
    let tensors: Vec<(String, &str, Vec<u64>)> = (0..6)
        .map(|e| (format!("layers.0.experts.{e}.w"), "BF16", vec![4, 4]))
        .collect();
    let checkpoint = Checkpoint::from_header(header_json(&tensors).as_bytes(), "m").unwrap();
    let rules = r#"{"layout_fingerprint": "f", "rules": [{"match": "layers\\.(?P<layer>\\d+)\\.experts\\.(?P<expert>\\d+)\\.w", "action": "own_by_expert"}]}"#;
    assert_error(
        adapt_with(&checkpoint, rules, grid(1, 1, 4)),
        Code::AdaptUnevenSplit,
        Some("/rules/0/action"),
        &["tensor layers.0.experts.0.w: 6 experts do not split evenly over ep 4"],
    );
    adapt_with(&checkpoint, rules, grid(1, 1, 3)).unwrap();
    let with_count = rules.replace("\"rules\"", "\"experts\": 4, \"rules\"");
    assert_error(
        adapt_with(&checkpoint, &with_count, grid(1, 1, 2)),
        Code::AdaptRulesInvalid,
        Some("/experts"),
        &["expert 4 is not below experts 4"],
    );
    let split = rules.replace(
        "\"own_by_expert\"",
        r#"{"own_by_expert": {"split_dim": 1}}"#,
    );
    assert_error(
        adapt_with(&checkpoint, &split, grid(3, 1, 2)),
        Code::AdaptUnevenSplit,
        Some("/rules/0/action"),
        &["dim 1 of size 4 does not split evenly over tp 3"],
    );
    let optional = r#"{"layout_fingerprint": "f", "rules": [{"match": "layers\\.(?P<layer>\\d+)\\.experts\\.(?:(?P<expert>\\d+)|x)\\.w", "action": "own_by_expert"}]}"#;
    let mut odd = tensors.clone();
    odd.push(("layers.0.experts.x.w".into(), "BF16", vec![4, 4]));
    let checkpoint = Checkpoint::from_header(header_json(&odd).as_bytes(), "m").unwrap();
    assert_error(
        adapt_with(&checkpoint, optional, grid(1, 1, 1)),
        Code::AdaptRulesInvalid,
        Some("/rules/0/match"),
        &["tensor layers.0.experts.x.w: own_by_expert needs the expert group"],
    );
}

#[test]
fn grid_errors() {
    assert_error(
        adapt_with(&minilm(), &preset("bert.json"), grid(0, 1, 1)),
        Code::AdaptGridInvalid,
        None,
        &["tp must be at least 1"],
    );
    let huge = Grid {
        dp: 1 << 40,
        pp: 1,
        tp: 1,
        ep: 1,
    };
    assert_error(
        adapt_with(&minilm(), &preset("bert.json"), huge),
        Code::AdaptGridInvalid,
        None,
        &["more than 10000000 fragments"],
    );
}

fn read_invalid(path: &std::path::Path) -> Error {
    match adapt::read_checkpoint(path) {
        Err(ReadError::Invalid(error)) => error,
        other => panic!("expected an invalid checkpoint, got {other:?}"),
    }
}

#[test]
fn header_and_index_errors() {
    let dir = scratch("errors");
    let file = dir.join("model.safetensors");
    std::fs::write(&file, b"\x05\x00").unwrap();
    assert!(read_invalid(&file)
        .message()
        .contains("fewer than the 8-byte header length"));
    let mut bytes = 1000_u64.to_le_bytes().to_vec();
    bytes.extend_from_slice(b"{}");
    std::fs::write(&file, bytes).unwrap();
    let error = read_invalid(&file);
    assert_eq!(error.code(), Code::AdaptHeaderInvalid);
    assert!(
        error.message().contains("runs past the end of the file"),
        "{error}"
    );
    write_header_file(
        &file,
        br#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}"#,
    );
    assert!(read_invalid(&file)
        .message()
        .starts_with("model.safetensors: invalid safetensors header"));

    let tensors: Vec<(String, &str, Vec<u64>)> =
        (0..4).map(|i| (format!("t{i}"), "F32", vec![2])).collect();
    write_sharded(&dir, &tensors, 2);
    assert_eq!(adapt::read_checkpoint(&dir).unwrap().tensors().len(), 4);
    let index = dir.join("model.safetensors.index.json");
    let edit = |f: &dyn Fn(&mut serde_json::Value)| {
        let mut value: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&index).unwrap()).unwrap();
        f(&mut value);
        std::fs::write(&index, value.to_string()).unwrap();
    };
    edit(&|v| v["weight_map"]["t9"] = "model-00001-of-00002.safetensors".into());
    assert!(read_invalid(&index)
        .message()
        .contains("maps tensor t9 to model-00001-of-00002.safetensors, which does not hold it"));
    edit(&|v| {
        v["weight_map"].as_object_mut().unwrap().remove("t9");
        v["weight_map"]["t0"] = "model-00002-of-00002.safetensors".into();
    });
    assert!(read_invalid(&index)
        .message()
        .contains("tensor t0 is not mapped to this shard"));
    edit(&|v| v["weight_map"]["t0"] = "../model-00001-of-00002.safetensors".into());
    let error = read_invalid(&index);
    assert_eq!(error.path(), Some("/weight_map/t0"));
    edit(&|v| v["weight_map"] = serde_json::json!([]));
    assert_eq!(read_invalid(&index).path(), Some("/weight_map"));
    match adapt::read_checkpoint(&dir.join("missing.safetensors")) {
        Err(ReadError::Io { .. }) => {}
        other => panic!("expected an I/O error, got {other:?}"),
    }
}

/// A whole file in memory: the length prefix is checked against the bytes there are, the
/// same way as for a file on disk (`Checkpoint::from_file_bytes` and `read_checkpoint` share
/// the check).
#[test]
fn the_length_prefix_is_checked_in_memory_as_on_disk() {
    let header = br#"{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}"#;
    let file = |declared: u64, data: usize| {
        let mut bytes = declared.to_le_bytes().to_vec();
        bytes.extend_from_slice(header);
        bytes.extend(std::iter::repeat_n(0u8, data));
        bytes
    };
    let n = header.len() as u64;
    let checkpoint = Checkpoint::from_file_bytes(&file(n, 8), "m.safetensors").unwrap();
    assert_eq!(checkpoint.tensors().len(), 1);
    for (bytes, needle) in [
        (file(n + 9, 8), "runs past the end"),
        (file(u64::MAX, 0), "above the safetensors limit"),
        (
            n.to_le_bytes()[..5].to_vec(),
            "fewer than the 8-byte header length",
        ),
        (file(n - 1, 8), "m.safetensors"),
    ] {
        let error = Checkpoint::from_file_bytes(&bytes, "m.safetensors").unwrap_err();
        assert_eq!(error.code(), Code::AdaptHeaderInvalid, "{error}");
        assert!(error.message().contains(needle), "{error}");
        let dir = scratch(&format!("length-prefix-{}", bytes.len()));
        let path = dir.join("model.safetensors");
        std::fs::write(&path, &bytes).unwrap();
        match adapt::read_checkpoint(&path) {
            Err(ReadError::Invalid(on_disk)) => {
                assert_eq!(on_disk.code(), error.code());
                assert_eq!(
                    on_disk
                        .message()
                        .replace("model.safetensors", "m.safetensors"),
                    error.message()
                );
            }
            other => panic!("{other:?}"),
        }
    }
}
