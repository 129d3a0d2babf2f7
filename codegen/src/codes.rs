//! The error codes, from their one source `schema/codes.json`: read and checked here, then
//! written as the core's `Code` (`src/code/generated.rs`), the Python list
//! (`weight_manifest/_codes.py`) and, through [`crate::c_codes`], the C enum. The published
//! fixture schema takes its code enum from the same list ([`crate::dist`]).

use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;

use crate::error::Result;
use crate::source::SchemaFile;

/// The codes file, relative to the workspace root.
pub const SOURCE: &str = "schema/codes.json";
/// The generated Rust module of the core.
pub const RUST: &str = "src/code/generated.rs";
/// The generated Python module of the binding.
pub const PYTHON: &str = "bindings/python/python/weight_manifest/_codes.py";

/// One error code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeEntry {
    /// The wire spelling (`invalid_json`).
    pub name: String,
    /// Whether the contract defines it (else this implementation added it).
    pub contract: bool,
    /// What it means, for the generated docs.
    pub summary: String,
}

impl CodeEntry {
    /// The Rust variant name: `u64_overflow` -> `U64Overflow`.
    pub fn ident(&self) -> String {
        self.name
            .split('_')
            .map(|part| {
                let mut chars = part.chars();
                chars.next().map_or_else(String::new, |first| {
                    first.to_ascii_uppercase().to_string() + chars.as_str()
                })
            })
            .collect()
    }

    /// The doc comment: the spelling, then the summary.
    pub fn doc(&self) -> String {
        let origin = if self.contract {
            ""
        } else {
            " (added by this implementation)"
        };
        format!("`{}`: {}{origin}", self.name, self.summary)
    }
}

/// Reads and checks `schema/codes.json` under `root`.
pub fn read(root: &Path) -> Result<Vec<CodeEntry>> {
    let path = root.join(SOURCE);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    parse(&text).map_err(|e| format!("{SOURCE}: {e}"))
}

/// Parses the codes file: `{"codes": [{"code", "origin", "summary", "raised_by",
/// "api_only"?}, ...]}`, every name snake_case and unique, the contract's codes first.
pub fn parse(text: &str) -> Result<Vec<CodeEntry>> {
    let document: Value = serde_json::from_str(text).map_err(|e| format!("invalid JSON: {e}"))?;
    let list = document
        .get("codes")
        .and_then(Value::as_array)
        .ok_or("no `codes` array")?;
    let mut codes: Vec<CodeEntry> = Vec::with_capacity(list.len());
    for (i, entry) in list.iter().enumerate() {
        let text = |key: &str| {
            entry
                .get(key)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| format!("codes[{i}]: no string `{key}`"))
        };
        let name = text("code")?;
        let snake = !name.is_empty()
            && name.starts_with(|c: char| c.is_ascii_lowercase())
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
        if !snake {
            return Err(format!("codes[{i}]: {name:?} is not snake_case"));
        }
        if codes.iter().any(|c| c.name == name) {
            return Err(format!("codes[{i}]: {name} is listed twice"));
        }
        let contract = match text("origin")?.as_str() {
            "contract" => true,
            "implementation" => false,
            other => {
                return Err(format!(
                    "codes[{i}]: origin {other:?} is not contract or implementation"
                ))
            }
        };
        if contract && codes.last().is_some_and(|c| !c.contract) {
            return Err(format!(
                "codes[{i}]: {name}: the contract's codes come first"
            ));
        }
        let raised_by = entry.get("raised_by").and_then(Value::as_array);
        if !raised_by.is_some_and(|list| list.iter().all(Value::is_string)) {
            return Err(format!(
                "codes[{i}]: {name}: `raised_by` is not a list of names"
            ));
        }
        codes.push(CodeEntry {
            name,
            contract,
            summary: text("summary")?,
        });
    }
    if codes.is_empty() {
        return Err("no codes".to_owned());
    }
    Ok(codes)
}

