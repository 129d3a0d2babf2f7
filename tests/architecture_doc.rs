//! `docs/architecture.md` names every crate of the workspace, every module of each crate (the
//! files and folders directly under its `src/`) and every Python module of the package, so a
//! module added without its line in the map fails here.
//!
//! The map: a section `### \`crate-name\`` per crate and `### \`weight_manifest\` (Python)`,
//! each naming its modules in backquotes; the crates table names every crate.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The backquoted names of each `### ` section of `text`, by heading.
fn sections(text: &str) -> Vec<(String, BTreeSet<String>)> {
    let mut out: Vec<(String, BTreeSet<String>)> = Vec::new();
    for line in text.lines() {
        if let Some(heading) = line.strip_prefix("### ") {
            out.push((heading.to_owned(), BTreeSet::new()));
        } else if line.starts_with("## ") {
            out.push((String::new(), BTreeSet::new()));
        } else if let Some((_, names)) = out.last_mut() {
            names.extend(line.split('`').skip(1).step_by(2).map(str::to_owned));
        }
    }
    out
}

/// The workspace's member folders, from the root manifest.
fn members() -> Vec<PathBuf> {
    let manifest = fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let list = &manifest[manifest.find("members = [").unwrap()..];
    let list = &list[..list.find(']').unwrap()];
    list.split('"')
        .skip(1)
        .step_by(2)
        .map(|member| root().join(member))
        .collect()
}

fn package_name(dir: &Path) -> String {
    let manifest = fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    let line = manifest
        .lines()
        .find(|l| l.starts_with("name = "))
        .unwrap_or_else(|| panic!("{}: no package name", dir.display()));
    line.trim_start_matches("name = ")
        .trim_matches('"')
        .to_owned()
}

/// The modules directly under a crate's `src/`: files (but the crate root and test files)
/// and folders.
fn modules(src: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for entry in fs::read_dir(src).unwrap().flatten() {
        let path = entry.path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            out.insert(name);
        } else if let Some(stem) = name.strip_suffix(".rs") {
            let test = stem == "tests" || stem.ends_with("_tests") || stem == "test_support";
            if !matches!(stem, "lib" | "main") && !test {
                out.insert(stem.to_owned());
            }
        }
    }
    out
}

/// Every module of the Python package, dotted (`weight_manifest.store`), packages' modules
/// included; `__init__` and stubs are not modules.
fn python_modules(dir: &Path, prefix: &str, out: &mut BTreeSet<String>) {
    for entry in fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() && path.join("__init__.py").is_file() {
            out.insert(format!("{prefix}.{name}"));
            python_modules(&path, &format!("{prefix}.{name}"), out);
        } else if let Some(stem) = name.strip_suffix(".py") {
            if stem != "__init__" {
                out.insert(format!("{prefix}.{stem}"));
            }
        }
    }
}

/// What the map lacks: every name that a section does not list.
fn missing(text: &str) -> Vec<String> {
    let map = sections(text);
    let section = |heading: &str| map.iter().find(|(h, _)| h == heading).map(|(_, n)| n);
    let mut missing = Vec::new();
    let crates_table = &text[text.find("## Crates").unwrap()..];
    let crates_table = &crates_table[..crates_table.find("\n## ").unwrap_or(crates_table.len())];
    for dir in members() {
        let name = package_name(&dir);
        if !crates_table.contains(&format!("`{name}`")) {
            missing.push(format!("crate {name} (the crates table)"));
        }
        let Some(listed) = section(&format!("`{name}`")) else {
            missing.push(format!("crate {name} (its section)"));
            continue;
        };
        for module in modules(&dir.join("src")) {
            if !listed.contains(&module) {
                missing.push(format!("module {module} of {name}"));
            }
        }
    }
    let mut python = BTreeSet::new();
    let package = root().join("bindings/python/python/weight_manifest");
    python_modules(&package, "weight_manifest", &mut python);
    match section("`weight_manifest` (Python)") {
        Some(listed) => missing.extend(
            python
                .iter()
                .filter(|m| !listed.contains(*m))
                .map(|m| format!("Python module {m}")),
        ),
        None => missing.push("the Python package (its section)".to_owned()),
    }
    missing
}

#[test]
fn the_architecture_names_every_crate_module_and_python_module() {
    let text = fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    let missing = missing(&text);
    assert!(
        missing.is_empty(),
        "docs/architecture.md does not name: {missing:#?}"
    );
}

#[test]
fn a_module_left_out_is_found() {
    let text = fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    for (name, gone) in [
        (
            "construct",
            text.replace("| `construct` |", "| construct |"),
        ),
        (
            "fields",
            text.replace("| `fields`, `descriptor`", "| fields, `descriptor`"),
        ),
        (
            "weight_manifest.store",
            text.replace("`weight_manifest.store`, ", ""),
        ),
        (
            "weight-manifest-mooncake",
            text.replace("### `weight-manifest-mooncake`", "### mooncake"),
        ),
    ] {
        let missing = missing(&gone);
        assert!(
            missing.iter().any(|m| m.contains(name)),
            "{name}: {missing:?}"
        );
    }
}
