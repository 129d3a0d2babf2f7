//! Fast paths of the strict parsers for the large documents (a placement, a runtime
//! inventory): one pass over the text into the wire values, no document tree; and of
//! `from_wire` for a typed placement built in memory ([`placement_from_manifest`]). Each
//! leaves the input to the general path whenever that must decide (see [`cursor`]), so
//! results and errors never differ from the general path's.

pub(crate) mod cursor;
mod placement;
mod runtime_inventory;
mod typed;

pub(crate) use placement::placement;
pub(crate) use runtime_inventory::{runtime_inventory, runtime_inventory_summary};
pub(crate) use typed::placement_from_manifest;

#[cfg(test)]
mod summary_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod typed_tests;
