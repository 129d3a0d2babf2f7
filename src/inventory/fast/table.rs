//! The rules of §8.4 over a compact table of a runtime inventory's records.
//!
//! Each record is kept only as what the rules read: a 48-byte row (rank, byte range, box,
//! lease), its descriptor index, its id's 64-bit hash and its address space, about 80 bytes where
//! a `RuntimeFragment` takes about 500 in seven heap allocations. Built while the text is
//! read, the table answers "does every rule pass?" in passes over contiguous memory; a
//! "no" never decides an error (equal id hashes, for one, only say "maybe"): the caller
//! then runs §8.4 itself, which names the failure.

use super::record::{RecordReader, RecordView};
use crate::rules::fragment_set::fast::{all_distinct, boxes_pass, FragmentBox, Geometries};
use crate::rules::physical::alias_pair::{exact_alias_pair, AliasCandidate};
use crate::rules::physical::AddressSpaces;
use crate::util::fxhash::hash_str;
use crate::wire::{ParallelRank, TensorDescriptor};

/// What the rules read of one record (48 bytes).
struct Row {
    address: u64,
    nbytes: u64,
    /// dp, ep, pp, tp (a coordinate past u32 leaves the decision to §8.4).
    rank: [u32; 4],
    /// Where its global_offset starts in the shared array; its local_shape follows.
    boxes: u32,
    ndim: u32,
    /// 1 + its index in the alias lists, or 0: no aliases.
    aliases: u32,
    /// Its index in the lease generations.
    lease: u32,
}

/// The records read so far.
pub(super) struct Table<'a> {
    rows: Vec<Row>,
    /// The descriptor index of each row (a separate list: the fragment-set rules take it).
    tensor_of: Vec<u32>,
    /// The 64-bit hash of each row's fragment_id (F1, sorted at the end: 8 bytes a record,
    /// where a hash set would take 34 and a cache miss per insert).
    ids: Vec<u64>,
    /// Each row's global_offset then local_shape.
    boxes: Vec<u64>,
    alias_lists: Vec<Vec<String>>,
    /// The lease generations, one entry for each run of rows that share one (usually a
    /// single entry).
    leases: Vec<u64>,
    /// The rows of each address space (worker_id, device).
    spaces: AddressSpaces<'a>,
}

impl<'a> Table<'a> {
    /// An empty table with room for `records` two-dimensional records.
    pub(super) fn with_capacity(records: usize) -> Self {
        Table {
            rows: Vec::with_capacity(records),
            tensor_of: Vec::with_capacity(records),
            ids: Vec::with_capacity(records),
            boxes: Vec::with_capacity(records.saturating_mul(4)),
            alias_lists: Vec::new(),
            leases: Vec::new(),
            spaces: AddressSpaces::default(),
        }
    }

    /// Adds a record (its arrays in `reader`). `None`: a rule already fails, or a value
    /// does not fit the table; §8.4 decides.
    pub(super) fn push(&mut self, record: &RecordView<'a>, reader: &RecordReader) -> Option<()> {
        let ndim = reader.global_offset.len();
        if reader.local_shape.len() != ndim {
            return None; // F4
        }
        let ParallelRank { dp, ep, pp, tp } = record.rank;
        let [Ok(dp), Ok(ep), Ok(pp), Ok(tp)] = [dp, ep, pp, tp].map(u32::try_from) else {
            return None;
        };
        let boxes = u32::try_from(self.boxes.len()).ok()?;
        let aliases = if record.aliases.is_empty() {
            0
        } else {
            self.alias_lists.push(record.aliases.clone());
            u32::try_from(self.alias_lists.len()).ok()?
        };
        if self.leases.last() != Some(&record.lease_generation) {
            self.leases.push(record.lease_generation);
        }
        let lease = u32::try_from(self.leases.len().checked_sub(1)?).ok()?;
        let row = Row {
            address: record.address,
            nbytes: record.nbytes,
            rank: [dp, ep, pp, tp],
            boxes,
            ndim: u32::try_from(ndim).ok()?,
            aliases,
            lease,
        };
        self.tensor_of.push(u32::try_from(record.tensor).ok()?);
        self.boxes.extend_from_slice(&reader.global_offset);
        self.boxes.extend_from_slice(&reader.local_shape);
        self.ids.push(hash_str(record.fragment_id));

        self.spaces
            .add(record.worker_id, record.device, self.rows.len());
        self.rows.push(row);
        Some(())
    }

    /// The number of records.
    pub(super) fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether the fragment-set rules (§8.2, §8.3) and the physical rule (§8.5) all pass,
    /// `tensors` being the descriptors the rows' indices refer to. T1 and F3 hold by
    /// construction (one descriptor per tensor_id; each row's tensor is its descriptor).
    pub(super) fn passes(&mut self, tensors: &[TensorDescriptor], per_box: u64) -> bool {
        if !all_distinct(&mut self.ids) {
            return false;
        }
        let fragment = |i: usize| {
            let row = &self.rows[i];
            FragmentBox {
                rank: row.rank.map(u64::from),
                global_offset: self.global_offset(row),
                local_shape: self.local_shape(row),
                nbytes: row.nbytes,
            }
        };
        let Some(geometry) = Geometries::of(tensors) else {
            return false;
        };
        if !boxes_pass(&geometry, &self.tensor_of, &fragment, per_box) {
            return false;
        }
        // The sweep sorts the spaces while the rows are read: take them out of `self`.
        let mut spaces = std::mem::take(&mut self.spaces);
        let overlap = spaces.first_overlap(
            |i| (self.rows[i].address, self.rows[i].nbytes),
            |p, c| self.exact_alias_pair(tensors, p, c),
        );
        self.spaces = spaces;
        overlap.is_none()
    }

    fn global_offset(&self, row: &Row) -> &[u64] {
        let start = row.boxes as usize;
        &self.boxes[start..start + row.ndim as usize]
    }

    fn local_shape(&self, row: &Row) -> &[u64] {
        let start = row.boxes as usize + row.ndim as usize;
        &self.boxes[start..start + row.ndim as usize]
    }

    fn aliases(&self, row: &Row) -> &[String] {
        match row.aliases.checked_sub(1) {
            Some(index) => &self.alias_lists[index as usize],
            None => &[],
        }
    }

    /// What §8.5's exact alias pair reads of row `i`.
    fn alias_candidate<'t>(
        &'t self,
        tensors: &'t [TensorDescriptor],
        i: usize,
    ) -> AliasCandidate<'t> {
        let row = &self.rows[i];
        AliasCandidate {
            address: row.address,
            nbytes: row.nbytes,
            lease_generation: self.leases[row.lease as usize],
            aliases: self.aliases(row),
            global_offset: self.global_offset(row),
            local_shape: self.local_shape(row),
            descriptor: &tensors[self.tensor_of[i] as usize],
        }
    }

    /// §8.5's exact alias pair ([`exact_alias_pair`]) of rows `p` and `c`.
    fn exact_alias_pair(&self, tensors: &[TensorDescriptor], p: usize, c: usize) -> bool {
        exact_alias_pair(
            &self.alias_candidate(tensors, p),
            &self.alias_candidate(tensors, c),
        )
    }
}
