//! Which crate each definition's wire types are generated into: Mooncake's formats
//! (`schema/mooncake-*.schema.json`) into the Mooncake crate, everything else into the core,
//! so the core's public API holds no Mooncake type. The core keeps the names of Mooncake's
//! members and field lists (plain strings), to name a Mooncake document given to the wrong
//! command.

use std::collections::BTreeMap;

use crate::bundle::{self, Bundle, Def};
use crate::error::Result;
use crate::rust::REPLACEMENTS;

/// The file-name prefix of the Mooncake crate's schema sources.
const MOONCAKE_ORIGIN_PREFIX: &str = "mooncake-";
/// The Mooncake crate's generated wire types, relative to the root.
pub const MOONCAKE_TYPES: &str = "crates/mooncake/src/wire/generated.rs";
/// The Mooncake crate's generated keys and field lists, relative to the root.
pub const MOONCAKE_WRITERS: &str = "crates/mooncake/src/wire/writers.rs";
/// The module of the core's writers that names Mooncake's members and field lists.
pub const MOONCAKE_FIELDS_MODULE: &str = "mooncake_fields";

/// `bundle` split into the core's definitions and the Mooncake crate's (with the core's
/// replaced definitions they refer to, which become plain Rust types). A core definition
/// that refers to a Mooncake one, or a Mooncake definition that refers to a core type, is
/// an error: the core cannot name the Mooncake crate's types, nor the Mooncake crate
/// generate a second copy of the core's.
pub fn split(bundle: &Bundle) -> Result<(Bundle, Bundle)> {
    let (mooncake, core): (BTreeMap<String, Def>, BTreeMap<String, Def>) = bundle
        .defs
        .clone()
        .into_iter()
        .partition(|(_, def)| def.origin.starts_with(MOONCAKE_ORIGIN_PREFIX));
    for (name, def) in &core {
        if let Some(other) = bundle::referenced_names(&def.schema)
            .into_iter()
            .find(|r| mooncake.contains_key(r))
        {
            return Err(format!(
                "{}: {name} refers to the Mooncake definition {other}, whose type the core does not have",
                def.origin
            ));
        }
    }
    let mut borrowed = BTreeMap::new();
    for (name, def) in &mooncake {
        for other in bundle::referenced_names(&def.schema) {
            if mooncake.contains_key(&other) {
                continue;
            }
            if !REPLACEMENTS.iter().any(|(replaced, _)| *replaced == other) {
                return Err(format!(
                    "{}: {name} refers to {other}, a type of the core: a Mooncake definition may \
                     refer only to its own and to the core's plain ones (REPLACEMENTS)",
                    def.origin
                ));
            }
            borrowed.insert(other.clone(), bundle.defs[&other].clone());
        }
    }
    let mut mooncake = mooncake;
    mooncake.extend(borrowed);
    Ok((
        Bundle {
            defs: core,
            files: bundle.files.clone(),
        },
        Bundle {
            defs: mooncake,
            files: Vec::new(),
        },
    ))
}
