//! The published schemas in `schema/dist/`: one self-contained copy of each
//! source, plus one file holding every definition.

use serde_json::{Map, Value};

use crate::bundle::{self, Bundle};
use crate::error::Result;
use crate::source::{SchemaFile, DRAFT_2020_12};

/// File name of the all-definitions bundle in `schema/dist/`.
pub const BUNDLE_FILE: &str = "weight-manifest.bundle.schema.json";

/// Every file of `schema/dist/` as (file name, contents), sorted by name.
pub fn documents(files: &[SchemaFile], bundle: &Bundle) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for (name, schema) in &bundle.files {
        out.push((name.clone(), pretty(&self_contained(schema, bundle))?));
    }
    out.push((
        BUNDLE_FILE.to_owned(),
        pretty(&all_definitions(files, bundle)?)?,
    ));
    out.sort();
    Ok(out)
}

/// A source (refs already local) with every definition it reaches from other
/// files copied into its own `$defs`. Its `$id` is kept.
fn self_contained(schema: &Value, bundle: &Bundle) -> Value {
    let mut root = schema.as_object().cloned().unwrap_or_default();
    let own = match root.remove("$defs") {
        Some(Value::Object(own)) => own,
        _ => Map::new(),
    };
    let defs = bundle::closure(own, &Value::Object(root.clone()), bundle);
    if !defs.is_empty() {
        root.insert("$defs".to_owned(), Value::Object(defs));
    }
    Value::Object(root)
}

/// The bundle document: every pooled definition, including each document type
/// under its title.
fn all_definitions(files: &[SchemaFile], bundle: &Bundle) -> Result<Value> {
    let base = base_uri(files)?;
    let titles: Vec<String> = files
        .iter()
        .filter_map(|f| Some(format!("{} ({})", f.schema.get("title")?.as_str()?, f.name)))
        .collect();
    let mut root = Map::new();
    root.insert("$schema".to_owned(), DRAFT_2020_12.into());
    root.insert("$id".to_owned(), format!("{base}{BUNDLE_FILE}").into());
    root.insert(
        "description".to_owned(),
        format!(
            "Every definition of the weight-manifest schemas in one file. The document types \
             are the definitions {}.",
            titles.join(", ")
        )
        .into(),
    );
    let defs = bundle
        .defs
        .iter()
        .map(|(name, def)| (name.clone(), def.schema.clone()))
        .collect();
    root.insert("$defs".to_owned(), Value::Object(defs));
    Ok(Value::Object(root))
}

/// The `$id` prefix shared by every source (everything before the file name).
fn base_uri(files: &[SchemaFile]) -> Result<String> {
    let mut bases = files
        .iter()
        .map(|f| (f, &f.id[..f.id.len() - f.name.len()]));
    let Some((_, base)) = bases.next() else {
        return Err("no schema sources".to_owned());
    };
    if let Some((file, other)) = bases.find(|(_, other)| other != &base) {
        return Err(format!(
            "{}: \"$id\" base \"{other}\" differs from \"{base}\"; all sources must share one base URI",
            file.name
        ));
    }
    Ok(base.to_owned())
}

/// Pretty-printed with 2-space indentation and a trailing newline.
fn pretty(value: &Value) -> Result<String> {
    let mut text =
        serde_json::to_string_pretty(value).map_err(|e| format!("cannot serialize: {e}"))?;
    text.push('\n');
    Ok(text)
}
