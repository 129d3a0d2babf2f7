//! Validation of a runtime inventory without building its manifest: the same reading as
//! [`super::runtime_inventory`], with each record kept only in the compact [`Table`]. A
//! million records then need about 170 MB of fresh memory instead of 600 MB.
//!
//! It answers only "valid"; any "no" returns `None`, after which the caller runs the full
//! reader, which names the error. So it never decides a rejection, and accepts exactly
//! what the full reader accepts.

use super::scan::scan;
use super::table::Table;
use crate::inventory::summary::RuntimeSummary;
use crate::model::runtime::check_header;
use crate::options::Options;
use crate::path::Path;

/// The summary of a valid runtime inventory, or `None`: invalid, or the fast path cannot
/// tell (the full reader decides).
pub(crate) fn runtime_inventory_summary(
    text: &str,
    options: &Options<'_>,
) -> Option<RuntimeSummary> {
    // See `runtime_inventory` on reserving for the shortest real record.
    let mut table = Table::with_capacity(text.len() / 400);
    let scanned = scan(text, options, |record, reader| table.push(&record, reader))?;
    let header = check_header(&Path::Root, &scanned.top.header()?).ok()?;
    let tensors = scanned.descriptors.list();
    let valid = options.limits.admits_counts(tensors, table.len())
        && table.passes(tensors, options.limits.max_geometry_work);
    valid.then_some(RuntimeSummary {
        tensors: tensors.len(),
        fragments: table.len(),
        generation: header.generation,
    })
}
