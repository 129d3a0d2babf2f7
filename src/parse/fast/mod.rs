//! Fast paths of the strict placement parser, the large document (~100k fragments): one
//! pass over the text into the wire values, no document tree; and of `from_wire` for a
//! typed placement built in memory ([`placement_from_manifest`]). Each only ever says
//! "valid": it leaves the input to the general path whenever that must decide (see
//! [`crate::reader::cursor`]), so results and errors never differ from the general path's.
//! The runtime inventory's fast path is the inventory reader's (`inventory::fast`).

mod placement;
mod typed;

pub(crate) use placement::placement;
pub(crate) use typed::placement_from_manifest;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod typed_tests;
