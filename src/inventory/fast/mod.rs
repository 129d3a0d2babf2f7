//! The fast path of the runtime inventory reader (§10.3): one pass over the text straight
//! into runtime fragments, no document tree.
//!
//! [`scan`] reads the top level and each record ([`record`]), merging descriptors
//! ([`descriptors`]); each per-record step of §10.3 is checked as a yes/no question. When
//! every step holds, the descriptors and fragments are exactly those the general path
//! builds, so §8.4 construction gives the same result, error included; anything else
//! returns `None` and the general path reports the error. The rules of §8.4 run on a
//! compact [`table`] of the records; only when it says "no" does §8.4's own procedure run,
//! to name the failure. [`runtime_inventory`] also keeps every record as a
//! `RuntimeFragment`; [`summary`] keeps only the table, to validate without building the
//! manifest.

mod descriptors;
mod record;
mod scan;
mod summary;
mod table;

use crate::locate::INVENTORY;
use crate::model::runtime::{assemble, check_header};
use crate::model::{construct_runtime, Runtime};
use crate::options::Options;
use crate::path::Path;
use scan::scan;
use table::Table;

pub(crate) use summary::runtime_inventory_summary;

#[cfg(test)]
mod summary_tests;

/// Reads a valid runtime inventory, or `None` when the general path must run (for
/// anything this path does not read, and for every rejection).
pub(crate) fn runtime_inventory(text: &str, options: &Options<'_>) -> Option<Runtime> {
    // Reserve once instead of growing (a grown vector is copied and its old buffer stays
    // in the peak): no record is shorter than about 400 bytes of text (its 20 required
    // member names alone take 300), so this is never too small for a real inventory.
    // Untouched capacity costs address space, not memory.
    let capacity = text.len() / 400;
    let mut fragments = Vec::with_capacity(capacity);
    // The rules run on the compact table, built while the text is in cache, instead of
    // in three passes over a million fragments scattered over the heap.
    let mut table = Some(Table::with_capacity(capacity));
    let scanned = scan(text, options, |record, reader| {
        if table
            .as_mut()
            .is_some_and(|t| t.push(&record, reader).is_none())
        {
            table = None; // §8.4 decides
        }
        fragments.push(record.into_fragment(reader));
        Some(())
    })?;
    let header = scanned.top.header()?;
    let descriptors = &scanned.descriptors;
    if !options
        .limits
        .admits_counts(descriptors.list(), fragments.len())
    {
        return None;
    }
    let checked = check_header(&Path::Root, &header).ok();
    let per_box = options.limits.max_geometry_work;
    let passes = table.is_some_and(|mut t| t.passes(descriptors.list(), per_box));
    let tensors = scanned.descriptors.into_sorted();
    match checked {
        Some(checked) if passes => Some(assemble(
            &checked,
            INVENTORY,
            tensors,
            fragments,
            Vec::new(),
        )),
        _ => construct_runtime(
            &Path::Root,
            INVENTORY,
            &header,
            tensors,
            fragments,
            Vec::new(),
            per_box,
        )
        .ok(),
    }
}
