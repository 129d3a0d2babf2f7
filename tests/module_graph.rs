//! The modules of every crate import each other one way: no import cycle between files,
//! and none between the folders of one level (an arrow "back up"), in every crate of the
//! workspace (the core's `src/`, each crate under `crates/` and `bindings/`, `codegen/`)
//! and in the Python package `weight_manifest` (the binding's modules and the runtime's).
//!
//! The graph is derived from the sources as text: every `use crate::…`, `use super::…` and
//! `use self::…` tree, and every `crate::…` / `super::…` path in code (comments and string
//! literals left out), is resolved to the file of the longest module prefix it names. A
//! module's own `mod` declarations are not arrows (a parent declares its children); its
//! `pub use` re-exports are. Unit-test files (`tests.rs`, `*_tests.rs`, `test_support.rs`)
//! are left out: they may reach anywhere.
//!
//! A Python module's arrows are its `import` and `from … import` statements (relative ones
//! resolved; docstrings and comments left out), each to the longest dotted prefix that is a
//! module of the package: `from . import x` is an arrow to the module `x` when there is one,
//! else to the package's `__init__.py`. The native module's stub (`_native.pyi`) is a leaf.
//!
//! On failure the test prints each cycle with the names that tie it. The same check from a
//! shell: `cargo test --test module_graph -- --nocapture`.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

mod scratch_support;
use scratch_support::ScratchDir;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The `src/` folders whose graphs are held to the rule: every member of the workspace
/// (the root manifest's `members`).
fn crate_sources() -> Vec<PathBuf> {
    let manifest = fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let list = &manifest[manifest.find("members = [").unwrap()..];
    let list = &list[..list.find(']').unwrap()];
    let mut dirs: Vec<PathBuf> = list
        .split('"')
        .skip(1)
        .step_by(2)
        .map(|member| root().join(member).join("src"))
        .filter(|src| src.join("lib.rs").is_file() || src.join("main.rs").is_file())
        .collect();
    dirs.retain(|d| !NOT_YET.iter().any(|n| d.ends_with(n)));
    dirs.sort();
    dirs
}

/// Crates whose cycles are being taken apart (emptied as each is done).
const NOT_YET: &[&str] = &[];

fn is_test_file(path: &Path) -> bool {
    let name = path.file_name().unwrap().to_string_lossy();
    name == "tests.rs" || name.ends_with("_tests.rs") || name == "test_support.rs"
}

/// Every `.rs` file below `dir`, as a path relative to `src`.
fn files(src: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(src, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") && !is_test_file(&path) {
            out.push(path.strip_prefix(src).unwrap().to_path_buf());
        }
    }
}

/// The module path of a file (`geometry/work.rs` → `["geometry", "work"]`; `lib.rs` and
/// `main.rs` → `[]`; `geometry/mod.rs` → `["geometry"]`).
fn module_of(file: &Path) -> Vec<String> {
    let mut parts: Vec<String> = file
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if !(parts.is_empty() && (stem == "lib" || stem == "main")) && stem != "mod" {
        parts.push(stem.to_owned());
    }
    parts
}

