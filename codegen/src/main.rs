//! `weight-manifest-codegen`: generates the wire types and the published
//! schemas of `weight-manifest` from the JSON Schema sources in `schema/`.
//!
//! ```text
//! cargo run -p weight-manifest-codegen -- [--check] [--root DIR]
//! ```
//!
//! Writes `src/wire/generated.rs` (the types), `src/wire/writers.rs` (their member names,
//! field lists and canonical writers), the Mooncake crate's `crates/mooncake/src/wire/`
//! (the types of `schema/mooncake-*`, their member names and field lists) and
//! `schema/dist/*` from the schemas; from the codes file
//! `schema/codes.json` the core's `Code` (`src/code/generated.rs`), the Python list
//! (`weight_manifest/_codes.py`), the code enum of the published fixture schema and the
//! C++ binding's error code table `bindings/cpp/src/code_table.rs`; and the C header
//! `bindings/cpp/include/weight_manifest.h` (cbindgen). With `--check` nothing is
//! written: the exit code is 1 if any of those files would change.

mod bundle;
mod c_codes;
mod c_header;
mod codes;
mod dist;
mod error;
#[cfg(test)]
mod golden_tests;
mod homes;
mod json;
mod output;
mod rust;
mod source;
mod writers;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use error::Result;
use output::Output;
use writers::Writers;

/// Directory of the schema sources, relative to the root.
const SCHEMA_DIR: &str = "schema";
/// Directory of the published schemas, relative to the root; holds only
/// generated files.
const DIST_DIR: &str = "schema/dist";
/// The generated Rust module, relative to the root.
const GENERATED_RS: &str = "src/wire/generated.rs";

const USAGE: &str = "usage: weight-manifest-codegen [--check] [--root DIR]

Generates src/wire/generated.rs, src/wire/writers.rs,
crates/mooncake/src/wire/generated.rs, crates/mooncake/src/wire/writers.rs and
schema/dist/* from schema/*.schema.json,
src/code/generated.rs, weight_manifest/_codes.py and bindings/cpp/src/code_table.rs
from schema/codes.json, and
bindings/cpp/include/weight_manifest.h from bindings/cpp/src (cbindgen).
  --check     write nothing; exit 1 if any generated file would change
  --root DIR  workspace root (default: the current directory)";

/// Command-line options.
#[derive(Debug, PartialEq, Eq)]
struct Options {
    root: PathBuf,
    check: bool,
}

/// What the command line asks for.
#[derive(Debug, PartialEq, Eq)]
enum Command {
    Run(Options),
    Help,
}

fn parse_args(args: impl IntoIterator<Item = String>) -> Result<Command> {
    let mut options = Options {
        root: PathBuf::from("."),
        check: false,
    };
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--check" => options.check = true,
            "--root" => {
                options.root = args.next().ok_or("--root needs a directory")?.into();
            }
            "-h" | "--help" => return Ok(Command::Help),
            other => return Err(format!("unknown argument \"{other}\"")),
        }
    }
    Ok(Command::Run(options))
}

/// Computes every generated file from the sources under `root`.
fn generate(root: &Path) -> Result<Vec<Output>> {
    let files = source::load_dir(&root.join(SCHEMA_DIR))?;
    let bundle = bundle::bundle(&files)?;
    let (core, mooncake) = homes::split(&bundle)?;
    let wire_types = rust::generate(&core)?;
    let mooncake_types = rust::generate_with(&mooncake, &rust::replacements_in(&mooncake))?;
    let mooncake_fields = writers::field_lists(
        homes::MOONCAKE_FIELDS_MODULE,
        "The member names and field lists of Mooncake's documents (their types are the \
         Mooncake crate's), to name a Mooncake document given to the wrong command.",
        &mooncake_types,
    )?;
    let mut outputs = vec![
        Output {
            path: writers::PATH.to_owned(),
            contents: writers::generate(&wire_types, &core, Writers::Canonical, &mooncake_fields)?,
        },
        Output {
            path: GENERATED_RS.to_owned(),
            contents: wire_types,
        },
        Output {
            path: homes::MOONCAKE_WRITERS.to_owned(),
            contents: writers::generate(&mooncake_types, &mooncake, Writers::FieldsOnly, "")?,
        },
        Output {
            path: homes::MOONCAKE_TYPES.to_owned(),
            contents: mooncake_types,
        },
    ];
    let codes = codes::read(root)?;
    let published = codes::with_code_enum(&files, &codes);
    for (name, contents) in dist::documents(&published, &bundle::bundle(&published)?)? {
        outputs.push(Output {
            path: format!("{DIST_DIR}/{name}"),
            contents,
        });
    }
    outputs.push(Output {
        path: codes::RUST.to_owned(),
        contents: codes::rust(&codes),
    });
    outputs.push(Output {
        path: codes::PYTHON.to_owned(),
        contents: codes::python(&codes),
    });
    let code_table = c_codes::table(&codes);
    outputs.push(Output {
        path: c_header::HEADER.to_owned(),
        contents: c_header::generate(root, &code_table)?,
    });
    outputs.push(Output {
        path: c_codes::TABLE.to_owned(),
        contents: code_table,
    });
    Ok(outputs)
}

fn run(options: &Options) -> Result<ExitCode> {
    let outputs = generate(&options.root)?;
    let drift = output::drift(&options.root, &outputs, DIST_DIR)?;
    if options.check {
        if drift.is_empty() {
            println!("generated files are up to date ({} files)", outputs.len());
            return Ok(ExitCode::SUCCESS);
        }
        for item in &drift {
            eprintln!("{}", item.describe());
        }
        eprintln!(
            "{} generated file(s) out of date; run `cargo run -p weight-manifest-codegen`",
            drift.len()
        );
        return Ok(ExitCode::FAILURE);
    }
    output::apply(&options.root, &outputs, &drift)?;
    for item in &drift {
        println!("{}", item.describe());
    }
    println!(
        "{} of {} generated files updated",
        drift.len(),
        outputs.len()
    );
    Ok(ExitCode::SUCCESS)
}

fn main() -> ExitCode {
    match parse_args(std::env::args().skip(1)) {
        Ok(Command::Help) => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        Ok(Command::Run(options)) => run(&options).unwrap_or_else(|e| {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }),
        Err(e) => {
            eprintln!("error: {e}\n\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn parses_arguments() {
        assert_eq!(
            parse_args(args(&["--check", "--root", "/tmp/x"])),
            Ok(Command::Run(Options {
                root: "/tmp/x".into(),
                check: true
            }))
        );
        assert_eq!(parse_args(args(&["--help"])), Ok(Command::Help));
        assert!(parse_args(args(&["--root"])).is_err());
        assert!(parse_args(args(&["--frobnicate"])).is_err());
    }

    /// The checked-in outputs match the sources (the same check as `--check`).
    #[test]
    fn checked_in_outputs_are_current() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let outputs = generate(&root).unwrap();
        let drift = output::drift(&root, &outputs, DIST_DIR).unwrap();
        let described: Vec<String> = drift.iter().map(output::Drift::describe).collect();
        assert!(
            drift.is_empty(),
            "run `cargo run -p weight-manifest-codegen`: {described:?}"
        );
    }
}
