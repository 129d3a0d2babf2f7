//! Golden tests of the Rust emitter, one feature per case: each
//! `codegen/tests/schemas/NAME.schema.json` goes through the bundler, the wire types
//! (`rust`) and the member writers (`writers`), and what they emit must equal
//! `NAME.types.rs` and `NAME.writers.rs` beside it (or, for a schema the generator
//! rejects, its message must equal `NAME.error.txt`). The expected files were read by hand
//! against their schema when first written; `CODEGEN_BLESS=1 cargo test -p
//! weight-manifest-codegen golden` rewrites them from the emitter (then read the diff).

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::Result;
use crate::{bundle, rust, source, writers};

/// The environment variable that rewrites the expected files instead of comparing.
const BLESS: &str = "CODEGEN_BLESS";

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/schemas")
}

/// What the emitter gives for one case: the files it writes, by suffix, or its error.
fn emit(name: &str, text: &str) -> Vec<(&'static str, String)> {
    let emitted = || -> Result<(String, String)> {
        let file = source::parse(name, text)?;
        let bundle = bundle::bundle(std::slice::from_ref(&file))?;
        // The project's replacements that this case defines.
        let types = rust::generate_with(&bundle, &rust::replacements_in(&bundle))?;
        let writers = writers::generate(&types, &bundle, writers::Writers::Canonical, "")?;
        Ok((types, writers))
    };
    match emitted() {
        Ok((types, writers)) => vec![("types.rs", types), ("writers.rs", writers)],
        Err(message) => vec![("error.txt", format!("{message}\n"))],
    }
}

#[test]
fn every_schema_emits_its_golden_files() {
    let bless = std::env::var_os(BLESS).is_some();
    let dir = cases_dir();
    let mut names: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let schemas: Vec<&String> = names
        .iter()
        .filter(|n| n.ends_with(source::SUFFIX))
        .collect();
    assert!(
        schemas.len() >= 8,
        "the cases are missing from {}",
        dir.display()
    );
    let mut expected_files = Vec::new();
    let mut failures = Vec::new();
    for name in schemas {
        let stem = name.trim_end_matches(source::SUFFIX);
        let text = fs::read_to_string(dir.join(name)).unwrap();
        for (suffix, contents) in emit(name, &text) {
            let path = dir.join(format!("{stem}.{suffix}"));
            expected_files.push(format!("{stem}.{suffix}"));
            if bless {
                fs::write(&path, &contents).unwrap();
            } else if fs::read_to_string(&path).ok().as_deref() != Some(contents.as_str()) {
                failures.push(format!("{}:\n{contents}", path.display()));
            }
        }
    }
    // An expected file no case produces is stale (a schema renamed, or now accepted).
    for name in &names {
        if !name.ends_with(source::SUFFIX) && name != "README.md" && !expected_files.contains(name)
        {
            failures.push(format!("{name}: no case emits it"));
        }
    }
    assert!(
        failures.is_empty(),
        "the emitter's output differs from the golden files ({BLESS}=1 rewrites them):\n{}",
        failures.join("\n")
    );
}