/// The text without comments, string and character literals (each replaced by a space), so
/// that a path in a doc link or a message is no arrow.
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let end = text[i + 2..].find("*/").map_or(b.len(), |e| i + 2 + e + 2);
            i = end;
            out.push(' ');
        } else if b[i] == b'r' && (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#')) {
            // A raw string r"…" or r#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                out.push('r');
                i += 1;
                continue;
            }
            let close = format!("\"{}", "#".repeat(hashes));
            i = text[j + 1..]
                .find(&close)
                .map_or(b.len(), |e| j + 1 + e + close.len());
            out.push(' ');
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push(' ');
        } else if b[i] == b'\'' && b.get(i + 2) == Some(&b'\'') {
            i += 3;
            out.push(' ');
        } else if b[i] == b'\'' && b.get(i + 1) == Some(&b'\\') {
            let end = text[i + 2..].find('\'').map_or(b.len(), |e| i + 2 + e + 1);
            i = end;
            out.push(' ');
        } else {
            let c = text[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// The code without its inline unit-test modules (`#[cfg(test)] mod name { ... }`), which
/// may reach anywhere, as the unit-test files may.
fn without_test_modules(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = rest[at + "#[cfg(test)]".len()..].trim_start();
        let Some(body) = after
            .strip_prefix("mod ")
            .and_then(|m| m.find(['{', ';']).map(|i| (m, i)))
        else {
            rest = &rest[at + "#[cfg(test)]".len()..];
            continue;
        };
        let (m, i) = body;
        if m.as_bytes()[i] == b';' {
            rest = &m[i + 1..];
            continue;
        }
        let mut depth = 0usize;
        let mut end = m.len();
        for (k, c) in m[i..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = i + k + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &m[end..];
    }
    out.push_str(rest);
    out
}

/// The full paths of one `use` tree (`a::{b, c::{d, e}}` → `a::b`, `a::c::d`, `a::c::e`).
fn expand(tree: &str) -> Vec<String> {
    // `a as b` is kept as `a@b`: the path, and the name it is known by.
    let tree = tree
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace(" as ", "@");
    let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(open) = tree.find('{') else {
        return vec![tree];
    };
    let prefix = &tree[..open];
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let mut items = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&inner[start..]);
    items
        .into_iter()
        .filter(|item| !item.is_empty())
        .flat_map(expand)
        .map(|rest| {
            if rest == "self" {
                prefix.trim_end_matches("::").to_owned()
            } else {
                format!("{prefix}{rest}")
            }
        })
        .collect()
}

/// The paths a file names: its `use` trees and its inline paths that start at `crate`,
/// `super`, `self`, or one of `children` (the modules the file declares: `use fast::x`).
fn named_paths(code: &str, children: &[String]) -> Vec<String> {
    let mut paths = Vec::new();
    let mut rest = code;
    // `use` trees (also `pub use`, `pub(crate) use`).
    while let Some(at) = rest.find("use ") {
        let before = rest[..at].chars().last();
        let after = &rest[at + 4..];
        rest = after;
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let Some(end) = after.find(';') else { break };
        let tree = after[..end].trim();
        let first = tree.split("::").next().unwrap_or_default();
        if matches!(first, "crate" | "super" | "self") {
            paths.extend(expand(tree));
        } else if children.iter().any(|c| c == first) {
            paths.extend(expand(&format!("self::{tree}")));
        }
    }
    // Inline paths: `crate::a::b`, `super::a`, `super::super::a`, `child::f`.
    let starts: Vec<String> = ["crate", "super"]
        .iter()
        .map(|s| (*s).to_owned())
        .chain(children.iter().cloned())
        .map(|s| format!("{s}::"))
        .collect();
    for start in &starts {
        let start = start.as_str();
        let mut from = 0;
        while let Some(found) = code[from..].find(start) {
            let at = from + found;
            from = at + start.len();
            if code[..at]
                .chars()
                .last()
                .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
            {
                continue;
            }
            let path: String = code[at..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            let path = path.trim_end_matches(':');
            // `super::{a, b}` in a use tree: its paths came with the tree.
            if path
                .split("::")
                .all(|s| matches!(s, "crate" | "super" | "self"))
            {
                continue;
            }
            if start.starts_with("crate") || start.starts_with("super") {
                paths.push(path.to_owned());
            } else {
                paths.push(format!("self::{path}"));
            }
        }
    }
    paths
}

/// A path named in module `here`, made absolute (`super::x` in `a::b` is `a::x`).
fn absolute(path: &str, here: &[String]) -> Option<Vec<String>> {
    let path = path.split('@').next().unwrap_or(path);
    let mut segments = path.split("::").filter(|s| !s.is_empty()).peekable();
    let mut base: Vec<String> = match segments.peek().copied() {
        Some("crate") => {
            segments.next();
            Vec::new()
        }
        Some("super" | "self") => {
            let mut base = here.to_vec();
            while let Some(&s) = segments.peek() {
                match s {
                    "super" => {
                        base.pop()?;
                    }
                    "self" => {}
                    _ => break,
                }
                segments.next();
            }
            base
        }
        _ => return None,
    };
    base.extend(segments.map(str::to_owned));
    Some(base)
}

/// What each module hands on with `pub use`: names (the name → the absolute path it
/// stands for) and globs (absolute module paths).
#[derive(Default)]
struct Reexports {
    names: BTreeMap<String, Vec<String>>,
    globs: Vec<Vec<String>>,
}

/// The file that defines the item an absolute path names: the longest module prefix,
/// followed through that module's re-exports (a name imported from a module that only
/// hands it on is an arrow to the module that defines it).
fn defining_module(
    path: &[String],
    modules: &BTreeSet<Vec<String>>,
    reexports: &BTreeMap<Vec<String>, Reexports>,
    texts: &BTreeMap<Vec<String>, String>,
    depth: usize,
) -> Vec<String> {
    let mut module = Vec::new();
    for k in 1..=path.len() {
        if modules.contains(&path[..k].to_vec()) {
            module = path[..k].to_vec();
        } else {
            break;
        }
    }
    let rest = &path[module.len()..];
    let (Some(name), Some(handed)) = (rest.first(), reexports.get(&module)) else {
        return module;
    };
    if depth > 8 {
        return module;
    }
    let target = handed.names.get(name).cloned().or_else(|| {
        handed.globs.iter().find_map(|glob| {
            let text = texts.get(glob)?;
            defines(text, name).then(|| {
                let mut t = glob.clone();
                t.push(name.clone());
                t
            })
        })
    });
    match target {
        Some(mut target) => {
            target.extend(rest[1..].iter().cloned());
            defining_module(&target, modules, reexports, texts, depth + 1)
        }
        None => module,
    }
}

/// Whether `text` defines an item named `name`.
fn defines(text: &str, name: &str) -> bool {
    [
        "struct ", "enum ", "fn ", "const ", "type ", "trait ", "static ", "mod ",
    ]
    .iter()
    .any(|kind| {
        text.match_indices(&format!("{kind}{name}")).any(|(i, m)| {
            let after = text[i + m.len()..].chars().next();
            !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
        })
    })
}

/// The `pub use` trees of a file (any visibility), expanded.
fn reexported(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in code.match_indices("pub") {
        let rest = &code[i + 3..];
        let rest = match rest.strip_prefix('(') {
            Some(r) => match r.find(')') {
                Some(close) => &r[close + 1..],
                None => continue,
            },
            None => rest,
        };
        let rest = rest.trim_start();
        let Some(tree) = rest.strip_prefix("use ") else {
            continue;
        };
        if let Some(end) = tree.find(';') {
            out.extend(expand(tree[..end].trim()));
        }
    }
    out
}

/// One crate's graph: file → (file → names taken).
type Graph = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

fn graph_of(src: &Path) -> Graph {
    let mut list = Vec::new();
    files(src, src, &mut list);
    let by_module: BTreeMap<Vec<String>, String> = list
        .iter()
        .map(|f| (module_of(f), f.to_string_lossy().replace('\\', "/")))
        .collect();
    let modules: BTreeSet<Vec<String>> = by_module.keys().cloned().collect();
    let texts: BTreeMap<Vec<String>, String> = list
        .iter()
        .map(|f| {
            let text = fs::read_to_string(src.join(f)).unwrap();
            (module_of(f), without_test_modules(&code_only(&text)))
        })
        .collect();
    let children_of = |here: &[String]| -> Vec<String> {
        modules
            .iter()
            .filter(|m| m.len() == here.len() + 1 && m.starts_with(here))
            .map(|m| m[here.len()].clone())
            .collect()
    };
    // A use tree relative to a child module (`pub use fast::x`) is `self::fast::x`.
    let with_self = |tree: &str, children: &[String]| -> String {
        let first = tree.split("::").next().unwrap_or_default();
        if children.iter().any(|c| c == first) {
            format!("self::{tree}")
        } else {
            tree.to_owned()
        }
    };
    let mut reexports: BTreeMap<Vec<String>, Reexports> = BTreeMap::new();
    for (here, code) in &texts {
        let children = children_of(here);
        let entry = reexports.entry(here.clone()).or_default();
        for tree in reexported(code) {
            let tree = with_self(&tree, &children);
            let Some(target) = absolute(&tree, here) else {
                continue;
            };
            match target.last().map(String::as_str) {
                Some("*") => entry.globs.push(target[..target.len() - 1].to_vec()),
                Some(last) => {
                    let name = tree.split('@').nth(1).unwrap_or(last).to_owned();
                    entry.names.insert(name, target);
                }
                None => {}
            }
        }
    }
    let mut graph = Graph::new();
    for (here, code) in &texts {
        let name = by_module[here].clone();
        let children = children_of(here);
        let edges = graph.entry(name.clone()).or_default();
        for path in named_paths(code, &children) {
            let Some(target) = absolute(&path, here) else {
                continue;
            };
            let target = if target.last().is_some_and(|l| l == "*") {
                target[..target.len() - 1].to_vec()
            } else {
                target
            };
            let module = defining_module(&target, &modules, &reexports, &texts, 0);
            let Some(to) = by_module.get(&module) else {
                continue;
            };
            if *to != name {
                let path = path.split('@').next().unwrap_or_default();
                let taken = path.rsplit("::").next().unwrap_or_default().to_owned();
                edges.entry(to.clone()).or_default().insert(taken);
            }
        }
    }
    graph
}

/// The strongly connected components of more than one node (Tarjan).
fn cycles(
    nodes: &BTreeSet<String>,
    edges: &BTreeMap<String, BTreeSet<String>>,
) -> Vec<Vec<String>> {
    struct State<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        s.on.insert(v);
        if let Some(next) = s.edges.get(v) {
            for w in next {
                let w = w.as_str();
                if !s.index.contains_key(w) {
                    visit(s, w);
                    let low = s.low[w].min(s.low[v]);
                    s.low.insert(v, low);
                } else if s.on.contains(w) {
                    let low = s.index[w].min(s.low[v]);
                    s.low.insert(v, low);
                }
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                component.push(w.to_owned());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.out.push(component);
            }
        }
    }
    let mut state = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in nodes {
        if !state.index.contains_key(v.as_str()) {
            visit(&mut state, v);
        }
    }
    state.out
}

/// The file graph folded onto the entries of folder `dir` (`""`: the crate root): each
/// file becomes the entry of `dir` it lies in (itself, or the sub-folder holding it).
fn folded(graph: &Graph, dir: &str) -> BTreeMap<String, BTreeMap<String, BTreeSet<String>>> {
    let entry = |file: &str| -> Option<String> {
        let rest = if dir.is_empty() {
            file
        } else {
            file.strip_prefix(dir)?.strip_prefix('/')?
        };
        Some(match rest.split_once('/') {
            Some((folder, _)) => format!(
                "{}{folder}/",
                if dir.is_empty() {
                    String::new()
                } else {
                    format!("{dir}/")
                }
            ),
            None => file.to_owned(),
        })
    };
    let mut out: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for (from, targets) in graph {
        let Some(a) = entry(from) else { continue };
        out.entry(a.clone()).or_default();
        for (to, names) in targets {
            let Some(b) = entry(to) else { continue };
            if a != b {
                let slot = out.entry(a.clone()).or_default().entry(b).or_default();
                slot.extend(names.iter().map(|n| format!("{from} -> {to}: {n}")));
            }
        }
    }
    out
}

/// The Python packages, the binding's and the runtime's: their modules are held to the same
/// rule.
fn python_packages() -> [PathBuf; 2] {
    [
        root().join("bindings/python/python/weight_manifest"),
        root().join("runtime/weight_manifest_runtime"),
    ]
}

/// Every module file below `dir`, relative to `package`: `.py` files, and the `.pyi` stub
/// of a native module (`_native`) that has no `.py`.
fn python_files(package: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let ext = path.extension().and_then(|e| e.to_str());
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "__pycache__") {
                python_files(package, &path, out);
            }
        } else if ext == Some("py") || (ext == Some("pyi") && !path.with_extension("py").is_file())
        {
            out.push(path.strip_prefix(package).unwrap().to_path_buf());
        }
    }
}

