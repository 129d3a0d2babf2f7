//! A document given to the wrong command: `fields_mismatch` names the missing and the
//! unexpected keys and the command that reads the document (issue 24), in text (a second
//! line) and in `--format json` (`detail`). The expected commands are docs/cli.md's.

mod cli_support;

use cli_support::{run, stderr, stdout};

const EXAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/moe-ep-pp");

fn example(name: &str) -> String {
    format!("{EXAMPLE}/{name}")
}

#[test]
fn each_example_given_to_the_wrong_command_names_the_right_one() {
    let cases = [
        (
            "placement validate",
            "runtime-inventory.json",
            "runtime validate --inventory",
        ),
        (
            "placement validate",
            "binding-inventory.json",
            "binding validate --inventory",
        ),
        ("runtime validate", "placement.json", "placement validate"),
        ("binding validate", "placement.json", "placement validate"),
        (
            "binding validate",
            "runtime-inventory.json",
            "runtime validate --inventory",
        ),
        (
            "runtime validate",
            "binding-inventory.json",
            "binding validate --inventory",
        ),
    ];
    for (command, file, right) in cases {
        let mut args: Vec<&str> = command.split(' ').collect();
        let path = example(file);
        args.push(&path);
        let text = run(&args);
        assert_eq!(text.status.code(), Some(1), "{command} {file}");
        let message = stderr(&text);
        assert!(
            message.contains(&format!("read it with `weight-manifest {right}`")),
            "{command} {file}: {message}"
        );
        assert!(message.contains(" at /\n"), "the root reads `/`: {message}");

        args.extend(["--format", "json"]);
        let json: serde_json::Value = serde_json::from_str(&stdout(&run(&args))).unwrap();
        let error = &json["error"];
        assert_eq!(error["code"], "fields_mismatch");
        assert_eq!(error["path"], "", "the pointer stays \"\" in JSON");
        assert_eq!(
            error["detail"]["looks_like"]["command"],
            format!("weight-manifest {right}")
        );
    }
}

#[test]
fn the_missing_and_unexpected_keys_are_listed() {
    let dir = cli_support::ScratchDir::new("wrong-doc");
    let path = dir.write("partial.json", r#"{"fragments":[],"extra":1}"#);
    let output = run(&["placement", "validate", &path, "--format", "json"]);
    let json: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    let detail = &json["error"]["detail"];
    assert_eq!(
        detail["missing"],
        serde_json::json!(["model_id", "placement_id", "revision", "tensors"])
    );
    assert_eq!(detail["unexpected"], serde_json::json!(["extra"]));
    assert!(detail["looks_like"].is_null(), "{detail}");
    let text = stderr(&run(&["placement", "validate", &path]));
    assert!(
        text.contains("missing: model_id, placement_id, revision, tensors; unexpected: extra"),
        "{text}"
    );
}
