//! Member names, field lists and canonical writers of the wire types, derived from the
//! types typify generated (so from the schemas) and written to `src/wire/writers.rs`.
//!
//! For every generated struct: `FIELDS`, its member names in code point order, and
//! `REQUIRED`, those the schema requires. For every
//! struct whose members are always written (no `skip_serializing_if`), or left out only
//! when `None` (an optional member, never the first), and whose member types are
//! encodable: a `Canonical` impl and a `write_<name>` function taking each member
//! borrowed (an optional one as an `Option`), which writes the canonical encoding
//! (contract §5) with the keys as literals in sorted order, an optional member only when
//! it is `Some`. For every definition that names an identity (the schema
//! keyword [`IDENTITY_KEYWORD`]): the id payload writer, the id function and, when the
//! payload and the wire text share a prefix, one function hashing both over that prefix
//! once. Every member name becomes a constant of `key`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde_json::Value;
use syn::{Fields, GenericArgument, Item, LitStr, PathArguments, Type};

use crate::bundle::Bundle;
use crate::error::Result;
use crate::rust::HEADER;

/// The generated module, relative to the root.
pub const PATH: &str = "src/wire/writers.rs";

/// The schema keyword that names a definition's identity: `{"member": "placement_id",
/// "prefix": "sha256:", "tag": "weight-placement", "digest": true}` (tag and digest
/// optional): the id is `prefix` + SHA-256 of the canonical encoding without `member` and,
/// with a tag, with `"schema": tag` added. With `digest`, the wire text with the id has a
/// SHA-256 of its own, and one function computes both.
pub const IDENTITY_KEYWORD: &str = "x-identity";

/// One member of a generated struct.
struct Member {
    /// The JSON name (the Rust field name: the schemas use snake_case names).
    name: String,
    /// Whether serde may leave it out (`skip_serializing_if`, `flatten`, a rename).
    optional_on_wire: bool,
    /// Whether serde leaves it out exactly when it is `None` (an optional member).
    omit_none: bool,
    /// The Rust type.
    ty: Type,
}

/// The identity a definition names.
struct Identity {
    member: String,
    prefix: String,
    tag: Option<String>,
    /// Whether the wire text with the id has a digest of its own (`"digest": true`).
    digest: bool,
}

/// Which writers a crate's module holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writers {
    /// Keys, field lists, canonical writers and identities, on the core's `crate::canonical`.
    Canonical,
    /// Keys and field lists only: a crate built on the core, which writes its own texts.
    FieldsOnly,
}

/// A wire module's structs (members in declaration order) and string enums (variant and
/// spelling).
type Parsed = (
    BTreeMap<String, Vec<Member>>,
    BTreeMap<String, Vec<(String, String)>>,
);

/// Generates a wire module's writers (the core's `src/wire/writers.rs`) from typify's output
/// and the bundled schemas; `appendix` (Rust items) is added at the end.
pub fn generate(
    generated_rs: &str,
    bundle: &Bundle,
    writers: Writers,
    appendix: &str,
) -> Result<String> {
    let (structs, string_enums) = parse_types(generated_rs)?;
    let canonical = match writers {
        Writers::Canonical => encodable_structs(&structs, &string_enums),
        Writers::FieldsOnly => BTreeSet::new(),
    };
    let identities = identities(bundle, &canonical)?;
    // The id writers take every member as given; an optional one has no place there.
    if let Some(name) = identities
        .keys()
        .find(|name| structs[name.as_str()].iter().any(|m| m.omit_none))
    {
        return Err(format!(
            "{name} names an identity but has an optional member"
        ));
    }

    let mut out = String::from(match writers {
        Writers::Canonical => {
            "//! Member names, field lists and canonical writers of the wire types.\n"
        }
        Writers::FieldsOnly => "//! Member names and field lists of the wire types.\n",
    });
    out.push_str("use super::generated::*;\n");
    if writers == Writers::Canonical {
        out.push_str("use crate::canonical::{Canonical, Sink};\n");
    }
    write_keys(&mut out, &structs);
    for (name, members) in &structs {
        // The required list is read from the definition: an object typify named itself (an
        // inline object schema) has none to read it from.
        let Some(def) = bundle.defs.get(name) else {
            return Err(format!(
                "{name}: an inline object schema; give it a $defs entry (and a $ref) so that its \
                 required members are known"
            ));
        };
        let required = def
            .schema
            .get("required")
            .and_then(Value::as_array)
            .map(|list| {
                list.iter()
                    .filter_map(Value::as_str)
                    .collect::<BTreeSet<_>>()
            })
            .unwrap_or_default();
        write_fields(&mut out, name, members, &required);
    }
    if writers == Writers::Canonical {
        for (name, variants) in &string_enums {
            write_enum(&mut out, name, variants);
        }
    }
    for name in &canonical {
        write_struct(&mut out, name, &structs[name]);
    }
    for (name, identity) in &identities {
        write_identity(&mut out, name, &structs[name], identity);
    }
    out.push_str(appendix);
    let file: syn::File = syn::parse_str(&out)
        .map_err(|e| format!("the generated member writers do not parse: {e}"))?;
    Ok(format!("{HEADER}\n\n{}", prettyplease::unparse(&file)))
}