/// The dotted module name of a file relative to the package `package` (in
/// `weight_manifest_runtime`: `transfer/lowering.py` → `weight_manifest_runtime.transfer.lowering`;
/// `group/__init__.py` → `weight_manifest_runtime.group`).
fn python_module_of(package: &str, file: &Path) -> String {
    let mut parts = vec![package.to_owned()];
    parts.extend(file.iter().map(|p| p.to_string_lossy().into_owned()));
    let last = parts.pop().unwrap();
    let stem = last.split('.').next().unwrap_or_default();
    if stem != "__init__" {
        parts.push(stem.to_owned());
    }
    parts.join(".")
}

/// Python source without comments and string literals (each replaced by a space), so that
/// an import in a docstring's example is no arrow.
fn python_code_only(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if c == '#' {
            rest = &rest[rest.find('\n').unwrap_or(rest.len())..];
        } else if c == '"' || c == '\'' {
            let triple: String = std::iter::repeat_n(c, 3).collect();
            let (open, close) = if rest.starts_with(&triple) {
                (3, triple.clone())
            } else {
                (1, c.to_string())
            };
            let mut i = open;
            loop {
                match rest[i..].find(|ch: char| ch == '\\' || close.starts_with(ch)) {
                    None => {
                        i = rest.len();
                        break;
                    }
                    Some(at) if rest[i + at..].starts_with('\\') => {
                        i += at + 1 + rest[i + at + 1..].chars().next().map_or(0, char::len_utf8);
                    }
                    Some(at) if rest[i + at..].starts_with(close.as_str()) => {
                        i += at + close.len();
                        break;
                    }
                    Some(at) => i += at + 1,
                }
            }
            out.push(' ');
            rest = &rest[i.min(rest.len())..];
        } else {
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// The logical lines of Python code (a line goes on while a bracket is open or it ends
/// with a backslash).
fn logical_lines(code: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut current = String::new();
    let mut depth = 0i32;
    for line in code.lines() {
        for c in line.chars() {
            match c {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth -= 1,
                _ => {}
            }
        }
        let joined = line.strip_suffix('\\');
        current.push_str(joined.unwrap_or(line));
        current.push(' ');
        if depth <= 0 && joined.is_none() {
            lines.push(std::mem::take(&mut current));
            depth = 0;
        }
    }
    lines.push(current);
    lines
}

/// The (module, name) pairs a logical line imports, as dotted module names: `from X import
/// a, b` is X.a when that is a module, else X with the name a; `import X.Y` is X.Y.
/// `package` is the dotted package the file is in (itself for an `__init__.py`).
fn python_imports(line: &str, package: &str, modules: &BTreeSet<String>) -> Vec<(String, String)> {
    let line = line.trim();
    let mut out = Vec::new();
    if let Some(rest) = line.strip_prefix("from ") {
        let Some((from, names)) = rest.split_once(" import ") else {
            return out;
        };
        let from = from.trim();
        let dots = from.chars().take_while(|c| *c == '.').count();
        let base = if dots == 0 {
            from.to_owned()
        } else {
            let mut parts: Vec<&str> = package.split('.').collect();
            parts.truncate(parts.len().saturating_sub(dots - 1));
            let tail = &from[dots..];
            if tail.is_empty() {
                parts.join(".")
            } else {
                format!("{}.{tail}", parts.join("."))
            }
        };
        for name in names.replace(['(', ')'], " ").split(',') {
            let name = name.split_whitespace().next().unwrap_or_default();
            if name.is_empty() {
                continue;
            }
            let child = format!("{base}.{name}");
            if modules.contains(&child) {
                out.push((child, name.to_owned()));
            } else {
                out.push((base.clone(), name.to_owned()));
            }
        }
    } else if let Some(rest) = line.strip_prefix("import ") {
        for item in rest.split(',') {
            if let Some(module) = item.split_whitespace().next() {
                let last = module.rsplit('.').next().unwrap_or_default().to_owned();
                out.push((module.to_owned(), last));
            }
        }
    }
    out
}

/// The Python package's graph: file → (file → names taken), over its own modules.
fn python_graph_of(package: &Path) -> Graph {
    let mut list = Vec::new();
    python_files(package, package, &mut list);
    let prefix = package.file_name().unwrap().to_string_lossy().into_owned();
    let by_module: BTreeMap<String, String> = list
        .iter()
        .map(|f| {
            (
                python_module_of(&prefix, f),
                f.to_string_lossy().replace('\\', "/"),
            )
        })
        .collect();
    let modules: BTreeSet<String> = by_module.keys().cloned().collect();
    let mut graph = Graph::new();
    for file in &list {
        let module = python_module_of(&prefix, file);
        let name = by_module[&module].clone();
        let own_package = if file.file_name().is_some_and(|n| n == "__init__.py") {
            module.clone()
        } else {
            module
                .rsplit_once('.')
                .map(|(p, _)| p.to_owned())
                .unwrap_or_default()
        };
        let edges = graph.entry(name.clone()).or_default();
        // A native module's stub is a leaf: its imports name types for the type checker,
        // the module itself imports nothing when it loads.
        if file.extension().is_some_and(|e| e == "pyi") {
            continue;
        }
        let text = fs::read_to_string(package.join(file)).unwrap();
        for line in logical_lines(&python_code_only(&text)) {
            for (target, taken) in python_imports(&line, &own_package, &modules) {
                // The longest prefix that is a module of the package.
                let mut target = target.as_str();
                while !modules.contains(target) {
                    match target.rsplit_once('.') {
                        Some((prefix, _)) => target = prefix,
                        None => break,
                    }
                }
                if let Some(to) = by_module.get(target).filter(|to| **to != name) {
                    edges.entry(to.clone()).or_default().insert(taken);
                }
            }
        }
    }
    graph
}

/// Every cycle of one crate: among its files, and among the entries of each folder.
fn violations(src: &Path) -> Vec<String> {
    violations_of(&graph_of(src))
}

/// Every cycle of one graph (a crate's or the Python package's).
fn violations_of(graph: &Graph) -> Vec<String> {
    let mut found = Vec::new();
    let mut folders: BTreeSet<String> = BTreeSet::from([String::new()]);
    for file in graph.keys() {
        let mut dir = String::new();
        for part in file
            .split('/')
            .collect::<Vec<_>>()
            .iter()
            .rev()
            .skip(1)
            .rev()
        {
            dir = if dir.is_empty() {
                (*part).to_owned()
            } else {
                format!("{dir}/{part}")
            };
            folders.insert(dir.clone());
        }
    }
    let file_edges: BTreeMap<String, BTreeSet<String>> = graph
        .iter()
        .map(|(k, v)| (k.clone(), v.keys().cloned().collect()))
        .collect();
    let nodes: BTreeSet<String> = graph.keys().cloned().collect();
    for component in cycles(&nodes, &file_edges) {
        let ties: Vec<String> = component
            .iter()
            .flat_map(|a| {
                graph[a]
                    .iter()
                    .filter(|(b, _)| component.contains(b))
                    .map(move |(b, names)| format!("    {a} -> {b}: {names:?}"))
            })
            .collect();
        found.push(format!("file cycle {component:?}\n{}", ties.join("\n")));
    }
    for dir in &folders {
        let level = folded(graph, dir);
        let edges: BTreeMap<String, BTreeSet<String>> = level
            .iter()
            .map(|(k, v)| (k.clone(), v.keys().cloned().collect()))
            .collect();
        let nodes: BTreeSet<String> = level.keys().cloned().collect();
        for component in cycles(&nodes, &edges) {
            if component.iter().all(|c| !c.ends_with('/')) {
                continue; // a cycle of files, reported above
            }
            let ties: Vec<String> = component
                .iter()
                .flat_map(|a| {
                    level[a]
                        .iter()
                        .filter(|(b, _)| component.contains(b))
                        .flat_map(|(_, names)| names.iter().map(|n| format!("    {n}")))
                })
                .collect();
            found.push(format!(
                "folder cycle in {:?} (an arrow back up) {component:?}\n{}",
                if dir.is_empty() { "." } else { dir },
                ties.join("\n")
            ));
        }
    }
    found
}

#[test]
fn no_crate_has_an_import_cycle_or_an_arrow_back_up() {
    let mut report = Vec::new();
    let sources = crate_sources();
    assert!(sources.len() >= 10, "found {sources:?}");
    assert!(
        sources.iter().any(|s| s.ends_with("codegen/src")),
        "found {sources:?}"
    );
    for src in &sources {
        for v in violations(src) {
            report.push(format!(
                "{}: {v}",
                src.strip_prefix(root()).unwrap().display()
            ));
        }
    }
    assert!(report.is_empty(), "{}", report.join("\n"));
}

#[test]
fn the_checker_finds_a_cycle_and_an_arrow_back_up() {
    let dir = ScratchDir::new("module-graph");
    fs::create_dir_all(dir.join("low")).unwrap();
    fs::write(dir.join("lib.rs"), "mod a;\nmod low;\n").unwrap();
    fs::write(
        dir.join("a.rs"),
        "use crate::low::leaf::Leaf;\npub fn g() {}\n",
    )
    .unwrap();
    fs::write(
        dir.join("low/mod.rs"),
        "pub(crate) mod leaf;\npub(crate) mod other;\n",
    )
    .unwrap();
    fs::write(dir.join("low/leaf.rs"), "pub struct Leaf;\n").unwrap();
    // An arrow back up: low/ imports a.rs, which imports low/ (no cycle of files).
    fs::write(
        dir.join("low/other.rs"),
        "// use crate::a::Nothing; (a comment is no arrow)\nfn f() { let _ = \"crate::a::x\"; crate::a::g(); }\n",
    )
    .unwrap();
    let found = violations(&dir);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("folder cycle"), "{found:?}");
    // A cycle of two files.
    fs::write(dir.join("low/other.rs"), "pub struct X;\n").unwrap();
    fs::write(
        dir.join("low/leaf.rs"),
        "pub struct Leaf;\nuse super::other::X;\n",
    )
    .unwrap();
    fs::write(
        dir.join("low/other.rs"),
        "pub struct X;\nuse super::leaf::Leaf;\n",
    )
    .unwrap();
    let found = violations(&dir);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("file cycle"), "{found:?}");
}

