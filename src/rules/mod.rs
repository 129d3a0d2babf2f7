//! The contract's rules written once: each function here is one rule, a yes/no predicate
//! over plain values (no document tree, no allocation). The general path calls it and, on
//! "no", builds the error with its code, message and pointer; the fast paths call the same
//! function and, on "no", leave the document to the general path. So what the fast paths
//! accept is what the general path accepts by construction, not only by test.
//!
//! | module | rules |
//! |---|---|
//! | [`values`] | the field minimums of INT (§1.4), STR's non-empty string, ALIASES' order and uniqueness, ADDR's end address (§2.4 step 4) |
//! | [`stride`] | the canonical (row-major) stride of §10.3 step 4.3.5 |
//! | [`fragment_box`] | F4–F8 of the fragment-set rules (§8.2) for one fragment |
//! | [`alias_pair`] | the exact declared alias pair of the physical address rules (§8.5) |

pub(crate) mod alias_pair;
pub(crate) mod fragment_box;
pub(crate) mod stride;
pub(crate) mod values;

#[cfg(test)]
mod tests;
