//! Rules over a whole manifest: the fragment set (§8.2), same-rank box overlap (§8.3),
//! physical address overlap (§8.5).

mod box_overlap;
mod fast_set;
mod fragment_set;
pub(crate) mod fxhash;
mod physical;

pub(crate) use fast_set::{all_distinct, boxes_pass, FragmentBox, Geometries};
pub(crate) use fragment_set::{check_fragment_set, LogicalFragment};
pub(crate) use physical::{check_physical, AddressSpaces};

#[cfg(test)]
mod tests;
