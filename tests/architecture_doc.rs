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

/// The Python packages and their directories: the binding and the runtime.
fn python_packages() -> [(&'static str, &'static str); 2] {
    [
        ("weight_manifest", "bindings/python/python/weight_manifest"),
        ("weight_manifest_runtime", "runtime/weight_manifest_runtime"),
    ]
}

/// Every module of a Python package, dotted (`weight_manifest_runtime.store`), packages' modules
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
    for (name, dir) in python_packages() {
        let mut python = BTreeSet::new();
        python_modules(&root().join(dir), name, &mut python);
        match section(&format!("`{name}` (Python)")) {
            Some(listed) => missing.extend(
                python
                    .iter()
                    .filter(|m| !listed.contains(*m))
                    .map(|m| format!("Python module {m}")),
            ),
            None => missing.push(format!("the Python package {name} (its section)")),
        }
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
            "weight_manifest_runtime.store",
            text.replace("| `weight_manifest_runtime.store` |", "| store |"),
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

/// The normal dependencies a crate's manifest declares (its `[dependencies]` table).
fn declared_dependencies(dir: &Path) -> BTreeSet<String> {
    let manifest = fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    let table = &manifest[manifest.find("\n[dependencies]\n").unwrap() + 16..];
    let table = &table[..table.find("\n[").unwrap_or(table.len())];
    table
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| l.split_once('=').map(|(name, _)| name.trim().to_owned()))
        .filter(|name| !name.is_empty())
        .collect()
}

/// The crates table's "depends on" column, by crate: "core" is `weight-manifest`, a short
/// name (`content`) the workspace crate `weight-manifest-content`; remarks in parentheses
/// are left out.
fn tabled_dependencies(text: &str) -> Vec<(String, BTreeSet<String>)> {
    let packages: BTreeSet<String> = members().iter().map(|d| package_name(d)).collect();
    let table = &text[text.find("## Crates").unwrap()..];
    let table = &table[..table.find("\n## ").unwrap_or(table.len())];
    let mut rows = Vec::new();
    for line in table.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let name = cells[1].trim_matches('`').to_owned();
        let mut column = String::new();
        let mut depth = 0;
        for c in cells[4].chars() {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                _ if depth == 0 => column.push(c),
                _ => {}
            }
        }
        let deps = column
            .split(',')
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(|d| match d {
                "core" => "weight-manifest".to_owned(),
                short if packages.contains(&format!("weight-manifest-{short}")) => {
                    format!("weight-manifest-{short}")
                }
                other => other.to_owned(),
            })
            .collect();
        rows.push((name, deps));
    }
    rows
}

#[test]
fn the_crates_table_gives_each_crates_dependencies() {
    let text = fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    let tabled = tabled_dependencies(&text);
    let mut wrong = Vec::new();
    for dir in members() {
        let name = package_name(&dir);
        let declared = declared_dependencies(&dir);
        match tabled.iter().find(|(n, _)| *n == name) {
            Some((_, deps)) if *deps == declared => {}
            Some((_, deps)) => wrong.push(format!(
                "{name}: the table says {deps:?}, Cargo.toml declares {declared:?}"
            )),
            None => wrong.push(format!("{name}: no row")),
        }
    }
    assert!(wrong.is_empty(), "docs/architecture.md: {wrong:#?}");
    // The comparison can fail: a dependency left out of a row is found.
    let short = text.replace("| core, serde, memchr |", "| core, serde |");
    let rows = tabled_dependencies(&short);
    let (_, deps) = rows
        .iter()
        .find(|(n, _)| n == "weight-manifest-mooncake")
        .unwrap();
    assert!(!deps.contains("memchr"), "{deps:?}");
}

/// Where the Python module `dotted` (`weight_manifest_runtime.transfer.lowering`) is.
fn python_file(dotted: &str) -> Option<PathBuf> {
    let (package, rest) = dotted.split_once('.').unwrap_or((dotted, ""));
    let (_, dir) = python_packages().into_iter().find(|(n, _)| *n == package)?;
    let base = root().join(dir).join(rest.replace('.', "/"));
    [base.with_extension("py"), base.join("__init__.py")]
        .into_iter()
        .find(|p| p.is_file())
}

/// The Python names the map gives in parentheses after a module (`weight_manifest.x` (…
/// `Name` …)) that the module does not define (a class, a function or an assignment).
fn misplaced_python_names(text: &str) -> Vec<String> {
    let mut wrong = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("`weight_manifest") {
        rest = &rest[at + 1..];
        let Some(end) = rest.find('`') else { break };
        let module = &rest[..end];
        rest = &rest[end + 1..];
        let Some(inside) = rest.strip_prefix(" (") else {
            continue;
        };
        let inside = &inside[..inside.find(')').unwrap_or(inside.len())];
        let Some(file) = python_file(module) else {
            continue;
        };
        let source = fs::read_to_string(&file).unwrap();
        for name in inside.split('`').skip(1).step_by(2) {
            let is_name = name.starts_with(|c: char| c.is_ascii_uppercase())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            let defined = source.lines().any(|l| {
                l.starts_with(&format!("class {name}"))
                    || l.starts_with(&format!("def {name}("))
                    || l.starts_with(&format!("{name} ="))
                    || l.starts_with(&format!("{name}: "))
            });
            if is_name && !defined {
                wrong.push(format!("{name} is not defined in {module}"));
            }
        }
    }
    wrong
}

#[test]
fn the_python_names_the_map_places_live_there() {
    let text = fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    let wrong = misplaced_python_names(&text);
    assert!(wrong.is_empty(), "docs/architecture.md: {wrong:#?}");
    // The check can fail: a class named under the wrong module is found.
    let moved = text.replace(
        "`weight_manifest_runtime.transfer.backends` (`EngineBackend`, `LocalBackend`)",
        "`weight_manifest_runtime.transfer.backends` (`EngineBackend`, `LocalBackend`, `Staging`)",
    );
    assert_eq!(
        misplaced_python_names(&moved),
        ["Staging is not defined in weight_manifest_runtime.transfer.backends"]
    );
}
