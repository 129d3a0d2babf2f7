//! Reading one document and rendering the outcome, as the validating commands do: read
//! the input (with progress), run the check, print the text or JSON report or the
//! rejection.

use std::process::ExitCode;

use weight_manifest::{Error, Limits};

use crate::input::read_input;
use crate::options::{Format, Input};
use crate::output::{emit, leave_to_exit};
use crate::progress::Progress;
use crate::render::{json_success, rejection};

/// A command's result: its exit code, or a usage or I/O error (exit 2).
pub(crate) type Outcome = Result<ExitCode, String>;

/// How a document is read: `--address-semantics` as given, and the progress of reading
/// it under its label.
pub(crate) type Reading<'a> = (Option<&'a String>, &'a Progress, &'a str);

/// Reads `input`, runs `check` with `--address-semantics` as given, and renders the
/// outcome.
pub(crate) fn validate<T>(
    input: &Input,
    limits: &Limits,
    reading: Reading<'_>,
    check: impl FnOnce(&[u8], Option<&String>) -> Result<T, Error>,
    as_json: impl FnOnce(&T) -> serde_json::Value,
    as_text: impl FnOnce(&T) -> String,
) -> Outcome {
    Ok(match checked(input, limits, reading, check)? {
        Err(e) => rejection(&e, input.format.format),
        Ok(checked) => {
            if input.format.format == Format::Json {
                json_success(as_json(&checked));
            } else {
                println!("{}", as_text(&checked));
            }
            leave_to_exit(checked);
            ExitCode::SUCCESS
        }
    })
}

/// Reads `input` and runs `check` on it with `--address-semantics` as given.
pub(crate) fn checked<T>(
    input: &Input,
    limits: &Limits,
    (address_semantics, progress, label): Reading<'_>,
    check: impl FnOnce(&[u8], Option<&String>) -> Result<T, Error>,
) -> Result<Result<T, Error>, String> {
    let text = read_input(&input.file, limits.max_document_bytes, progress, label)?;
    Ok(progress.reading(label, text.len(), || check(&text, address_semantics)))
}

/// Writes `text` to `path`, or to standard output.
pub(crate) fn write_out(path: Option<&std::path::Path>, text: &str) -> Outcome {
    emit(path, text.as_bytes()).map_err(|e| format!("cannot write output: {e}"))?;
    Ok(ExitCode::SUCCESS)
}