#[test]
fn the_python_packages_have_no_import_cycle_or_arrow_back_up() {
    for (package, least_files, least_arrows) in python_packages()
        .iter()
        .zip([(10, 20), (25, 60)])
        .map(|(p, (f, a))| (p, f, a))
    {
        let graph = python_graph_of(package);
        assert!(graph.len() >= least_files, "found {:?}", graph.keys());
        // A reader that missed the imports would find no cycle either.
        let arrows: usize = graph.values().map(BTreeMap::len).sum();
        assert!(
            arrows >= least_arrows,
            "only {arrows} arrows between the modules of {}",
            package.display()
        );
        let found = violations_of(&graph);
        assert!(
            found.is_empty(),
            "{}: {}",
            package.display(),
            found.join("\n")
        );
    }
    let runtime = python_graph_of(&python_packages()[1]);
    assert!(
        runtime.keys().any(|f| f.starts_with("transfer/")),
        "found {:?}",
        runtime.keys()
    );
}

/// The imports of `package`'s files (outside comments and strings) that `wrong` finds
/// wrong, as `file: line`.
fn python_imports_where(package: &Path, wrong: impl Fn(&str) -> bool) -> Vec<String> {
    let mut list = Vec::new();
    python_files(package, package, &mut list);
    let mut found = Vec::new();
    for file in list
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "py"))
    {
        let text = fs::read_to_string(package.join(file)).unwrap();
        for line in logical_lines(&python_code_only(&text)) {
            let line = line.trim();
            if (line.starts_with("from ") || line.starts_with("import ")) && wrong(line) {
                found.push(format!("{}: {line}", file.display()));
            }
        }
    }
    found
}

