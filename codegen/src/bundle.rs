//! Bundling: pool the `$defs` of every source into one namespace and rewrite
//! every `$ref` to the local form `#/$defs/Name`.
//!
//! typify cannot follow a `$ref` into another file and resolves a reference by
//! its last path segment, so definition names must be unique across all
//! sources. A source with a `title` defines a document type: its root schema
//! joins the pool under that title.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use crate::error::Result;
use crate::json;
use crate::source::SchemaFile;

/// Prefix of every `$ref` after bundling.
pub const LOCAL_REF_PREFIX: &str = "#/$defs/";

/// A pooled definition.
#[derive(Debug, Clone)]
pub struct Def {
    /// File name of the source that defines it.
    pub origin: String,
    /// The schema, with every `$ref` in the local form.
    pub schema: Value,
}

/// All sources, bundled.
#[derive(Debug, Clone)]
pub struct Bundle {
    /// Every definition by name: each source's `$defs`, plus each titled root.
    pub defs: BTreeMap<String, Def>,
    /// Each source with its `$ref`s rewritten to the local form (its own
    /// `$defs` included), in file-name order.
    pub files: Vec<(String, Value)>,
}

/// Bundles `files`; rejects unsupported or dangling references and name
/// collisions.
pub fn bundle(files: &[SchemaFile]) -> Result<Bundle> {
    let mut defs = BTreeMap::new();
    let mut rewritten = Vec::new();
    for file in files {
        let mut schema = file.schema.clone();
        rewrite_refs(file, files, &mut schema)?;
        if let Some(Value::Object(own)) = schema.get("$defs") {
            for (name, def) in own {
                insert(&mut defs, name, &file.name, def.clone())?;
            }
        }
        if let Some(Value::String(title)) = schema.get("title") {
            let mut root = schema.as_object().cloned().unwrap_or_default();
            for keyword in ["$schema", "$id", "$defs"] {
                root.remove(keyword);
            }
            insert(&mut defs, title, &file.name, Value::Object(root))?;
        }
        rewritten.push((file.name.clone(), schema));
    }
    Ok(Bundle {
        defs,
        files: rewritten,
    })
}

fn insert(defs: &mut BTreeMap<String, Def>, name: &str, origin: &str, schema: Value) -> Result<()> {
    if let Some(existing) = defs.get(name) {
        return Err(format!(
            "definition name \"{name}\" is defined in both {} and {origin}; $defs names and \
             document titles must be unique across schema/ (typify resolves a $ref by its last \
             path segment)",
            existing.origin
        ));
    }
    defs.insert(
        name.to_owned(),
        Def {
            origin: origin.to_owned(),
            schema,
        },
    );
    Ok(())
}

/// Rewrites every `$ref` in `schema` (a part of `file`) to `#/$defs/Name`.
/// Supported forms: `#/$defs/Name` (this file) and
/// `other.schema.json#/$defs/Name`; the target definition must exist.
pub fn rewrite_refs(file: &SchemaFile, files: &[SchemaFile], schema: &mut Value) -> Result<()> {
    for path in json::schema_paths(schema) {
        let Some(Value::Object(members)) = json::get_mut(schema, &path) else {
            continue;
        };
        let Some(reference) = members.get("$ref") else {
            continue;
        };
        let location = format!("{}: $ref at {}", file.name, json::pointer(&path));
        let Value::String(reference) = reference else {
            return Err(format!("{location} must be a string"));
        };
        let name = resolve(reference, file, files).map_err(|e| format!("{location}: {e}"))?;
        members.insert(
            "$ref".to_owned(),
            Value::String(format!("{LOCAL_REF_PREFIX}{name}")),
        );
    }
    Ok(())
}

/// The definition name a reference points at.
fn resolve(reference: &str, file: &SchemaFile, files: &[SchemaFile]) -> Result<String> {
    let unsupported = || {
        format!(
            "unsupported reference \"{reference}\": use \"#/$defs/Name\" or \
             \"other.schema.json#/$defs/Name\""
        )
    };
    let (target_name, fragment) = reference.split_once('#').ok_or_else(unsupported)?;
    let target = if target_name.is_empty() {
        file
    } else {
        files
            .iter()
            .find(|f| f.name == target_name)
            .ok_or_else(|| {
                format!("\"{reference}\" names an unknown schema file \"{target_name}\"")
            })?
    };
    let name = fragment
        .strip_prefix("/$defs/")
        .filter(|name| !name.is_empty() && !name.contains(['/', '~']))
        .ok_or_else(unsupported)?;
    if target
        .schema
        .get("$defs")
        .and_then(|d| d.get(name))
        .is_none()
    {
        return Err(format!(
            "\"{reference}\": {} has no definition \"{name}\"",
            target.name
        ));
    }
    Ok(name.to_owned())
}

