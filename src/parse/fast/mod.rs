//! Fast paths of the strict parsers for the large documents (a placement, a runtime
//! inventory): one pass over the text into the wire values, no document tree. Each returns
//! `None` whenever the general path must decide (see [`cursor`]), so results and errors
//! never differ from the general path's.

mod cursor;
mod placement;
mod runtime_inventory;

pub(crate) use placement::placement;
pub(crate) use runtime_inventory::{runtime_inventory, runtime_inventory_summary};

#[cfg(test)]
mod summary_tests;
#[cfg(test)]
mod tests;
