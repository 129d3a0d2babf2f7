//! Loading fixture files: one JSON file per case in the subfolders of the corpus; the
//! id of a case is its path below the corpus without `.json`.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde_json::Value as Json;
use weight_manifest::wire::ConformanceFixture;

/// One case: its id and its content.
#[derive(Clone, Debug)]
pub struct Fixture {
    /// The path below the corpus root without `.json`, with `/` separators.
    pub id: String,
    /// The parsed fixture.
    pub fixture: ConformanceFixture,
    /// What the fixture expects of the result's generation, read from the raw
    /// `expect.generation` member, which the typed [`ConformanceFixture`] reads as `None`
    /// whether it is absent or null.
    pub expect_generation: GenerationExpectation,
}

/// A fixture's `expect.generation`: three cases, where the typed expectation has two.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GenerationExpectation {
    /// The member is absent: the generation is not checked.
    Unchecked,
    /// `null`: the result must have no generation (`generation` null or absent).
    Null,
    /// An integer: the result's generation must be this one.
    Is(u64),
}

impl Fixture {
    /// A fixture from its id and its parsed JSON document.
    ///
    /// # Errors
    ///
    /// The document is not a fixture (schema/conformance-fixture.schema.json).
    pub fn from_value(id: String, document: Json) -> Result<Fixture, serde_json::Error> {
        let expect_generation = match document.get("expect").and_then(|e| e.get("generation")) {
            None => GenerationExpectation::Unchecked,
            Some(g) => g
                .as_u64()
                .map_or(GenerationExpectation::Null, GenerationExpectation::Is),
        };
        let fixture: ConformanceFixture = serde_json::from_value(document)?;
        Ok(Fixture {
            id,
            fixture,
            expect_generation,
        })
    }
}

/// Loads every `*.json` file in the subfolders of `root` (files directly in `root` are
/// corpus metadata), sorted by id.
pub fn load_fixtures(root: &Path) -> io::Result<Vec<Fixture>> {
    let mut files = Vec::new();
    for entry in fs::read_dir(root)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            collect(&entry.path(), &mut files)?;
        }
    }
    let mut fixtures = Vec::with_capacity(files.len());
    for file in files {
        let text = fs::read(&file)?;
        let not_a_fixture = |e: serde_json::Error| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{}: not a fixture: {e}", file.display()),
            )
        };
        let document: Json = serde_json::from_slice(&text).map_err(not_a_fixture)?;
        let relative = file.strip_prefix(root).unwrap_or(&file).with_extension("");
        let id = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        fixtures.push(Fixture::from_value(id, document).map_err(not_a_fixture)?);
    }
    fixtures.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(fixtures)
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) -> io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            collect(&path, files)?;
        } else if path.extension().is_some_and(|e| e == "json") {
            files.push(path);
        }
    }
    Ok(())
}
