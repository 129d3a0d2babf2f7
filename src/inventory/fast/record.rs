//! One runtime inventory record (§10.3 step 4) read on the fast path, borrowing the text.
//!
//! Records with the listed members only (no unknown ones), zero storage and byte offsets
//! and canonical strides are read here; anything else leaves the document to the general
//! path.

use super::descriptors::{Descriptors, Spelling};
use crate::reader::cursor::rank;
use crate::reader::cursor::{aliases, index_of, mask_of, Cursor, Fast, KeyOrder};
use crate::rules::stride::is_canonical_stride;
use crate::rules::values::{
    end_address, MIN_ADDRESS, MIN_EXTENT, MIN_NBYTES, MIN_OFFSET, MIN_STRIDE,
};
use crate::wire::{key, ParallelRank, RuntimeFragment, RuntimeInventoryRecord};

/// The record members read here: the schema's (an unknown one leaves the document to the
/// general path). The first record teaches the prediction its key order.
const KEYS: &[&str] = RuntimeInventoryRecord::FIELDS;
/// The members a record must have.
const REQUIRED: u32 = mask_of(KEYS, RuntimeInventoryRecord::REQUIRED);
const FRAGMENT_ID: usize = index_of(KEYS, key::FRAGMENT_ID);
const TENSOR_ID: usize = index_of(KEYS, key::TENSOR_ID);
const GLOBAL_SHAPE: usize = index_of(KEYS, key::GLOBAL_SHAPE);
const GLOBAL_OFFSET: usize = index_of(KEYS, key::GLOBAL_OFFSET);
const LOCAL_SHAPE: usize = index_of(KEYS, key::LOCAL_SHAPE);
const DTYPE: usize = index_of(KEYS, key::DTYPE);
const ITEMSIZE: usize = index_of(KEYS, key::ITEMSIZE);
const PARTITION_DIM: usize = index_of(KEYS, key::PARTITION_DIM);
const SHARD_DIMS: usize = index_of(KEYS, key::SHARD_DIMS);
const LAYER_ID: usize = index_of(KEYS, key::LAYER_ID);
const EXPERT_ID: usize = index_of(KEYS, key::EXPERT_ID);
const LAYOUT_FINGERPRINT: usize = index_of(KEYS, key::LAYOUT_FINGERPRINT);
const ADDRESS: usize = index_of(KEYS, key::ADDRESS);
const NBYTES: usize = index_of(KEYS, key::NBYTES);
const WORKER_ID: usize = index_of(KEYS, key::WORKER_ID);
const ENDPOINT: usize = index_of(KEYS, key::ENDPOINT);
const DEVICE: usize = index_of(KEYS, key::DEVICE);
const RANK: usize = index_of(KEYS, key::RANK);
const LEASE_GENERATION: usize = index_of(KEYS, key::LEASE_GENERATION);
const ALIASES: usize = index_of(KEYS, key::ALIASES);
const IS_CONTIGUOUS: usize = index_of(KEYS, key::IS_CONTIGUOUS);
const STRIDE: usize = index_of(KEYS, key::STRIDE);
const STORAGE_OFFSET: usize = index_of(KEYS, key::STORAGE_OFFSET);
const BYTE_OFFSET: usize = index_of(KEYS, key::BYTE_OFFSET);
const PLACEMENT_FRAGMENT_ID: usize = index_of(KEYS, key::PLACEMENT_FRAGMENT_ID);

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
        let seen = cursor.members(KEYS, order, |c, key| {
            match key {
                FRAGMENT_ID => view.fragment_id = c.non_empty()?,
                TENSOR_ID => view.tensor_id = c.string()?,
                GLOBAL_SHAPE => spelling[0] = Some(c.raw_simple()?),
                GLOBAL_OFFSET => c.u64s_into(MIN_OFFSET, global_offset)?,
                LOCAL_SHAPE => c.u64s_into(MIN_EXTENT, local_shape)?,
                DTYPE => spelling[1] = Some(c.raw_simple()?),
                ITEMSIZE => spelling[2] = Some(c.raw_simple()?),
                PARTITION_DIM => spelling[3] = Some(c.raw_simple()?),
                SHARD_DIMS => spelling[4] = Some(c.raw_simple()?),
                LAYER_ID => spelling[5] = Some(c.raw_simple()?),
                EXPERT_ID => spelling[6] = Some(c.raw_simple()?),
                LAYOUT_FINGERPRINT => spelling[7] = Some(c.raw_simple()?),
                ADDRESS => view.address = c.u64_min(MIN_ADDRESS)?,
                NBYTES => view.nbytes = c.u64_min(MIN_NBYTES)?,
                WORKER_ID => view.worker_id = c.non_empty()?,
                ENDPOINT => view.endpoint = c.non_empty()?,
                DEVICE => view.device = c.non_empty()?,
                RANK => view.rank = rank(c, rank_order)?,
                LEASE_GENERATION => view.lease_generation = c.u64()?,
                ALIASES => {
                    if !c.null() {
                        view.aliases = aliases(c)?;
                    }
                }
                IS_CONTIGUOUS => c.literal(b"true").then_some(())?,
                STRIDE => c.u64s_into(MIN_STRIDE, stride)?,
                STORAGE_OFFSET | BYTE_OFFSET => (c.u64()? == 0).then_some(())?,
                PLACEMENT_FRAGMENT_ID => {
                    if !c.null() {
                        view.placement_fragment_id = Some(c.non_empty()?);
                    }
                }
                _ => return None,
            }
            Some(())
        })?;
        if seen & REQUIRED != REQUIRED
            || !is_canonical_stride(local_shape, stride)
            || end_address(view.address, view.nbytes).is_none()
        {
            return None;
        }
        view.tensor = descriptors.merge(view.tensor_id, &spelling)?;
        Some(view)
    }
}
