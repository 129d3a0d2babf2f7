//! The one pass over a runtime inventory's text that both fast paths share: the top level
//! and every record, each handed to the caller as it is read.

use std::borrow::Cow;

use super::descriptors::Descriptors;
use super::record::{RecordReader, RecordView};
use crate::model::runtime::RuntimeHeader;
use crate::options::Options;
use crate::reader::cursor::{index_of, mask_of, Cursor, KeyOrder};
use crate::value::Value;
use crate::wire::{key, RuntimeInventory};

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
pub(super) struct Scanned<'a> {
    pub(super) top: Top<'a>,
    pub(super) descriptors: Descriptors<'a>,
}

/// The top-level members other than the records.
pub(super) struct Top<'a> {
    /// model_id, revision, instance_id, placement_id, lease_id as found.
    header: [Option<Value<'a>>; 5],
    generation: Value<'a>,
}

impl<'a> Top<'a> {
    /// The header members as §8.4 reads them.
    pub(super) fn header(&self) -> Option<RuntimeHeader<'_, 'a>> {
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
pub(super) fn scan<'a>(
    text: &'a str,
    options: &Options<'_>,
    mut each: impl FnMut(RecordView<'a>, &RecordReader) -> Option<()>,
) -> Option<Scanned<'a>> {
    let limits = &options.limits;
    if options.owners.is_some() || !limits.admits_fast_shapes() {
        return None;
    }
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

/// An optional member: absent and `null` are not set.
fn set<'v, 'a>(value: Option<&'v Value<'a>>) -> Option<&'v Value<'a>> {
    value.filter(|v| !matches!(v, Value::Null))
}
