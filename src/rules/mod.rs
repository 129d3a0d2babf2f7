//! The contract's rules, one module per section: each rule's predicate, its code, message
//! and detail together, found by the section that states it.
//!
//! A rule that both a general path and a fast path check is written once as a yes/no
//! predicate over plain values (no document tree, no allocation). The general path calls
//! it and, on "no", builds the error here, beside it; the fast paths call the same function
//! and, on "no", leave the document to the general path. So what the fast paths accept is
//! what the general path accepts by construction, not only by test.
//!
//! | section | module | rules |
//! |---|---|---|
//! | §1.4 | [`values`] | the value checks INT, STR, INTS, ALIASES, SEQ; the field minimums, ADDR's end address (§2.4 step 4) |
//! | §2.1 | `rank` | ParallelRank |
//! | §2.2, §3 | `descriptor` | TensorDescriptor and the canonical descriptor (shard dims) |
//! | §2.3–§2.5 | `fragment` | PlacementFragment, RuntimeFragment, RuntimeBindingFragment |
//! | §8.2 | `fragment_set` | T1, F1–F8 (`fragment_box`: F4–F8 as one predicate; `fast`: the compact yes/no pass) |
//! | §8.3 | `box_overlap` | same-rank box overlap |
//! | §8.5 | `physical` | physical address rules (`alias_pair`: the exact declared alias pair) |
//! | §10.3 step 4.3.5 | `stride` | the canonical (row-major) stride |
//!
//! The constructions that run them in the contract's order (§8.1, §8.4, §8.6) are in
//! `model`; the readers that find the values (§6.2, §9, §10) in `parse` and `inventory`.

pub(crate) mod box_overlap;
pub(crate) mod descriptor;
pub(crate) mod fragment;
pub(crate) mod fragment_set;
pub(crate) mod logical;
pub(crate) mod physical;
pub(crate) mod rank;
pub(crate) mod stride;
pub mod values;

#[cfg(test)]
mod tests;
