//! Rendering results and rejections for people (`text`) or programs (`json`).

use std::path::Path;
use std::process::ExitCode;

use serde_json::{json, Value as Json};
use weight_manifest::{Detail, Error};

use crate::options::Format;
use crate::output::{emit, leave_to_exit};

/// Prints a rejection and returns exit code 1: `error[code]: message at /pointer` on
/// standard error (`invalid_json`: `... at line 3 column 17 (byte 52)`), then, for a
/// rejection with numbers behind it, a second line with them (`expected 32, got 31`; the
/// missing and unexpected keys of a `fields_mismatch` and the document kind they belong
/// to instead); or `{"ok":false,"error":{...}}` on standard output, whose error object
/// has a `location` member (`{"line":3,"column":17,"offset":52}`) for the errors that have
/// one, and a `detail` member (the core's `Detail::to_json`) for those with numbers.
pub(crate) fn rejection(error: &Error, format: Format) -> ExitCode {
    let detail = error
        .detail()
        .filter(|d| !matches!(d, Detail::JsonLocation(_)));
    match format {
        Format::Text => {
            eprintln!("{error}");
            if let Some(detail) = detail {
                eprintln!("  {}", detail.summary());
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
            let mut text = body.to_string();
            if let Some(detail) = detail {
                // Spliced as written: its numbers may exceed what a JSON value here holds.
                text.pop();
                text.push_str(",\"detail\":");
                text.push_str(&detail.to_json());
                text.push('}');
            }
            println!("{{\"ok\":false,\"error\":{text}}}");
        }
    }
    ExitCode::from(1)
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
