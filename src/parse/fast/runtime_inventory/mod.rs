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
mod summary;
mod table;

use std::borrow::Cow;

use super::cursor::{index_of, mask_of, Cursor, KeyOrder};
use crate::error::Result;
use crate::locate::INVENTORY;
use crate::model::runtime::{assemble, check_header, RuntimeHeader};
use crate::model::{construct_runtime, Runtime};
use crate::options::Options;
use crate::path::Path;
use crate::value::Value;
use crate::wire::{key, RuntimeInventory};
use descriptors::Descriptors;
use record::{RecordReader, RecordView};
use table::Table;

pub(crate) use summary::runtime_inventory_summary;

/// The top-level members read here: the schema's (an unknown one leaves the document to
/// the general path).
const TOP_KEYS: &[&str] = RuntimeInventory::FIELDS;
/// The members the top level must have.
const TOP_REQUIRED: u32 = mask_of(TOP_KEYS, RuntimeInventory::REQUIRED);
const GENERATION: usize = index_of(TOP_KEYS, key::GENERATION);
const TENSORS: usize = index_of(TOP_KEYS, key::TENSORS);
/// The header members, each with its slot in [`Top::header`] and whether it may be null.
const HEADER: [(usize, bool); 5] = [
    (index_of(TOP_KEYS, key::MODEL_ID), false),
    (index_of(TOP_KEYS, key::REVISION), false),
    (index_of(TOP_KEYS, key::INSTANCE_ID), false),
    (index_of(TOP_KEYS, key::PLACEMENT_ID), true),
    (index_of(TOP_KEYS, key::LEASE_ID), true),
];

/// A runtime inventory read up to §8.4: its header members and its distinct descriptors
/// (each record was handed to the caller as it was read).
struct Scanned<'a> {
    top: Top<'a>,
    descriptors: Descriptors<'a>,
}

/// The top-level members other than the records.
struct Top<'a> {
    /// model_id, revision, instance_id, placement_id, lease_id as found.
    header: [Option<Value<'a>>; 5],
    generation: Value<'a>,
}

impl<'a> Top<'a> {
    /// The header members as §8.4 reads them.
    fn header(&self) -> Option<RuntimeHeader<'_, 'a>> {
        let [model_id, revision, instance_id, placement_id, lease_id] = &self.header;
        Some(RuntimeHeader {
            model_id: model_id.as_ref()?,
            revision: revision.as_ref()?,
            instance_id: instance_id.as_ref()?,
            lease_id: set(lease_id.as_ref()),
            placement_id: set(placement_id.as_ref()),
            generation: Some(&self.generation),
        })
    }
}

/// Reads the document's top level and every record, handing each record to `each` (with
/// the reader holding its integer arrays). `None`: the general path must run.
fn scan<'a>(
    text: &'a [u8],
    options: &Options<'_>,
    mut each: impl FnMut(RecordView<'a>, &RecordReader) -> Option<()>,
) -> Option<Scanned<'a>> {
    let limits = &options.limits;
    if options.owners.is_some() || !limits.admits_fast_shapes() {
        return None;
    }
    let text = std::str::from_utf8(text).ok()?;
    let mut cursor = Cursor::limited(text, limits.max_string_bytes);
    let mut descriptors = Descriptors::new();
    let mut reader = RecordReader::new();
    let mut leases: Option<(u64, bool)> = None;
    let mut header: [Option<Value<'a>>; 5] = Default::default();
    let mut generation = 0;
    let seen = cursor.members(TOP_KEYS, &mut KeyOrder::listed(), |c, key| {
        match key {
            GENERATION => generation = c.u64()?,
            TENSORS => c.array(|c| {
                let record = reader.record(c, &mut descriptors)?;
                let (first, same) = leases.get_or_insert((record.lease_generation, true));
                *same &= *first == record.lease_generation;
                each(record, &reader)
            })?,
            _ => {
                let slot = HEADER.iter().position(|&(index, _)| index == key)?;
                header[slot] = Some(if HEADER[slot].1 && c.null() {
                    Value::Null
                } else {
                    Value::Str(Cow::Borrowed(c.string()?))
                });
            }
        }
        Some(())
    })?;
    if seen & TOP_REQUIRED != TOP_REQUIRED || !cursor.at_end() {
        return None;
    }
    if leases.is_some_and(|(lease, same)| !same || lease != generation) {
        return None;
    }
    Some(Scanned {
        top: Top {
            header,
            generation: Value::UInt(generation),
        },
        descriptors,
    })
}

/// Reads a runtime inventory, or `None` when the general path must run.
pub(crate) fn runtime_inventory(text: &[u8], options: &Options<'_>) -> Option<Result<Runtime>> {
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
    let passes = table.is_some_and(|mut t| t.passes(descriptors.list()));
    let tensors = scanned.descriptors.into_sorted();
    Some(match checked {
        Some(checked) if passes => Ok(assemble(
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
        ),
    })
}

/// An optional member: absent and `null` are not set.
fn set<'v, 'a>(value: Option<&'v Value<'a>>) -> Option<&'v Value<'a>> {
    value.filter(|v| !matches!(v, Value::Null))
}