/// A `pub(crate) mod {module}` holding the member names and field lists of the types of
/// `generated_rs` (another crate's wire types) as plain strings: names without the types.
pub fn field_lists(module: &str, doc: &str, generated_rs: &str) -> Result<String> {
    let (structs, _) = parse_types(generated_rs)?;
    let mut out = format!("/// {doc}\npub(crate) mod {module} {{\n");
    write_keys(&mut out, &structs);
    for (name, members) in &structs {
        let names: Vec<String> = members.iter().map(|m| json_string(&m.name)).collect();
        writeln!(
            out,
            "/// The members of a `{name}`, in code point order.\n\
             pub(crate) const {}: &[&str] = &[{}];",
            snake(name).to_ascii_uppercase(),
            names.join(", ")
        )
        .ok();
    }
    out.push_str("}\n");
    Ok(out)
}

/// The structs and string enums of typify's output, each struct's members checked to be in
/// code point order.
fn parse_types(generated_rs: &str) -> Result<Parsed> {
    let file: syn::File = syn::parse_str(generated_rs)
        .map_err(|e| format!("the generated wire types do not parse: {e}"))?;
    let mut structs: BTreeMap<String, Vec<Member>> = BTreeMap::new();
    let mut string_enums: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for item in &file.items {
        match item {
            Item::Struct(item) => {
                if let Fields::Named(fields) = &item.fields {
                    let members = fields
                        .named
                        .iter()
                        .filter_map(|field| {
                            Some(Member {
                                name: field.ident.as_ref()?.to_string(),
                                optional_on_wire: field.attrs.iter().any(may_omit),
                                omit_none: field.attrs.iter().any(skips_none)
                                    && !field.attrs.iter().any(renames_or_flattens),
                                ty: field.ty.clone(),
                            })
                        })
                        .collect();
                    structs.insert(item.ident.to_string(), members);
                }
            }
            Item::Enum(item) => {
                let variants: Option<Vec<(String, String)>> = item
                    .variants
                    .iter()
                    .map(|v| {
                        let spelling = v.attrs.iter().find_map(renamed)?;
                        v.fields.is_empty().then(|| (v.ident.to_string(), spelling))
                    })
                    .collect();
                if let Some(variants) = variants.filter(|v| !v.is_empty()) {
                    string_enums.insert(item.ident.to_string(), variants);
                }
            }
            _ => {}
        }
    }
    for (name, members) in &structs {
        let names: Vec<&str> = members.iter().map(|m| m.name.as_str()).collect();
        if !names.windows(2).all(|w| w[0] < w[1]) {
            return Err(format!(
                "{name}: the schema must declare its properties in code point order"
            ));
        }
    }
    Ok((structs, string_enums))
}

/// Whether a field attribute lets serde leave the member out of the wire.
fn may_omit(attr: &syn::Attribute) -> bool {
    let mut omits = false;
    if attr.path().is_ident("serde") {
        let _ = attr.parse_nested_meta(|meta| {
            if ["skip_serializing_if", "flatten", "rename", "skip"]
                .iter()
                .any(|word| meta.path.is_ident(word))
            {
                omits = true;
            }
            if meta.input.peek(syn::Token![=]) {
                let _: syn::Expr = meta.value()?.parse()?;
            }
            Ok(())
        });
    }
    omits
}

/// Whether a field attribute is `skip_serializing_if = "...is_none"`.
fn skips_none(attr: &syn::Attribute) -> bool {
    let mut skips = false;
    if attr.path().is_ident("serde") {
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("skip_serializing_if") {
                let value: LitStr = meta.value()?.parse()?;
                skips = value.value().ends_with("is_none");
            } else if meta.input.peek(syn::Token![=]) {
                let _: syn::Expr = meta.value()?.parse()?;
            }
            Ok(())
        });
    }
    skips
}

