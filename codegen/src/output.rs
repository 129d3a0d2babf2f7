//! Comparing generated files with the tree, and writing them.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::error::Result;

/// One generated file.
#[derive(Debug, Clone)]
pub struct Output {
    /// Path relative to the workspace root, with `/` separators.
    pub path: String,
    /// Full contents.
    pub contents: String,
}

/// How the tree differs from the generated files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Drift {
    /// A generated file that does not exist yet.
    Missing(String),
    /// A generated file whose contents differ.
    Changed(String),
    /// A file in a generated directory that the generator does not produce.
    Extra(String),
}

impl Drift {
    /// A one-line description.
    pub fn describe(&self) -> String {
        match self {
            Drift::Missing(path) => format!("missing: {path}"),
            Drift::Changed(path) => format!("changed: {path}"),
            Drift::Extra(path) => format!("extra:   {path}"),
        }
    }
}

/// Compares `outputs` with the files under `root`. `owned_dir` is a directory
/// (relative to `root`) that holds nothing but generated files: anything else
/// in it is [`Drift::Extra`].
pub fn drift(root: &Path, outputs: &[Output], owned_dir: &str) -> Result<Vec<Drift>> {
    let mut found = Vec::new();
    for output in outputs {
        let path = root.join(&output.path);
        match fs::read(&path) {
            Ok(bytes) if bytes == output.contents.as_bytes() => {}
            Ok(_) => found.push(Drift::Changed(output.path.clone())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                found.push(Drift::Missing(output.path.clone()));
            }
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        }
    }
    let dir = root.join(owned_dir);
    if dir.is_dir() {
        let entries =
            fs::read_dir(&dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
        let mut extra = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
            let relative = format!("{owned_dir}/{}", entry.file_name().to_string_lossy());
            if !outputs.iter().any(|o| o.path == relative) {
                extra.push(Drift::Extra(relative));
            }
        }
        extra.sort_by_key(Drift::describe);
        found.extend(extra);
    }
    Ok(found)
}

/// Brings the tree in line: writes missing and changed files (each through a
/// temporary file in the same directory, then a rename) and removes extra ones.
pub fn apply(root: &Path, outputs: &[Output], drift: &[Drift]) -> Result<()> {
    for item in drift {
        match item {
            Drift::Missing(path) | Drift::Changed(path) => {
                let output = outputs
                    .iter()
                    .find(|o| &o.path == path)
                    .ok_or_else(|| format!("internal error: no output for {path}"))?;
                write_atomically(&root.join(path), output.contents.as_bytes())?;
            }
            Drift::Extra(path) => {
                let path = root.join(path);
                let removed = if path.is_dir() {
                    fs::remove_dir_all(&path)
                } else {
                    fs::remove_file(&path)
                };
                removed.map_err(|e| format!("cannot remove {}: {e}", path.display()))?;
            }
        }
    }
    Ok(())
}

fn write_atomically(path: &Path, contents: &[u8]) -> Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| format!("{} has no parent directory", path.display()))?;
    fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let file_name = path.file_name().unwrap_or_default().to_string_lossy();
    let temp: PathBuf = dir.join(format!(".{file_name}.codegen-tmp"));
    let written = fs::File::create(&temp).and_then(|mut file| {
        file.write_all(contents)?;
        file.sync_all()
    });
    if let Err(e) = written.and_then(|()| fs::rename(&temp, path)) {
        let _ = fs::remove_file(&temp);
        return Err(format!("cannot write {}: {e}", path.display()));
    }
    Ok(())
}
