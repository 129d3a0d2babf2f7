//! Loading and checking the schema sources in `schema/*.schema.json`.

use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::error::Result;
use crate::json::{self, Ordered};

/// The `$schema` every source must declare.
pub const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// Suffix of a schema source's file name.
pub const SUFFIX: &str = ".schema.json";

/// One parsed and checked schema source.
#[derive(Debug, Clone)]
pub struct SchemaFile {
    /// File name, for example `placement.schema.json`; also the name other
    /// files use in a cross-file `$ref`.
    pub name: String,
    /// The `$id`; it ends with `/` + `name`.
    pub id: String,
    /// The whole document.
    pub schema: Value,
}

/// Loads every `*.schema.json` directly in `dir`, sorted by file name.
pub fn load_dir(dir: &Path) -> Result<Vec<SchemaFile>> {
    let entries = fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(SUFFIX) && entry.path().is_file() {
            names.push(name);
        }
    }
    names.sort();
    if names.is_empty() {
        return Err(format!("no *{SUFFIX} files in {}", dir.display()));
    }
    names
        .iter()
        .map(|name| {
            let path = dir.join(name);
            let text = fs::read_to_string(&path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            parse(name, &text)
        })
        .collect()
}

/// Parses one source and checks it: a JSON object without duplicate keys,
/// `$schema` draft 2020-12, `$id` ending with the file name, and every
/// `properties` listed in ascending byte order of the keys.
pub fn parse(name: &str, text: &str) -> Result<SchemaFile> {
    let ordered: Ordered =
        serde_json::from_str(text).map_err(|e| format!("{name}: invalid JSON: {e}"))?;
    let schema: Value =
        serde_json::from_str(text).map_err(|e| format!("{name}: invalid JSON: {e}"))?;
    let Value::Object(root) = &schema else {
        return Err(format!("{name}: the top level must be an object"));
    };
    match root.get("$schema") {
        Some(Value::String(draft)) if draft == DRAFT_2020_12 => {}
        _ => return Err(format!("{name}: \"$schema\" must be \"{DRAFT_2020_12}\"")),
    }
    let id = match root.get("$id") {
        Some(Value::String(id)) if id.ends_with(&format!("/{name}")) => id.clone(),
        _ => {
            return Err(format!(
                "{name}: \"$id\" must be a URI ending with \"/{name}\""
            ))
        }
    };
    match root.get("$defs") {
        None | Some(Value::Object(_)) => {}
        Some(_) => return Err(format!("{name}: \"$defs\" must be an object")),
    }
    check_sorted_properties(name, &schema, &ordered)?;
    Ok(SchemaFile {
        name: name.to_owned(),
        id,
        schema,
    })
}

/// Every object schema must list its `properties` in ascending byte order of
/// the keys: the generated structs serialize fields in declaration order and
/// the canonical encoding requires ascending keys.
fn check_sorted_properties(name: &str, schema: &Value, ordered: &Ordered) -> Result<()> {
    for path in json::schema_paths(schema) {
        let mut properties_path = path.clone();
        properties_path.push("properties".to_owned());
        let Some(Ordered::Object(members)) = ordered.get(&properties_path) else {
            continue;
        };
        for pair in members.windows(2) {
            let (before, after) = (&pair[0].0, &pair[1].0);
            if before.as_bytes() >= after.as_bytes() {
                return Err(format!(
                    "{name}: \"properties\" at {} are not sorted: \"{after}\" is listed after \"{before}\" \
                     (list properties in ascending byte order: generated structs serialize fields in \
                     declaration order and the canonical encoding requires ascending keys)",
                    json::pointer(&properties_path)
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(name: &str, body: &str) -> String {
        format!(
            r#"{{"$schema": "{DRAFT_2020_12}", "$id": "https://example.invalid/v1/{name}", {body}}}"#
        )
    }

    #[test]
    fn accepts_sorted_properties() {
        let text = doc(
            "a.schema.json",
            r#""type": "object", "properties": {"a": {}, "b": {"properties": {"x": {}, "y": {}}}}"#,
        );
        parse("a.schema.json", &text).unwrap();
    }

    #[test]
    fn rejects_unsorted_properties_with_location() {
        let text = doc(
            "a.schema.json",
            r#""$defs": {"T": {"type": "object", "properties": {"tp": {}, "dp": {}}}}"#,
        );
        let error = parse("a.schema.json", &text).unwrap_err();
        assert!(error.contains("/$defs/T/properties"), "{error}");
        assert!(error.contains("\"dp\" is listed after \"tp\""), "{error}");
    }

    #[test]
    fn rejects_bad_header() {
        let error = parse("a.schema.json", r#"{"$id": "x/a.schema.json"}"#).unwrap_err();
        assert!(error.contains("$schema"), "{error}");
        let text = doc("b.schema.json", r#""type": "object""#);
        let error = parse("a.schema.json", &text).unwrap_err();
        assert!(error.contains("$id"), "{error}");
        assert!(parse("a.schema.json", "[1]").is_err());
        assert!(parse("a.schema.json", "{").is_err());
    }

    #[test]
    fn rejects_duplicate_keys() {
        let text = doc("a.schema.json", r#""type": "object", "type": "array""#);
        assert!(parse("a.schema.json", &text)
            .unwrap_err()
            .contains("duplicate key"));
    }
}
