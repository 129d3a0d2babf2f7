//! Mooncake's alias groups (`_normalize_aliases` and the group's rules): non-empty names,
//! no duplicate, at least two, the fragment's own tensor among them. The one check of the
//! tree readers (placement and Store manifest) and the one-pass reader.

use weight_manifest::error::{Code, Error, Result};
use weight_manifest::path::Path;
use weight_manifest::value::Value;

/// An alias list read and held to its own rules (non-empty strings, then
/// `_normalize_aliases` and the group's size and membership): returns it sorted. `what`
/// names an element in the message ("alias", "stored fragment alias").
pub(crate) fn read_aliases(
    items: &[Value<'_>],
    what: &str,
    tensor_id: &str,
    path: &Path<'_>,
) -> Result<Vec<String>> {
    let mut aliases = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        match item {
            Value::Str(s) if !s.is_empty() => aliases.push(s.to_string()),
            _ => {
                return Err(Error::at(
                    Code::AliasesInvalid,
                    format!("{what} must be a non-empty string"),
                    &path.index(i),
                ))
            }
        }
    }
    normalize_aliases(aliases, tensor_id, path)
}

/// An alias list of non-empty names held to `_normalize_aliases` and the group's rules
/// (no duplicate, at least two names, the own tensor among them): returns it sorted. The
/// one check of both placement readers (the tree's and the one-pass).
pub(crate) fn normalize_aliases(
    mut aliases: Vec<String>,
    tensor_id: &str,
    path: &Path<'_>,
) -> Result<Vec<String>> {
    aliases.sort();
    if aliases.windows(2).any(|w| w[0] == w[1]) {
        return Err(Error::at(
            Code::AliasesDuplicate,
            "aliases must not contain duplicates",
            path,
        ));
    }
    if !aliases.is_empty() {
        if aliases.len() < 2 {
            return Err(Error::at(
                Code::MooncakeAliasGroupInvalid,
                "alias group must contain at least two tensor IDs",
                path,
            ));
        }
        if aliases
            .binary_search_by(|a| a.as_str().cmp(tensor_id))
            .is_err()
        {
            return Err(Error::at(
                Code::MooncakeAliasGroupInvalid,
                "alias group must contain the fragment tensor_id",
                path,
            ));
        }
    }
    Ok(aliases)
}