/// Whether an import line takes a private module of the binding (`weight_manifest._x`).
fn takes_a_private_binding_module(line: &str) -> bool {
    line.split([' ', ',', '('])
        .any(|word| word.starts_with("weight_manifest._"))
        || (line.starts_with("from weight_manifest import")
            && line["from weight_manifest import".len()..]
                .split([',', '(', ')', ' '])
                .any(|name| name.starts_with('_')))
}

#[test]
fn the_runtime_takes_only_public_names_of_the_binding_and_the_binding_none_of_the_runtime() {
    let [binding, runtime] = python_packages();
    let private = python_imports_where(&runtime, takes_a_private_binding_module);
    assert!(
        private.is_empty(),
        "the runtime imports a private module of the binding: {private:#?}"
    );
    let up = python_imports_where(&binding, |line| line.contains("weight_manifest_runtime"));
    assert!(up.is_empty(), "the binding imports the runtime: {up:#?}");
    // The checks can fail.
    for line in [
        "from weight_manifest._native import BoundPlan",
        "import weight_manifest._native as n",
        "from weight_manifest import _native, content",
    ] {
        assert!(takes_a_private_binding_module(line), "{line}");
    }
    assert!(!takes_a_private_binding_module(
        "from weight_manifest import BoundPlan, content"
    ));
}

