//! The conformance corpus through the in-process testee: one trial per fixture, plus the
//! corpus-level checks (fixtures valid against the published fixture schema; every code
//! of the contract covered by two fixtures or listed as API-only).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::json;
use weight_manifest::Code;
use weight_manifest_conformance::{compare, load_fixtures, respond, Fixture, Verdict};

fn corpus() -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("tests/conformance")
}

fn run_fixture(fixture: &Fixture) -> Result<(), Failed> {
    let request =
        json!({ "id": fixture.id, "op": fixture.fixture.op, "input": fixture.fixture.input });
    let response = respond(&request.to_string());
    match compare(fixture, &response) {
        Verdict::Pass => Ok(()),
        Verdict::Skipped => Err("the Rust testee skipped a known operation".into()),
        Verdict::Fail(reason) => Err(reason.into()),
    }
}

fn fixtures_match_the_published_schema() -> Result<(), Failed> {
    let schema_text = weight_manifest::schema::published("conformance-fixture.schema.json")
        .ok_or("fixture schema is not published")?;
    let schema: serde_json::Value = serde_json::from_str(schema_text)?;
    let validator = jsonschema::validator_for(&schema)?;
    let mut problems = Vec::new();
    let files = walk(&corpus())?;
    if files.len() < 800 {
        return Err(format!("only {} fixture files found under the corpus", files.len()).into());
    }
    for file in files {
        let value: serde_json::Value = serde_json::from_slice(&fs::read(&file)?)?;
        for error in validator.iter_errors(&value) {
            problems.push(format!(
                "{}: {error} at {}",
                file.display(),
                error.instance_path()
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n").into())
    }
}

/// The fixture files: the JSON files in the corpus's subdirectories (the corpus root
/// holds other files, such as `coverage.json`).
fn walk(root: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in fs::read_dir(root)? {
        let path = entry?.path();
        if path.is_dir() {
            collect_json(&path, &mut files)?;
        }
    }
    Ok(files)
}

/// Every `.json` file below `dir`.
fn collect_json(dir: &Path, files: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            collect_json(&path, files)?;
        } else if path.extension().is_some_and(|e| e == "json") {
            files.push(path);
        }
    }
    Ok(())
}

/// Every code a document can trigger is expected by at least two fixtures; the rest have
/// an `api_only` reason in `schema/codes.json` (and are unit-tested).
fn every_code_is_covered(fixtures: &[Fixture]) -> Result<(), Failed> {
    let mut by_code: BTreeMap<String, usize> = BTreeMap::new();
    for fixture in fixtures {
        if let Some(code) = &fixture.fixture.expect.code {
            *by_code.entry(code.clone()).or_default() += 1;
        }
    }
    let codes_text = fs::read_to_string(corpus().join("../../schema/codes.json"))?;
    let codes: serde_json::Value = serde_json::from_str(&codes_text)?;
    let api_only: BTreeSet<String> = codes["codes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c.get("api_only").is_some())
        .filter_map(|c| c["code"].as_str().map(str::to_owned))
        .collect();
    if api_only.len() < 10 {
        return Err(format!(
            "schema/codes.json names only {} API-only codes",
            api_only.len()
        )
        .into());
    }
    let mut problems = Vec::new();
    for code in Code::ALL {
        let name = code.as_str();
        let count = by_code.get(name).copied().unwrap_or(0);
        if api_only.contains(name) {
            if count > 0 {
                problems.push(format!(
                    "{name} is listed as API-only but {count} fixtures expect it"
                ));
            }
        } else if count < 2 {
            problems.push(format!("{name} is expected by {count} fixtures (need 2)"));
        }
    }
    for name in by_code.keys().chain(api_only.iter()) {
        if name.parse::<Code>().is_err() {
            problems.push(format!("{name} is not a contract code"));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n").into())
    }
}

fn main() {
    let args = Arguments::from_args();
    let fixtures = match load_fixtures(&corpus()) {
        Ok(fixtures) => fixtures,
        Err(e) => {
            eprintln!("cannot load the corpus: {e}");
            std::process::exit(2);
        }
    };
    let mut trials: Vec<Trial> = Vec::with_capacity(fixtures.len() + 2);
    trials.push(Trial::test(
        "corpus::fixtures_match_the_published_schema",
        fixtures_match_the_published_schema,
    ));
    let all = fixtures.clone();
    trials.push(Trial::test("corpus::every_code_is_covered", move || {
        every_code_is_covered(&all)
    }));
    for fixture in fixtures {
        trials.push(Trial::test(format!("fixture::{}", fixture.id), move || {
            run_fixture(&fixture)
        }));
    }
    libtest_mimic::run(&args, trials).exit();
}