/// Whether a field attribute renames, flattens or skips the member.
fn renames_or_flattens(attr: &syn::Attribute) -> bool {
    let mut found = false;
    if attr.path().is_ident("serde") {
        let _ = attr.parse_nested_meta(|meta| {
            if ["flatten", "rename", "skip"]
                .iter()
                .any(|word| meta.path.is_ident(word))
            {
                found = true;
            }
            if meta.input.peek(syn::Token![=]) {
                let _: syn::Expr = meta.value()?.parse()?;
            }
            Ok(())
        });
    }
    found
}

/// The spelling of a `#[serde(rename = "...")]` attribute.
fn renamed(attr: &syn::Attribute) -> Option<String> {
    let mut spelling = None;
    if attr.path().is_ident("serde") {
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("rename") {
                let value: LitStr = meta.value()?.parse()?;
                spelling = Some(value.value());
            } else if meta.input.peek(syn::Token![=]) {
                let _: syn::Expr = meta.value()?.parse()?;
            }
            Ok(())
        });
    }
    spelling
}

/// The structs every member of which is always written and of an encodable type.
fn encodable_structs(
    structs: &BTreeMap<String, Vec<Member>>,
    string_enums: &BTreeMap<String, Vec<(String, String)>>,
) -> BTreeSet<String> {
    let mut known: BTreeSet<String> = string_enums.keys().cloned().collect();
    let mut canonical = BTreeSet::new();
    // A fixed point: a struct joins once all its member types are known.
    loop {
        let before = canonical.len();
        for (name, members) in structs {
            if !canonical.contains(name)
                && members
                    .iter()
                    .all(|m| (!m.optional_on_wire || m.omit_none) && encodable(&m.ty, &known))
                && members.first().is_some_and(|m| !m.omit_none)
            {
                canonical.insert(name.clone());
                known.insert(name.clone());
            }
        }
        if canonical.len() == before {
            return canonical;
        }
    }
}

/// Whether `ty` is a `u64`, `bool`, `String`, an array, `Vec` or `Option` of one, or a
/// known type.
fn encodable(ty: &Type, known: &BTreeSet<String>) -> bool {
    let path = match ty {
        Type::Path(path) => path,
        Type::Array(array) => return encodable(&array.elem, known),
        _ => return false,
    };
    let Some(last) = path.path.segments.last() else {
        return false;
    };
    let ident = last.ident.to_string();
    match (&last.arguments, ident.as_str()) {
        (PathArguments::None, "u64" | "bool" | "String") => true,
        (PathArguments::None, _) => known.contains(&ident),
        (PathArguments::AngleBracketed(args), "Vec" | "Option") => {
            matches!(args.args.first(), Some(GenericArgument::Type(inner)) if args.args.len() == 1 && encodable(inner, known))
        }
        _ => false,
    }
}

/// The identities the bundled definitions name, checked against their members.
fn identities(bundle: &Bundle, canonical: &BTreeSet<String>) -> Result<BTreeMap<String, Identity>> {
    let mut found = BTreeMap::new();
    for (name, def) in &bundle.defs {
        let Some(spec) = def.schema.get(IDENTITY_KEYWORD) else {
            continue;
        };
        let text = |key: &str| spec.get(key).and_then(Value::as_str).map(str::to_owned);
        let (Some(member), Some(prefix)) = (text("member"), text("prefix")) else {
            return Err(format!(
                "{}: {name}: {IDENTITY_KEYWORD} needs string members \"member\" and \"prefix\"",
                def.origin
            ));
        };
        if !canonical.contains(name) {
            return Err(format!(
                "{}: {name} names an identity but has no canonical writer",
                def.origin
            ));
        }
        let declared = def
            .schema
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|p| p.contains_key(&member));
        if !declared {
            return Err(format!(
                "{}: {name}: the identity member \"{member}\" is not a property",
                def.origin
            ));
        }
        found.insert(
            name.clone(),
            Identity {
                member,
                prefix,
                tag: text("tag"),
                digest: spec.get("digest").and_then(Value::as_bool).unwrap_or(false),
            },
        );
    }
    Ok(found)
}

