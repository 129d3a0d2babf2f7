//! Rendering results and rejections for people (`text`) or programs (`json`).

use std::path::Path;
use std::process::ExitCode;

use serde_json::{json, Value as Json};
use weight_manifest::{Detail, DocumentKind, Error};

use super::args::Format;
use super::output::{emit, leave_to_exit};

/// Prints a rejection and returns exit code 1: `error[code]: message at /pointer` on
/// standard error (`invalid_json`: `... at line 3 column 17 (byte 52)`), then for a
/// `fields_mismatch` a second line with the missing and unexpected keys and the document
/// kind they belong to instead; or
/// `{"ok":false,"error":{...}}` on standard output, whose error object has a `location`
/// member (`{"line":3,"column":17,"offset":52}`) for the errors that have one, and a
/// `detail` member (`{"missing":[...],"unexpected":[...],"looks_like":{...}}`) for a
/// `fields_mismatch`.
pub(crate) fn rejection(error: &Error, format: Format) -> ExitCode {
    match format {
        Format::Text => {
            eprintln!("{error}");
            if let Some(line) = detail_line(error) {
                eprintln!("  {line}");
            }
        }
        Format::Json => {
            let mut body = json!({ "code": error.code().as_str(), "message": error.message() });
            if let Some(path) = error.path() {
                body["path"] = Json::String(path.to_owned());
            }
            if let Some(at) = error.json_location() {
                body["location"] =
                    json!({ "line": at.line, "column": at.column, "offset": at.offset });
            }
            if let Some(detail) = detail_json(error) {
                body["detail"] = detail;
            }
            println!("{}", json!({ "ok": false, "error": body }));
        }
    }
    ExitCode::from(1)
}

/// The missing keys, the unexpected keys and the other kind of a `fields_mismatch`.
fn key_difference(error: &Error) -> Option<(&[String], &[String], Option<DocumentKind>)> {
    match error.detail()? {
        Detail::FieldsMismatch {
            missing,
            unexpected,
            looks_like,
        } => Some((missing, unexpected, *looks_like)),
        _ => None,
    }
}

/// The numbers behind a rejection as a second text line, for the details that have them.
fn detail_line(error: &Error) -> Option<String> {
    let (missing, unexpected, looks_like) = key_difference(error)?;
    let mut parts = Vec::new();
    if !missing.is_empty() {
        parts.push(format!("missing: {}", missing.join(", ")));
    }
    if !unexpected.is_empty() {
        parts.push(format!("unexpected: {}", unexpected.join(", ")));
    }
    if let Some(kind) = looks_like {
        parts.push(format!(
            "these are the keys of a {}: read it with `weight-manifest {}`",
            kind.name, kind.command
        ));
    }
    Some(parts.join("; "))
}

/// The detail of a rejection as a JSON object, for the details that have numbers.
fn detail_json(error: &Error) -> Option<Json> {
    let (missing, unexpected, looks_like) = key_difference(error)?;
    let mut detail = json!({ "missing": missing, "unexpected": unexpected });
    if let Some(kind) = looks_like {
        detail["looks_like"] = json!({
            "kind": kind.name,
            "command": format!("weight-manifest {}", kind.command),
        });
    }
    Some(detail)
}

/// Prints `{"ok":true, ...fields}` on standard output.
pub(crate) fn json_success(fields: Json) {
    let mut object = json!({ "ok": true });
    if let (Some(target), Json::Object(extra)) = (object.as_object_mut(), fields) {
        target.extend(extra);
    }
    println!("{object}");
}

/// Writes a derived document (a plan, a bound plan) to `output` (atomically) or standard
/// output. With `--format json` standard output gets one object instead: `fields`, and the
/// document under `member` unless it went to a file.
pub(crate) fn document(
    format: Format,
    output: Option<&Path>,
    mut fields: Json,
    member: &str,
    text: String,
) -> Result<(), String> {
    if format == Format::Json {
        if let Some(path) = output {
            emit(Some(path), text.as_bytes())
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            leave_to_exit(text);
        } else {
            fields[member] = Json::String(text);
        }
        json_success(fields);
    } else {
        emit(output, text.as_bytes()).map_err(|e| format!("cannot write output: {e}"))?;
        leave_to_exit(text);
    }
    Ok(())
}