#[test]
fn the_python_checker_finds_a_cycle_and_an_arrow_back_up() {
    let dir = ScratchDir::new("module-graph-py");
    fs::create_dir_all(dir.join("low")).unwrap();
    fs::write(dir.join("__init__.py"), "").unwrap();
    fs::write(dir.join("a.py"), "from .low.leaf import Leaf\n").unwrap();
    fs::write(dir.join("low/__init__.py"), "").unwrap();
    fs::write(
        dir.join("low/leaf.py"),
        "\"\"\"Example:\n\nfrom ..a import nothing (a docstring is no arrow)\n\"\"\"\nclass Leaf: ...\n",
    )
    .unwrap();
    // An arrow back up: low/ imports a.py, which imports low/ (no cycle of files).
    fs::write(
        dir.join("low/other.py"),
        "# from .. import a (a comment is no arrow)\ndef f():\n    from .. import (\n        a,\n    )\n",
    )
    .unwrap();
    let found = violations_of(&python_graph_of(&dir));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("folder cycle"), "{found:?}");
    // A cycle of two files.
    fs::write(dir.join("low/other.py"), "from .leaf import Leaf\nX = 1\n").unwrap();
    fs::write(
        dir.join("low/leaf.py"),
        "from . import other\nclass Leaf: ...\n",
    )
    .unwrap();
    let found = violations_of(&python_graph_of(&dir));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("file cycle"), "{found:?}");
}
