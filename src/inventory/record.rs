//! Inventories from Rust values: the counterpart of the reference's attribute-based
//! adapter. A framework implements [`Record`] for its own types, answering each member
//! the contract reads; the answers are assembled into a document and read by the same
//! readers as JSON, so every rule and its order apply unchanged.

use std::borrow::Cow;

use super::{
    binding::binding_from_inventory, placement::placement_from_inventory,
    runtime::runtime_from_inventory,
};
use crate::error::Result;
use crate::model::{Binding, Owner, Placement, Runtime};
use crate::options::Options;
use crate::value::{Object, Value};
use crate::wire::{
    key, BindingInventory, BindingInventoryRecord, InventoryRank, PlacementInventory,
    PlacementInventoryRecord, RuntimeInventory, RuntimeInventoryRecord,
};

/// An object whose members the inventory readers can ask for by name.
pub trait Record {
    /// The member named `name`, or `None` when the record has no such member.
    fn member(&self, name: &str) -> Option<Value<'_>>;

    /// The opaque owner of this record's memory (runtime and binding records only).
    fn owner(&self) -> Option<Owner> {
        None
    }
}

impl Record for Object<'_> {
    fn member(&self, name: &str) -> Option<Value<'_>> {
        self.get(name).cloned()
    }
}

/// The members of a runtime inventory record (§10.3), as the schema lists them.
pub const RUNTIME_RECORD_MEMBERS: &[&str] = RuntimeInventoryRecord::FIELDS;
/// The members of a binding inventory record (§10.4).
pub const BINDING_RECORD_MEMBERS: &[&str] = BindingInventoryRecord::FIELDS;
/// The members of a placement inventory record (§10.5).
pub const PLACEMENT_RECORD_MEMBERS: &[&str] = PlacementInventoryRecord::FIELDS;

/// Hands out the records' owners in record order: the readers call the resolver once per
/// record, in order, after the record's checks pass.
struct InOrder {
    owners: Vec<Option<Owner>>,
    next: std::cell::Cell<usize>,
}

impl InOrder {
    fn new<R: Record>(records: &[R]) -> Self {
        InOrder {
            owners: records.iter().map(Record::owner).collect(),
            next: std::cell::Cell::new(0),
        }
    }

    fn next(&self, _record: &Value<'_>) -> Option<Owner> {
        let index = self.next.get();
        self.next.set(index + 1);
        self.owners.get(index).cloned().flatten()
    }
}

/// The top-level members of a runtime inventory (§10.3), its record list `tensors`
/// included.
pub const RUNTIME_TOP_MEMBERS: &[&str] = RuntimeInventory::FIELDS;
/// The top-level members of a binding inventory (§10.4), its record list `fragments`
/// included.
pub const BINDING_TOP_MEMBERS: &[&str] = BindingInventory::FIELDS;
/// The top-level members of a placement inventory (§10.5), its record list `tensors`
/// included.
pub const PLACEMENT_TOP_MEMBERS: &[&str] = PlacementInventory::FIELDS;

/// The members of a record's `rank`.
pub const RANK_MEMBERS: &[&str] = InventoryRank::FIELDS;

fn object_of<'r>(record: &'r dyn Record, names: &[&'static str]) -> Value<'r> {
    let members = names
        .iter()
        .filter_map(|&name| record.member(name).map(|v| (Cow::Borrowed(name), v)))
        .collect();
    Value::Object(Object::from_members(members))
}

fn document<'r>(
    top: &'r dyn Record,
    top_names: &[&'static str],
    list_name: &'static str,
    list: Vec<Value<'r>>,
) -> Value<'r> {
    let mut members: Vec<(Cow<'static, str>, Value<'r>)> = top_names
        .iter()
        .filter(|&&name| name != list_name)
        .filter_map(|&name| top.member(name).map(|v| (Cow::Borrowed(name), v)))
        .collect();
    members.push((Cow::Borrowed(list_name), Value::Array(list)));
    Value::Object(Object::from_members(members))
}

/// The shape of one inventory kind read from records: its record and top-level member
/// lists and the name of its record list.
struct Kind {
    record_members: &'static [&'static str],
    top_members: &'static [&'static str],
    list: &'static str,
}

/// Assembles the document of `top` and `records` (`kind`) and reads it with `read`, each
/// fragment's owner being its record's [`Record::owner`], in record order.
fn read_owned_records<R: Record, T>(
    top: &dyn Record,
    records: &[R],
    options: &Options<'_>,
    kind: &Kind,
    read: fn(&Value<'_>, &Options<'_>) -> Result<T>,
) -> Result<T> {
    let list = records
        .iter()
        .map(|r| object_of(r, kind.record_members))
        .collect();
    let resolver = InOrder::new(records);
    let resolve = |record: &Value<'_>| resolver.next(record);
    let options = Options {
        owners: Some(&resolve),
        ..*options
    };
    read(&document(top, kind.top_members, kind.list, list), &options)
}

/// What a kind's records say of owners, for the docs.
macro_rules! owners_doc {
    (owned) => {
        "each fragment's owner is its record's [`Record::owner`] (`options.owners` is not used)"
    };
    (unowned) => {
        "under `options.limits` (its records have no owner)"
    };
}

/// `from_records` of a kind: its record and top-level members from the schema.
macro_rules! from_records {
    ($($kind:ident($records:ident, $top:ident, $list:expr, $read:ident, $what:literal, $owners:ident);)*) => {$(
        impl $kind {
            #[doc = concat!(
                "Reads a ", $what, " from a top-level record and one record per fragment; ",
                owners_doc!($owners), "."
            )]
            pub fn from_records<R: Record>(
                top: &dyn Record,
                records: &[R],
                options: &Options<'_>,
            ) -> Result<$kind> {
                let kind = Kind {
                    record_members: $records,
                    top_members: $top,
                    list: $list,
                };
                read_owned_records(top, records, options, &kind, $read)
            }
        }
    )*};
}

#[rustfmt::skip]
from_records! {
    Runtime(RUNTIME_RECORD_MEMBERS, RUNTIME_TOP_MEMBERS, key::TENSORS, runtime_from_inventory, "runtime inventory (§10.3)", owned);
    Binding(BINDING_RECORD_MEMBERS, BINDING_TOP_MEMBERS, key::FRAGMENTS, binding_from_inventory, "binding inventory (§10.4)", owned);
    Placement(PLACEMENT_RECORD_MEMBERS, PLACEMENT_TOP_MEMBERS, key::TENSORS, placement_from_inventory, "placement inventory (§10.5)", unowned);
}