/// Wraps `text` into `///` lines of at most about 92 columns at `indent`.
pub fn doc_comment(out: &mut String, indent: &str, text: &str) {
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && indent.len() + 4 + line.len() + 1 + word.len() > 92 {
            let _ = writeln!(out, "{indent}/// {line}");
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    let _ = writeln!(out, "{indent}/// {line}");
}

/// The Rust source of `src/code/generated.rs`.
pub fn rust(codes: &[CodeEntry]) -> String {
    let mut out = String::from(
        "// @generated by weight-manifest-codegen from schema/codes.json. Do not edit.\n\
         \n\
         /// A stable error code: the contract's (§18), then the codes this implementation adds.\n\
         #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]\n\
         #[non_exhaustive]\n\
         pub enum Code {\n",
    );
    for code in codes {
        doc_comment(&mut out, "    ", &code.doc());
        let _ = writeln!(out, "    {},", code.ident());
    }
    out.push_str(
        "}\n\
         \n\
         impl Code {\n    \
             /// Every code: the contract's table in its order, then the codes added by this\n    \
             /// implementation. Codes are only ever appended (the C ABI numbers them by position).\n    \
             pub const ALL: &'static [Code] = &[\n",
    );
    for code in codes {
        let _ = writeln!(out, "        Code::{},", code.ident());
    }
    out.push_str(
        "    ];\n\
         \n    \
             /// The snake_case spelling used on the wire and in fixtures.\n    \
             pub const fn as_str(self) -> &'static str {\n        \
                 match self {\n",
    );
    for code in codes {
        let _ = writeln!(
            out,
            "            Code::{} => {:?},",
            code.ident(),
            code.name
        );
    }
    out.push_str(
        "        }\n    \
         }\n\
         \n    \
             /// Whether the contract defines the code (else this implementation added it).\n    \
             pub const fn is_contract(self) -> bool {\n        \
                 matches!(\n            \
                     self,\n",
    );
    let contract: Vec<String> = codes
        .iter()
        .filter(|c| c.contract)
        .map(|c| format!("Code::{}", c.ident()))
        .collect();
    let _ = writeln!(out, "            {}", contract.join("\n                | "));
    out.push_str("        )\n    }\n}\n");
    out
}

/// The Python source of `weight_manifest/_codes.py`.
pub fn python(codes: &[CodeEntry]) -> String {
    let mut out = String::from(
        "# @generated by weight-manifest-codegen from schema/codes.json. Do not edit.\n\
         \"\"\"The error codes a ``ManifestError.code`` can hold, in ``Code::ALL`` order.\"\"\"\n\
         \n\
         CONTRACT_CODES: tuple[str, ...] = (\n",
    );
    for code in codes.iter().filter(|c| c.contract) {
        let _ = writeln!(out, "    {:?},", code.name);
    }
    out.push_str(")\n\nADDED_CODES: tuple[str, ...] = (\n");
    for code in codes.iter().filter(|c| !c.contract) {
        let _ = writeln!(out, "    {:?},", code.name);
    }
    out.push_str(")\n\nCODES: tuple[str, ...] = CONTRACT_CODES + ADDED_CODES\n");
    out
}

/// The schema sources with the code list as the `enum` of every `$defs/ErrorCode` (the
/// conformance fixture schema's), for the published schemas: a fixture that expects a code
/// no implementation has fails validation. The sources keep the plain string, so the
/// generated Rust wire types hold the code as a string.
pub fn with_code_enum(files: &[SchemaFile], codes: &[CodeEntry]) -> Vec<SchemaFile> {
    let names: Vec<Value> = codes
        .iter()
        .map(|c| Value::String(c.name.clone()))
        .collect();
    files
        .iter()
        .cloned()
        .map(|mut file| {
            if let Some(Value::Object(code)) = file
                .schema
                .get_mut("$defs")
                .and_then(|defs| defs.get_mut("ErrorCode"))
            {
                code.insert("enum".to_owned(), Value::Array(names.clone()));
            }
            file
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"{"codes": [
        {"code": "invalid_json", "origin": "contract", "summary": "not JSON.", "raised_by": ["*"]},
        {"code": "u64_overflow", "origin": "contract", "summary": "too big.", "raised_by": []},
        {"code": "plan_limit_exceeded", "origin": "implementation", "summary": "a plan would exceed its limit.", "raised_by": ["plan"]}]}"#;

    #[test]
    fn reads_generates_and_numbers_in_order() {
        let codes = parse(SAMPLE).unwrap();
        assert_eq!(codes[1].ident(), "U64Overflow");
        assert!(!codes[2].contract);
        let rust = rust(&codes);
        assert!(rust.contains("    PlanLimitExceeded,\n"), "{rust}");
        assert!(rust.contains("Code::PlanLimitExceeded => \"plan_limit_exceeded\","));
        assert!(rust.contains("(added by this implementation)"));
        assert!(
            rust.contains("Code::InvalidJson\n                | Code::U64Overflow\n"),
            "{rust}"
        );
        let python = python(&codes);
        assert!(
            python.contains("ADDED_CODES: tuple[str, ...] = (\n    \"plan_limit_exceeded\",\n)")
        );
        let table = crate::c_codes::table(&codes);
        assert!(table.contains("    InvalidJson = 1,\n"), "{table}");
        assert!(table.contains("    PlanLimitExceeded = 3,\n"), "{table}");
    }

    #[test]
    fn rejects_what_it_cannot_read() {
        assert!(parse("{").is_err());
        assert!(parse(r#"{"codes": []}"#).is_err());
        let twice = SAMPLE.replace("u64_overflow", "invalid_json");
        assert!(parse(&twice).unwrap_err().contains("twice"));
        let camel = SAMPLE.replace("u64_overflow", "U64Overflow");
        assert!(parse(&camel).unwrap_err().contains("snake_case"));
        let late = SAMPLE
            .replace(r#""implementation""#, r#""contract""#)
            .replacen(
                r#""origin": "contract", "summary": "not JSON.""#,
                r#""origin": "implementation", "summary": "not JSON.""#,
                1,
            );
        assert!(parse(&late).unwrap_err().contains("come first"));
    }

    /// The real codes file reads, the contract's 57 first.
    #[test]
    fn reads_the_codes_file() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let codes = read(&root).unwrap();
        assert_eq!(codes[0].name, "invalid_json");
        assert_eq!(codes.iter().filter(|c| c.contract).count(), 57);
        assert_eq!(codes[56].name, "binding_nbytes_mismatch");
    }
}