/// Names of the definitions referenced (in local form) anywhere in `schema`.
pub fn referenced_names(schema: &Value) -> BTreeSet<String> {
    json::schema_paths(schema)
        .iter()
        .filter_map(|path| json::get(schema, path)?.get("$ref")?.as_str())
        .filter_map(|reference| reference.strip_prefix(LOCAL_REF_PREFIX))
        .map(str::to_owned)
        .collect()
}

/// `defs` plus every definition of `bundle` they reach, transitively.
pub fn closure(mut defs: Map<String, Value>, roots: &Value, bundle: &Bundle) -> Map<String, Value> {
    let mut pending: Vec<String> = referenced_names(roots).into_iter().collect();
    for def in defs.values() {
        pending.extend(referenced_names(def));
    }
    while let Some(name) = pending.pop() {
        if defs.contains_key(&name) {
            continue;
        }
        if let Some(def) = bundle.defs.get(&name) {
            pending.extend(referenced_names(&def.schema));
            defs.insert(name, def.schema.clone());
        }
    }
    defs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{parse, DRAFT_2020_12};

    fn file(name: &str, body: &str) -> SchemaFile {
        let text = format!(
            r#"{{"$schema": "{DRAFT_2020_12}", "$id": "https://example.invalid/v1/{name}", {body}}}"#
        );
        parse(name, &text).unwrap()
    }

    fn common() -> SchemaFile {
        file(
            "common.schema.json",
            r##""$defs": {
                "Id": {"type": "string", "minLength": 1},
                "Pair": {"type": "object", "properties": {"a": {"$ref": "#/$defs/Id"}}}
            }"##,
        )
    }

    #[test]
    fn rewrites_cross_file_and_local_refs() {
        let doc = file(
            "doc.schema.json",
            r##""title": "Doc", "type": "object",
                "properties": {
                    "id": {"oneOf": [{"$ref": "common.schema.json#/$defs/Id"}, {"type": "null"}]},
                    "pair": {"$ref": "common.schema.json#/$defs/Pair"},
                    "x": {"$ref": "#/$defs/X"}
                },
                "$defs": {"X": {"type": "integer"}}"##,
        );
        let bundle = bundle(&[common(), doc]).unwrap();
        let names: Vec<&str> = bundle.defs.keys().map(String::as_str).collect();
        assert_eq!(names, ["Doc", "Id", "Pair", "X"]);
        let root = &bundle.defs["Doc"];
        assert_eq!(root.origin, "doc.schema.json");
        assert!(root.schema.get("$id").is_none() && root.schema.get("$defs").is_none());
        assert_eq!(
            root.schema["properties"]["id"]["oneOf"][0]["$ref"],
            "#/$defs/Id"
        );
        assert_eq!(root.schema["properties"]["pair"]["$ref"], "#/$defs/Pair");
        assert_eq!(root.schema["properties"]["x"]["$ref"], "#/$defs/X");
        assert_eq!(
            bundle.defs["Pair"].schema["properties"]["a"]["$ref"],
            "#/$defs/Id"
        );
        let names: Vec<String> = referenced_names(&root.schema).into_iter().collect();
        assert_eq!(names, ["Id", "Pair", "X"]);
    }

    #[test]
    fn closure_pulls_in_transitive_definitions() {
        let doc = file(
            "doc.schema.json",
            r#""title": "Doc", "properties": {"pair": {"$ref": "common.schema.json#/$defs/Pair"}}"#,
        );
        let bundle = bundle(&[common(), doc]).unwrap();
        let (_, root) = &bundle.files[1];
        let defs = closure(Map::new(), root, &bundle);
        let names: Vec<&str> = defs.keys().map(String::as_str).collect();
        assert_eq!(names, ["Id", "Pair"]);
    }

    #[test]
    fn rejects_name_collisions() {
        let other = file(
            "other.schema.json",
            r#""$defs": {"Id": {"type": "string"}}"#,
        );
        let error = bundle(&[common(), other]).unwrap_err();
        assert!(
            error.contains("\"Id\" is defined in both common.schema.json and other.schema.json"),
            "{error}"
        );
        let titled = file("titled.schema.json", r#""title": "Pair", "type": "object""#);
        let error = bundle(&[common(), titled]).unwrap_err();
        assert!(error.contains("\"Pair\""), "{error}");
    }

    #[test]
    fn rejects_bad_references() {
        for (reference, expected) in [
            (
                "common.schema.json#/$defs/Nope",
                "has no definition \"Nope\"",
            ),
            ("missing.schema.json#/$defs/Id", "unknown schema file"),
            ("#/definitions/Id", "unsupported reference"),
            ("common.schema.json", "unsupported reference"),
            ("#/$defs/Id", "has no definition \"Id\""),
        ] {
            let doc = file(
                "doc.schema.json",
                &format!(r#""properties": {{"a": {{"items": {{"$ref": "{reference}"}}}}}}"#),
            );
            let error = bundle(&[common(), doc]).unwrap_err();
            assert!(
                error.contains("doc.schema.json: $ref at /properties/a/items"),
                "{error}"
            );
            assert!(error.contains(expected), "{reference}: {error}");
        }
    }
}
