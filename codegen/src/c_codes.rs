//! The C enum of error codes, `WmCode`, generated from the core's `Code::ALL`.
//!
//! The generator reads `src/code.rs` (it does not link the core, so it still runs when
//! the core does not compile): the order of `Code::ALL`, each code's spelling from
//! `Code::as_str` and its doc comment. It writes `bindings/cpp/src/code_table.rs`, the
//! Rust enum that cbindgen turns into the C enum. Numbering: `WM_CODE_OK` is 0, the code
//! at index `i` of `Code::ALL` is `i + 1` (codes are only ever appended there, so numbers
//! never change), and the codes of the C ABI itself are 1000 and 1001.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use syn::{Expr, ImplItem, Item, Lit, Meta, Pat, Stmt, Type};

use crate::Result;

/// The core's code module, relative to the workspace root.
const CORE_CODES: &str = "src/code.rs";

/// The generated table, relative to the workspace root.
pub const TABLE: &str = "bindings/cpp/src/code_table.rs";

/// One code of the core.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoreCode {
    /// The Rust variant name (`InvalidJson`).
    pub ident: String,
    /// The wire spelling (`invalid_json`).
    pub name: String,
    /// The variant's doc comment, one entry per line.
    pub doc: Vec<String>,
}

/// Reads the codes, in `Code::ALL` order, from the core's sources under `root`.
pub fn read(root: &Path) -> Result<Vec<CoreCode>> {
    let path = root.join(CORE_CODES);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    parse(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Parses the text of `src/code.rs`.
pub fn parse(text: &str) -> Result<Vec<CoreCode>> {
    let file = syn::parse_file(text).map_err(|e| format!("not valid Rust: {e}"))?;
    let mut docs: HashMap<String, Vec<String>> = HashMap::new();
    let mut order: Option<Vec<String>> = None;
    let mut names: HashMap<String, String> = HashMap::new();
    for item in &file.items {
        match item {
            Item::Enum(e) if e.ident == "Code" => {
                for variant in &e.variants {
                    docs.insert(variant.ident.to_string(), doc_lines(&variant.attrs));
                }
            }
            Item::Impl(block) if block.trait_.is_none() && is_code(&block.self_ty) => {
                for item in &block.items {
                    match item {
                        ImplItem::Const(c) if c.ident == "ALL" => order = Some(all_list(&c.expr)?),
                        ImplItem::Fn(f) if f.sig.ident == "as_str" => {
                            names = spellings(&f.block.stmts)?;
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    let order = order.ok_or("no `Code::ALL` list")?;
    if order.is_empty() {
        return Err("`Code::ALL` is empty".to_owned());
    }
    order
        .into_iter()
        .map(|ident| {
            let name = names
                .get(&ident)
                .ok_or_else(|| format!("`Code::as_str` has no arm for {ident}"))?
                .clone();
            let doc = docs
                .get(&ident)
                .ok_or_else(|| format!("`Code` has no variant {ident}"))?
                .clone();
            Ok(CoreCode { ident, name, doc })
        })
        .collect()
}

fn is_code(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.qself.is_none() && p.path.is_ident("Code"))
}

fn doc_lines(attrs: &[syn::Attribute]) -> Vec<String> {
    attrs
        .iter()
        .filter_map(|attr| match &attr.meta {
            Meta::NameValue(nv) if nv.path.is_ident("doc") => match &nv.value {
                Expr::Lit(lit) => match &lit.lit {
                    Lit::Str(s) => Some(s.value()),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        })
        .map(|line| {
            line.strip_prefix(' ')
                .unwrap_or(&line)
                .trim_end()
                .to_owned()
        })
        .collect()
}

fn last_segment(path: &syn::Path) -> Option<String> {
    path.segments.last().map(|s| s.ident.to_string())
}

/// `&[Code::A, Code::B, ...]` -> `["A", "B", ...]`.
fn all_list(expr: &Expr) -> Result<Vec<String>> {
    let Expr::Reference(reference) = expr else {
        return Err("`Code::ALL` is not `&[...]`".to_owned());
    };
    let Expr::Array(array) = &*reference.expr else {
        return Err("`Code::ALL` is not `&[...]`".to_owned());
    };
    array
        .elems
        .iter()
        .map(|elem| match elem {
            Expr::Path(p) => last_segment(&p.path).ok_or_else(|| "empty path".to_owned()),
            _ => Err("`Code::ALL` holds something other than `Code::Name`".to_owned()),
        })
        .collect()
}

/// The arms `Code::Name => "spelling"` of the `match` that ends `as_str`.
fn spellings(stmts: &[Stmt]) -> Result<HashMap<String, String>> {
    let Some(Stmt::Expr(Expr::Match(m), None)) = stmts.last() else {
        return Err("`Code::as_str` does not end with a `match`".to_owned());
    };
    let mut names = HashMap::new();
    for arm in &m.arms {
        let (Pat::Path(pat), Expr::Lit(lit)) = (&arm.pat, &*arm.body) else {
            return Err("a `Code::as_str` arm is not `Code::Name => \"name\"`".to_owned());
        };
        let (Some(ident), Lit::Str(name)) = (last_segment(&pat.path), &lit.lit) else {
            return Err("a `Code::as_str` arm is not `Code::Name => \"name\"`".to_owned());
        };
        names.insert(ident, name.value());
    }
    Ok(names)
}

/// The Rust source of `bindings/cpp/src/code_table.rs`.
pub fn table(codes: &[CoreCode]) -> String {
    let mut out = String::from(
        "// @generated by weight-manifest-codegen from src/code.rs (Code::ALL). Do not edit.\n\
         \n\
         use std::ffi::CStr;\n\
         \n\
         use weight_manifest::Code;\n\
         \n\
         /// An error code: `WM_CODE_OK` (0); a code of the core, numbered 1 + its index in\n\
         /// `weight_manifest::Code::ALL` (the contract's table first, then the codes this\n\
         /// implementation adds; new codes are appended, so numbers never change); or a code\n\
         /// of the C ABI itself (1000 and up). `wm_error_code_name` gives the same code as a\n\
         /// string.\n\
         #[repr(u32)]\n\
         #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]\n\
         pub enum WmCode {\n    \
             /// No error.\n    \
             Ok = 0,\n",
    );
    for (index, code) in codes.iter().enumerate() {
        let mut doc = code.doc.clone();
        if doc.is_empty() {
            doc.push(format!("`{}`", code.name));
        }
        for line in doc {
            let _ = writeln!(
                out,
                "    ///{}{line}",
                if line.is_empty() { "" } else { " " }
            );
        }
        let _ = writeln!(out, "    {} = {},", code.ident, index + 1);
    }
    out.push_str(
        "    /// `invalid_argument`: a C argument is unusable (a required pointer is NULL, or a\n    \
         /// length is too large). Not a contract code: it never comes from a document.\n    \
         InvalidArgument = 1000,\n    \
         /// `internal_error`: the library caught a panic (a bug; the message says where). Not\n    \
         /// a contract code.\n    \
         InternalError = 1001,\n\
         }\n\
         \n\
         impl WmCode {\n    \
             /// The C enum value of a code of the core.\n    \
             pub fn from_core(code: Code) -> WmCode {\n        \
                 match code {\n",
    );
    for code in codes {
        let _ = writeln!(out, "            Code::{0} => WmCode::{0},", code.ident);
    }
    out.push_str(
        "            // `Code` is non-exhaustive: a code added after this table was generated\n            \
         // (the crate's tests and `codegen --check` catch that).\n            \
         _ => WmCode::InternalError,\n        \
         }\n    \
         }\n\
         \n    \
         /// The wire spelling (`invalid_json`, ...; `ok`, `invalid_argument` and\n    \
         /// `internal_error` for the codes that are not the core's).\n    \
         pub fn name(self) -> &'static CStr {\n        \
             match self {\n            \
                 WmCode::Ok => c\"ok\",\n",
    );
    for code in codes {
        let _ = writeln!(
            out,
            "            WmCode::{} => c{:?},",
            code.ident, code.name
        );
    }
    out.push_str(
        "            WmCode::InvalidArgument => c\"invalid_argument\",\n            \
         WmCode::InternalError => c\"internal_error\",\n        \
         }\n    \
         }\n\
         }\n",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"
        /// Codes.
        #[non_exhaustive]
        pub enum Code {
            /// `invalid_json`
            InvalidJson,
            /// `plan_limit_exceeded`: a plan would exceed
            /// its limit.
            PlanLimitExceeded,
        }
        impl Code {
            pub const ALL: &'static [Code] = &[Code::InvalidJson, Code::PlanLimitExceeded];
            pub const fn as_str(self) -> &'static str {
                match self {
                    Code::PlanLimitExceeded => "plan_limit_exceeded",
                    Code::InvalidJson => "invalid_json",
                }
            }
        }
        impl std::fmt::Display for Code {}
    "#;

    #[test]
    fn reads_order_spellings_and_docs() {
        let codes = parse(SAMPLE).unwrap();
        assert_eq!(codes.len(), 2);
        assert_eq!(codes[0].ident, "InvalidJson");
        assert_eq!(codes[0].name, "invalid_json");
        assert_eq!(codes[1].name, "plan_limit_exceeded");
        assert_eq!(
            codes[1].doc,
            ["`plan_limit_exceeded`: a plan would exceed", "its limit."]
        );
        let table = table(&codes);
        assert!(table.contains("    InvalidJson = 1,\n"), "{table}");
        assert!(table.contains("    PlanLimitExceeded = 2,\n"), "{table}");
        assert!(table.contains("WmCode::PlanLimitExceeded => c\"plan_limit_exceeded\","));
        assert!(table.contains("Code::InvalidJson => WmCode::InvalidJson,"));
    }

    #[test]
    fn rejects_what_it_cannot_read() {
        assert!(parse("fn main() {").is_err());
        assert!(parse("pub enum Code { A }").is_err());
        let missing_arm = SAMPLE.replace("Code::InvalidJson => \"invalid_json\",", "");
        assert!(parse(&missing_arm).unwrap_err().contains("InvalidJson"));
    }

    /// The real core's codes parse, and the contract's table comes first.
    #[test]
    fn reads_the_core() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let codes = read(&root).unwrap();
        assert_eq!(codes[0].name, "invalid_json");
        assert!(codes.len() >= 57);
        assert_eq!(codes[56].name, "binding_nbytes_mismatch");
    }
}
