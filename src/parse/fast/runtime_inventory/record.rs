//! One runtime inventory record (§10.3 step 4) read on the fast path, borrowing the text.
//!
//! Records with the listed members only (no unknown ones), zero storage and byte offsets
//! and canonical strides are read here; anything else leaves the document to the general
//! path.

use super::super::cursor::{aliases, Cursor, Fast, KeyOrder};
use super::super::placement::rank;
use super::descriptors::{Descriptors, Spelling};
use crate::rules::stride::is_canonical_stride;
use crate::rules::values::{
    end_address, MIN_ADDRESS, MIN_EXTENT, MIN_NBYTES, MIN_OFFSET, MIN_STRIDE,
};
use crate::wire::{ParallelRank, RuntimeFragment};

/// The record members read here, in a framework's natural order (the prediction's start).
const RECORD_KEYS: [&str; 25] = [
    "fragment_id",
    "tensor_id",
    "global_shape",
    "global_offset",
    "local_shape",
    "dtype",
    "itemsize",
    "partition_dim",
    "shard_dims",
    "layer_id",
    "expert_id",
    "layout_fingerprint",
    "address",
    "nbytes",
    "worker_id",
    "endpoint",
    "device",
    "rank",
    "lease_generation",
    "aliases",
    "is_contiguous",
    "stride",
    "storage_offset",
    "byte_offset",
    "placement_fragment_id",
];
/// Every record member but shard_dims, layer_id, expert_id, aliases and
/// placement_fragment_id.
const RECORD_REQUIRED: u32 = ((1 << 25) - 1) & !(0b111 << 8) & !(1 << 19) & !(1 << 24);

/// What one record reader keeps from record to record: the predicted key orders and the
/// buffers of the integer arrays.
pub(super) struct RecordReader {
    order: KeyOrder,
    rank_order: KeyOrder,
    /// The last record's global_offset.
    pub global_offset: Vec<u64>,
    /// The last record's local_shape.
    pub local_shape: Vec<u64>,
    stride: Vec<u64>,
}

/// A record as read: strings borrow the text (the fast path reads no escapes, so the
/// text is the value); its global_offset and local_shape are in the [`RecordReader`].
pub(super) struct RecordView<'a> {
    pub fragment_id: &'a str,
    pub tensor_id: &'a str,
    /// The index of its descriptor in `Descriptors::list`.
    pub tensor: usize,
    pub worker_id: &'a str,
    pub endpoint: &'a str,
    pub device: &'a str,
    pub rank: ParallelRank,
    pub address: u64,
    pub nbytes: u64,
    pub lease_generation: u64,
    /// Sorted and distinct; empty when absent or `null`.
    pub aliases: Vec<String>,
    pub placement_fragment_id: Option<&'a str>,
}

impl RecordView<'_> {
    /// The runtime fragment of this record (§10.3 step 4.4), its arrays from `reader`.
    pub(super) fn into_fragment(self, reader: &RecordReader) -> RuntimeFragment {
        RuntimeFragment {
            address: self.address,
            aliases: self.aliases,
            device: self.device.to_owned(),
            endpoint: self.endpoint.to_owned(),
            fragment_id: self.fragment_id.to_owned(),
            global_offset: reader.global_offset.clone(),
            lease_generation: self.lease_generation,
            local_shape: reader.local_shape.clone(),
            nbytes: self.nbytes,
            placement_fragment_id: self.placement_fragment_id.map(str::to_owned),
            rank: self.rank,
            tensor_id: self.tensor_id.to_owned(),
            worker_id: self.worker_id.to_owned(),
        }
    }
}

impl RecordReader {
    /// A reader predicting the listed key order.
    pub(super) fn new() -> Self {
        RecordReader {
            order: KeyOrder::listed(),
            rank_order: KeyOrder::listed(),
            global_offset: Vec::new(),
            local_shape: Vec::new(),
            stride: Vec::new(),
        }
    }

    /// One record; its descriptor merged into `descriptors`.
    pub(super) fn record<'a>(
        &mut self,
        cursor: &mut Cursor<'a>,
        descriptors: &mut Descriptors<'a>,
    ) -> Fast<RecordView<'a>> {
        let mut spelling: Spelling<'a> = [None; 8];
        let mut view = RecordView {
            fragment_id: "",
            tensor_id: "",
            tensor: 0,
            worker_id: "",
            endpoint: "",
            device: "",
            rank: ParallelRank {
                dp: 0,
                ep: 0,
                pp: 0,
                tp: 0,
            },
            address: 0,
            nbytes: 0,
            lease_generation: 0,
            aliases: Vec::new(),
            placement_fragment_id: None,
        };
        let RecordReader {
            order,
            rank_order,
            global_offset,
            local_shape,
            stride,
        } = self;
        let seen = cursor.members(&RECORD_KEYS, order, |c, key| {
            match key {
                0 => view.fragment_id = c.non_empty()?,
                1 => view.tensor_id = c.string()?,
                2 => spelling[0] = Some(c.raw_simple()?),
                3 => c.u64s_into(MIN_OFFSET, global_offset)?,
                4 => c.u64s_into(MIN_EXTENT, local_shape)?,
                5 => spelling[1] = Some(c.raw_simple()?),
                6 => spelling[2] = Some(c.raw_simple()?),
                7 => spelling[3] = Some(c.raw_simple()?),
                8 => spelling[4] = Some(c.raw_simple()?),
                9 => spelling[5] = Some(c.raw_simple()?),
                10 => spelling[6] = Some(c.raw_simple()?),
                11 => spelling[7] = Some(c.raw_simple()?),
                12 => view.address = c.u64_min(MIN_ADDRESS)?,
                13 => view.nbytes = c.u64_min(MIN_NBYTES)?,
                14 => view.worker_id = c.non_empty()?,
                15 => view.endpoint = c.non_empty()?,
                16 => view.device = c.non_empty()?,
                17 => view.rank = rank(c, rank_order)?,
                18 => view.lease_generation = c.u64()?,
                19 => {
                    if !c.null() {
                        view.aliases = aliases(c)?;
                    }
                }
                20 => c.literal(b"true").then_some(())?,
                21 => c.u64s_into(MIN_STRIDE, stride)?,
                22 | 23 => (c.u64()? == 0).then_some(())?,
                _ => {
                    if !c.null() {
                        view.placement_fragment_id = Some(c.non_empty()?);
                    }
                }
            }
            Some(())
        })?;
        if seen & RECORD_REQUIRED != RECORD_REQUIRED
            || !is_canonical_stride(local_shape, stride)
            || end_address(view.address, view.nbytes).is_none()
        {
            return None;
        }
        view.tensor = descriptors.merge(view.tensor_id, &spelling)?;
        Some(view)
    }
}
