//! Which document kind an object's keys are: for a `fields_mismatch` on a whole document,
//! so a file given to the wrong command names the right one. The kinds are every document
//! a `weight-manifest` command reads: the contract's, and Mooncake's (whose shapes the
//! schemas give, `schema/mooncake-*.schema.json`; read by the Mooncake crate, which has
//! their types: the core has their member names only, `wire::writers::mooncake_fields`).

use crate::error::DocumentKind;
use crate::value::{Object, Value};
use crate::wire::writers::mooncake_fields::{
    self, MOONCAKE_PLACEMENT_MANIFEST, MOONCAKE_PLACEMENT_PART, MOONCAKE_STORAGE_MANIFEST,
    MOONCAKE_STORED_FRAGMENT,
};
use crate::wire::{
    key, BindingInventory, BindingInventoryRecord, PlacementFragment, PlacementInventory,
    PlacementInventoryRecord, PlacementManifest, PlanRegion, ReshardPlan, RuntimeBindingFragment,
    RuntimeBindingManifest, RuntimeFragment, RuntimeInventory, RuntimeInventoryRecord,
    RuntimeManifest,
};

/// A document kind by its keys: the top level's and its first list element's. A strict
/// document has exactly them; an inventory has its required ones at least (it ignores
/// unknown members).
struct Shape {
    top: &'static [&'static str],
    list: &'static str,
    element: &'static [&'static str],
    strict: bool,
    kind: DocumentKind,
}

/// Every kind a command reads, most specific first; each with its `weight-manifest` command.
const SHAPES: [Shape; 9] = [
    Shape {
        top: PlacementManifest::FIELDS,
        list: key::FRAGMENTS,
        element: PlacementFragment::FIELDS,
        strict: true,
        kind: kind("placement manifest", "placement validate"),
    },
    Shape {
        top: RuntimeManifest::FIELDS,
        list: key::FRAGMENTS,
        element: RuntimeFragment::FIELDS,
        strict: true,
        kind: kind("runtime manifest", "runtime validate"),
    },
    Shape {
        top: RuntimeBindingManifest::FIELDS,
        list: key::FRAGMENTS,
        element: RuntimeBindingFragment::FIELDS,
        strict: true,
        kind: kind("runtime binding manifest", "binding validate"),
    },
    Shape {
        top: ReshardPlan::FIELDS,
        list: key::REGIONS,
        element: PlanRegion::FIELDS,
        strict: true,
        kind: kind("reshard plan", "plan-bind"),
    },
    Shape {
        top: RuntimeInventory::REQUIRED,
        list: key::TENSORS,
        element: RuntimeInventoryRecord::REQUIRED,
        strict: false,
        kind: kind("runtime inventory", "runtime validate --inventory"),
    },
    Shape {
        top: BindingInventory::REQUIRED,
        list: key::FRAGMENTS,
        element: BindingInventoryRecord::REQUIRED,
        strict: false,
        kind: kind("binding inventory", "binding validate --inventory"),
    },
    Shape {
        top: PlacementInventory::REQUIRED,
        list: key::TENSORS,
        element: PlacementInventoryRecord::REQUIRED,
        strict: false,
        kind: kind("placement inventory", "placement from-inventory"),
    },
    Shape {
        top: MOONCAKE_PLACEMENT_MANIFEST,
        list: mooncake_fields::key::PARTS,
        element: MOONCAKE_PLACEMENT_PART,
        strict: true,
        kind: kind("Mooncake placement manifest", "mooncake validate"),
    },
    Shape {
        top: MOONCAKE_STORAGE_MANIFEST,
        list: mooncake_fields::key::FRAGMENTS,
        element: MOONCAKE_STORED_FRAGMENT,
        strict: true,
        kind: kind("Mooncake Store manifest", "mooncake validate"),
    },
];

const fn kind(name: &'static str, command: &'static str) -> DocumentKind {
    DocumentKind { name, command }
}

/// Whether `object` has the keys `keys`: exactly, or at least.
fn has(object: &Object<'_>, keys: &[&str], strict: bool) -> bool {
    if strict {
        object.has_exact_keys(keys)
    } else {
        keys.iter().all(|key| object.get(key).is_some())
    }
}

impl Shape {
    /// Whether `object` is of this shape (an empty or absent list decides nothing).
    fn matches(&self, object: &Object<'_>) -> bool {
        let element = match object.get(self.list) {
            Some(Value::Array(items)) => items.first(),
            _ => None,
        };
        has(object, self.top, self.strict)
            && element.is_none_or(|e| {
                e.as_object()
                    .is_some_and(|e| has(e, self.element, self.strict))
            })
    }
}

/// The document kind whose keys `object` has, other than `expected` (the top-level field
/// list of the kind being read): what a `fields_mismatch` at the root names as the command
/// that reads the document instead.
pub fn document_kind(object: &Object<'_>, expected: &[&str]) -> Option<DocumentKind> {
    SHAPES
        .iter()
        .filter(|shape| shape.top != expected)
        .find(|shape| shape.matches(object))
        .map(|shape| shape.kind)
}