/// `PlacementFragment` -> `placement_fragment`.
fn snake(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// The Rust literal of the bytes `text`.
fn bytes_literal(text: &str) -> String {
    format!("b{text:?}")
}

/// The JSON text of the string `name` (member names are plain ASCII).
fn json_string(name: &str) -> String {
    serde_json::to_string(name).unwrap_or_default()
}

fn write_keys(out: &mut String, structs: &BTreeMap<String, Vec<Member>>) {
    let names: BTreeSet<&str> = structs
        .values()
        .flatten()
        .map(|m| m.name.as_str())
        .collect();
    out.push_str(
        "/// Every member name of the wire types, one constant each, so that a misspelt name \
         does not compile.\npub mod key {\n",
    );
    for name in names {
        writeln!(
            out,
            "/// The member `{name}`.\npub const {}: &str = {name:?};",
            name.to_ascii_uppercase()
        )
        .ok();
    }
    out.push_str("}\n");
}

fn write_fields(out: &mut String, name: &str, members: &[Member], required: &BTreeSet<&str>) {
    let constant = |m: &Member| format!("key::{}", m.name.to_ascii_uppercase());
    let keys: Vec<String> = members.iter().map(constant).collect();
    let required: Vec<String> = members
        .iter()
        .filter(|m| required.contains(m.name.as_str()))
        .map(constant)
        .collect();
    // All required (every output document): the same list.
    let required = if required.len() == keys.len() {
        "Self::FIELDS".to_owned()
    } else {
        format!("&[{}]", required.join(", "))
    };
    writeln!(
        out,
        "impl {name} {{\n/// The members of a `{name}`, in code point order.\n\
         pub const FIELDS: &'static [&'static str] = &[{}];\n\
         /// The members the schema requires, in code point order.\n\
         pub const REQUIRED: &'static [&'static str] = {required};\n}}",
        keys.join(", ")
    )
    .ok();
}

fn write_enum(out: &mut String, name: &str, variants: &[(String, String)]) {
    let mut arms = String::new();
    for (variant, spelling) in variants {
        let spelling = bytes_literal(&json_string(spelling));
        write!(arms, "Self::{variant} => {spelling},").ok();
    }
    writeln!(
        out,
        "impl Canonical for {name} {{\nfn write_canonical<S: Sink + ?Sized>(&self, out: &mut S) {{\n\
         out.put(match self {{ {arms} }});\n}}\n}}"
    )
    .ok();
}

/// The parameter list `name: &(impl Canonical + ?Sized), ...` of `members`.
fn parameters<'a>(members: impl Iterator<Item = &'a str>) -> String {
    members
        .map(|m| format!("{m}: &(impl Canonical + ?Sized)"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Statements writing `members` (name, expression) as the members of one object, each
/// key in its literal bytes.
fn object_body(members: &[(String, String)]) -> String {
    let mut body = String::new();
    for (i, (name, value)) in members.iter().enumerate() {
        let open = if i == 0 { "{" } else { "," };
        let key = format!("{open}{}:", json_string(name));
        writeln!(body, "out.put({});\n{value};", bytes_literal(&key)).ok();
    }
    if members.is_empty() {
        body.push_str("out.put(b\"{\");\n");
    }
    body.push_str("out.put(b\"}\");\n");
    body
}

fn write_struct(out: &mut String, name: &str, members: &[Member]) {
    let snake = snake(name);
    let args: Vec<String> = members
        .iter()
        .map(|m| {
            if m.omit_none {
                format!("self.{}.as_ref()", m.name)
            } else {
                format!("&self.{}", m.name)
            }
        })
        .collect();
    writeln!(
        out,
        "impl Canonical for {name} {{\nfn write_canonical<S: Sink + ?Sized>(&self, out: &mut S) {{\n\
         write_{snake}(out, {});\n}}\n}}",
        args.join(", ")
    )
    .ok();
    // The first member is always written (`encodable_structs`), so each later key
    // starts with its comma whether or not an optional one before it was written.
    let mut body = String::new();
    for (i, m) in members.iter().enumerate() {
        let open = if i == 0 { "{" } else { "," };
        let key = bytes_literal(&format!("{open}{}:", json_string(&m.name)));
        if m.omit_none {
            writeln!(
                body,
                "if let Some(value) = {} {{\nout.put({key});\nvalue.write_canonical(out);\n}}",
                m.name
            )
            .ok();
        } else {
            writeln!(body, "out.put({key});\n{}.write_canonical(out);", m.name).ok();
        }
    }
    body.push_str("out.put(b\"}\");\n");
    let params: Vec<String> = members
        .iter()
        .map(|m| {
            if m.omit_none {
                format!("{}: Option<&(impl Canonical + ?Sized)>", m.name)
            } else {
                format!("{}: &(impl Canonical + ?Sized)", m.name)
            }
        })
        .collect();
    writeln!(
        out,
        "/// Writes the canonical encoding (contract §5) of a `{name}` with these members.\n\
                  pub(crate) fn write_{snake}<S: Sink + ?Sized>(out: &mut S, {}) {{\n{body}}}",
        params.join(", ")
    )
    .ok();
}

/// The payload's members: the struct's but the id, and the tag's `schema`, sorted. Each
/// is (name, expression writing it).
fn payload_members(members: &[Member], identity: &Identity) -> Vec<(String, String)> {
    let mut payload: Vec<(String, String)> = members
        .iter()
        .filter(|m| m.name != identity.member)
        .map(|m| (m.name.clone(), format!("{}.write_canonical(out)", m.name)))
        .collect();
    if let Some(tag) = &identity.tag {
        payload.push(("schema".to_owned(), format!("{tag:?}.write_canonical(out)")));
        payload.sort();
    }
    payload
}

fn write_identity(out: &mut String, name: &str, members: &[Member], identity: &Identity) {
    let snake = snake(name);
    let id = &identity.member;
    let inputs: Vec<&str> = members
        .iter()
        .map(|m| m.name.as_str())
        .filter(|m| m != id)
        .collect();
    let params = parameters(inputs.iter().copied());
    let payload = payload_members(members, identity);
    let tag_doc = identity.tag.as_ref().map_or(String::new(), |tag| {
        format!(", with `\"schema\":{tag:?}` added")
    });
    writeln!(
        out,
        "/// Writes the payload `{id}` hashes: a `{name}` without `{id}`{tag_doc}.\n\
                  pub(crate) fn write_{snake}_id_payload<S: Sink + ?Sized>(out: &mut S, {params}) {{\n{}}}",
        object_body(&payload)
    )
    .ok();
    let call_args = inputs.join(", ");
    writeln!(
        out,
        "/// The `{id}` of a `{name}` with these members: `{}` + SHA-256 of its payload.\n\
                  pub(crate) fn {snake}_id({params}) -> ::std::string::String {{\n\
         let mut out = crate::canonical::HashSink::new();\n\
         write_{snake}_id_payload(&mut out, {call_args});\n\
         out.id({:?})\n}}",
        identity.prefix, identity.prefix
    )
    .ok();

    // The wire text and the payload as (name, expression) lists; their common prefix is
    // hashed once.
    let wire: Vec<(String, String)> = members
        .iter()
        .map(|m| {
            let value = if &m.name == id {
                "id.as_str().write_canonical(out)".to_owned()
            } else {
                format!("{}.write_canonical(out)", m.name)
            };
            (m.name.clone(), value)
        })
        .collect();
    let shared = wire
        .iter()
        .zip(&payload)
        .take_while(|(w, p)| w.0 == p.0)
        .count();
    if !identity.digest {
        return;
    }
    let body = |list: &[(String, String)], from: usize| {
        let text = object_body(list);
        // The statements of members `from..`: two lines per member.
        text.lines()
            .skip(from * 2)
            .fold(String::new(), |mut all, line| {
                all.push_str(line);
                all.push('\n');
                all
            })
    };
    let prefix_text = object_body(&wire);
    let prefix_lines = prefix_text
        .lines()
        .take(shared * 2)
        .fold(String::new(), |mut all, line| {
            all.push_str(line);
            all.push('\n');
            all
        });
    writeln!(
        out,
        "/// The `{id}` of a `{name}` with these members and the SHA-256 of its canonical \
         wire text with that id, in one pass: both texts begin with the same {shared} \
         member(s), hashed once.\n\
                  pub(crate) fn {snake}_identity({params}) -> (::std::string::String, [u8; 32]) {{\n\
         let mut hashing = crate::canonical::HashSink::new();\n\
         let out = &mut hashing;\n{prefix_lines}\
         let mut wire = out.clone();\n{}\
         let id = out.id({:?});\n\
         let out = &mut wire;\n{}\
         (id, wire.finish())\n}}",
        body(&payload, shared),
        identity.prefix,
        body(&wire, shared),
    )
    .ok();
}
