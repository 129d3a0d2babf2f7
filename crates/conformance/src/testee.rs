//! The testee side of the protocol: one request per line on standard input, one response
//! per line on standard output, in order; never exits on a bad request.

use std::io::{self, BufRead, Write};

use serde_json::{json, Value as Json};

use crate::ops::{self, Op, OpInput};

/// Answers one request line.
pub fn respond(line: &str) -> Json {
    let request: Json = match serde_json::from_str(line) {
        Ok(request) => request,
        Err(e) => return bad_request(&Json::Null, &format!("request is not JSON: {e}")),
    };
    let id = request.get("id").cloned().unwrap_or(Json::Null);
    let Some(op) = request.get("op") else {
        return bad_request(&id, "request has no op");
    };
    let Ok(op) = serde_json::from_value::<Op>(op.clone()) else {
        return json!({ "id": id, "skipped": true });
    };
    let input = request.get("input").cloned().unwrap_or_else(|| json!({}));
    let input: OpInput = match serde_json::from_value(input) {
        Ok(input) => input,
        Err(e) => return bad_request(&id, &format!("request input is malformed: {e}")),
    };
    match ops::run(op, &input, &weight_manifest::Limits::default()) {
        Err(e) => bad_request(&id, &e.0),
        Ok(Ok(result)) => json!({ "id": id, "ok": true, "result": result.to_json_value() }),
        Ok(Err(error)) => {
            let mut body = json!({ "code": error.code().as_str(), "message": error.message() });
            if let Some(path) = error.path() {
                body["path"] = Json::String(path.to_owned());
            }
            json!({ "id": id, "ok": false, "error": body })
        }
    }
}

/// A request the testee cannot run: answered as a rejection with code `bad_request`,
/// which no fixture expects, so the runner reports the case.
fn bad_request(id: &Json, message: &str) -> Json {
    json!({ "id": id, "ok": false, "error": { "code": "bad_request", "message": message } })
}

/// Serves requests until end of input.
pub fn serve(input: impl BufRead, mut output: impl Write) -> io::Result<()> {
    for line in input.lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let response = respond(&line);
        serde_json::to_writer(&mut output, &response)?;
        output.write_all(b"\n")?;
        output.flush()?;
    }
    Ok(())
}
