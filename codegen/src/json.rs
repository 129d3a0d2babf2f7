//! JSON helpers: object keys in the order they were written, paths into a
//! [`Value`], and the walk over every subschema of a JSON Schema.

use std::fmt;

use serde::de::{Deserialize, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// A path into a JSON value: object keys and array indices, unescaped.
pub type Path = Vec<String>;

/// Renders a path as a JSON pointer (RFC 6901); the empty path is `""`.
pub fn pointer(path: &[String]) -> String {
    let mut out = String::new();
    for segment in path {
        out.push('/');
        out.push_str(&segment.replace('~', "~0").replace('/', "~1"));
    }
    out
}

/// The shape of a JSON text with object keys kept in the order they were
/// written. `serde_json::Value` sorts keys, so this is how the generator sees
/// the order in which `properties` are listed. Parsing rejects duplicate keys.
#[derive(Debug)]
pub enum Ordered {
    /// A string, number, boolean or null.
    Scalar,
    /// An array.
    Array(Vec<Ordered>),
    /// An object, members in written order.
    Object(Vec<(String, Ordered)>),
}

impl Ordered {
    /// The value at `path`, if there is one.
    pub fn get(&self, path: &[String]) -> Option<&Ordered> {
        path.iter().try_fold(self, |node, segment| match node {
            Ordered::Object(members) => members
                .iter()
                .find(|(key, _)| key == segment)
                .map(|(_, value)| value),
            Ordered::Array(items) => segment.parse::<usize>().ok().and_then(|i| items.get(i)),
            Ordered::Scalar => None,
        })
    }
}

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(OrderedVisitor)
    }
}

/// Builds an [`Ordered`] from any JSON value.
struct OrderedVisitor;

impl<'de> Visitor<'de> for OrderedVisitor {
    type Value = Ordered;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Ordered, E> {
        Ok(Ordered::Scalar)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Ordered, E> {
        Ok(Ordered::Scalar)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Ordered, E> {
        Ok(Ordered::Scalar)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Ordered, E> {
        Ok(Ordered::Scalar)
    }

    fn visit_str<E>(self, _: &str) -> Result<Ordered, E> {
        Ok(Ordered::Scalar)
    }

    fn visit_unit<E>(self) -> Result<Ordered, E> {
        Ok(Ordered::Scalar)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Ordered, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Ordered::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered, A::Error> {
        let mut members: Vec<(String, Ordered)> = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            if members.iter().any(|(seen, _)| *seen == key) {
                return Err(A::Error::custom(format!("duplicate key {key:?}")));
            }
            let value = map.next_value()?;
            members.push((key, value));
        }
        Ok(Ordered::Object(members))
    }
}

/// The value at `path`, if there is one.
pub fn get<'a>(value: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(value, |node, segment| match node {
        Value::Object(members) => members.get(segment),
        Value::Array(items) => segment.parse::<usize>().ok().and_then(|i| items.get(i)),
        _ => None,
    })
}

/// The value at `path`, mutably, if there is one.
pub fn get_mut<'a>(value: &'a mut Value, path: &[String]) -> Option<&'a mut Value> {
    path.iter().try_fold(value, |node, segment| match node {
        Value::Object(members) => members.get_mut(segment),
        Value::Array(items) => segment
            .parse::<usize>()
            .ok()
            .and_then(move |i| items.get_mut(i)),
        _ => None,
    })
}

/// Keywords whose value is one subschema.
const SCHEMA_KEYWORDS: &[&str] = &[
    "additionalProperties",
    "contains",
    "contentSchema",
    "else",
    "if",
    "items",
    "not",
    "propertyNames",
    "then",
    "unevaluatedItems",
    "unevaluatedProperties",
];

/// Keywords whose value is an object of subschemas.
const SCHEMA_MAP_KEYWORDS: &[&str] = &[
    "$defs",
    "dependentSchemas",
    "patternProperties",
    "properties",
];

/// Keywords whose value is an array of subschemas.
const SCHEMA_ARRAY_KEYWORDS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];

/// Paths of every object schema in `root` (draft 2020-12 applicators), the
/// root first, then depth first. Boolean schemas are skipped. Because a
/// parent comes before its children, walking the result in reverse visits
/// children first.
pub fn schema_paths(root: &Value) -> Vec<Path> {
    let mut paths = Vec::new();
    collect_schema_paths(root, &mut Vec::new(), &mut paths);
    paths
}

fn collect_schema_paths(schema: &Value, path: &mut Path, out: &mut Vec<Path>) {
    let Value::Object(members) = schema else {
        return;
    };
    out.push(path.clone());
    for (keyword, value) in members {
        let children: Vec<(String, &Value)> = if SCHEMA_KEYWORDS.contains(&keyword.as_str()) {
            vec![(String::new(), value)]
        } else if SCHEMA_MAP_KEYWORDS.contains(&keyword.as_str()) {
            value
                .as_object()
                .into_iter()
                .flatten()
                .map(|(name, sub)| (name.clone(), sub))
                .collect()
        } else if SCHEMA_ARRAY_KEYWORDS.contains(&keyword.as_str()) {
            value
                .as_array()
                .into_iter()
                .flatten()
                .enumerate()
                .map(|(i, sub)| (i.to_string(), sub))
                .collect()
        } else {
            continue;
        };
        let single = SCHEMA_KEYWORDS.contains(&keyword.as_str());
        for (segment, sub) in children {
            path.push(keyword.clone());
            if !single {
                path.push(segment);
            }
            collect_schema_paths(sub, path, out);
            path.pop();
            if !single {
                path.pop();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordered_keeps_key_order_and_rejects_duplicates() {
        let ordered: Ordered =
            serde_json::from_str(r#"{"b": 1, "a": {"z": [], "y": null}}"#).unwrap();
        let Some(Ordered::Object(members)) = ordered.get(&["a".to_owned()]) else {
            panic!("expected an object");
        };
        let keys: Vec<&str> = members.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["z", "y"]);
        assert!(serde_json::from_str::<Ordered>(r#"{"a": 1, "a": 2}"#).is_err());
    }

    #[test]
    fn schema_paths_visit_applicators_only() {
        let schema = serde_json::json!({
            "properties": { "a": { "items": { "type": "string" } } },
            "oneOf": [true, { "type": "null" }],
            "enum": [{ "properties": {} }]
        });
        let pointers: Vec<String> = schema_paths(&schema).iter().map(|p| pointer(p)).collect();
        assert_eq!(
            pointers,
            ["", "/oneOf/1", "/properties/a", "/properties/a/items"]
        );
    }
}
