//! `docs/contract.md` is the contract users read: every code the implementation can raise
//! has its row in §18, and every `§N` the sources cite (code, error messages, `--help`) is a
//! section of it.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use weight_manifest::Code;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn contract() -> String {
    fs::read_to_string(root().join("docs/contract.md")).unwrap()
}

/// The codes of the §18 tables: rows that start with "| `code` |".
fn table_codes(text: &str) -> Vec<String> {
    let table = &text[text.find("## 18. Error codes").expect("§18 heading")..];
    table
        .lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .filter_map(|rest| rest.split_once("` |").map(|(code, _)| code.to_owned()))
        .collect()
}

#[test]
fn every_code_has_its_row_in_section_18_in_code_order() {
    let rows = table_codes(&contract());
    let all: Vec<String> = Code::ALL.iter().map(|c| c.as_str().to_owned()).collect();
    assert_eq!(rows, all, "docs/contract.md §18 rows against Code::ALL");
}

/// The section numbers of the headings ("## 8. ...", "### 8.4 ...").
fn sections(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter(|line| line.starts_with("## ") || line.starts_with("### "))
        .filter_map(|line| line.split_whitespace().nth(1))
        .map(|number| number.trim_end_matches('.').to_owned())
        .filter(|number| number.starts_with(|c: char| c.is_ascii_digit()))
        .collect()
}

/// Every "§N" or "§N.M" in `text`.
fn citations(text: &str) -> Vec<String> {
    text.split('§')
        .skip(1)
        .map(|after| {
            let number: String = after
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            number.trim_end_matches('.').to_owned()
        })
        .filter(|number| !number.is_empty())
        .collect()
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if !matches!(name.as_str(), "target" | "dist" | "node_modules" | ".venv") {
                sources(&path, out);
            }
        } else if [".rs", ".py", ".hpp", ".h", ".cpp", ".pyi", ".md"]
            .iter()
            .any(|ext| name.ends_with(ext))
        {
            out.push(path);
        }
    }
}

#[test]
fn every_cited_section_is_in_the_contract() {
    let known = sections(&contract());
    assert!(known.contains("8.4") && known.contains("18"), "{known:?}");
    let mut files = Vec::new();
    for dir in ["src", "crates", "bindings", "schema", "tests", "docs"] {
        sources(&root().join(dir), &mut files);
    }
    files.push(root().join("README.md"));
    files.push(root().join("SECURITY.md"));
    let mut unresolved = Vec::new();
    for file in &files {
        let text = fs::read_to_string(file).unwrap_or_default();
        for cited in citations(&text) {
            if !known.contains(&cited) {
                unresolved.push(format!("{}: §{cited}", file.display()));
            }
        }
    }
    assert!(files.len() > 100, "found {} sources", files.len());
    assert!(
        unresolved.is_empty(),
        "citations with no section: {unresolved:#?}"
    );
}
