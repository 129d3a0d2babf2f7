//! Mooncake's per-participant runtime binding (`mooncake.reshard.weight.runtime.
//! WeightRuntimeBindingManifest` with its `RuntimeBindingFragment`s): where one
//! participant's fragments live, with strides and storage bounds, checked as upstream's
//! constructors check them.
//!
//! Upstream has no JSON form of it. The JSON form here is **this project's**: one object
//! whose members are exactly the dataclass fields (plus `"resource_kind":"model_weight"`),
//! fragments objects of exactly theirs, written canonically (sorted keys, no whitespace,
//! §5); a file holds a JSON array of them, one per participant (docs/contract.md §20.10).

use serde::Serialize;

use weight_manifest::document::{self, Document};
use weight_manifest::error::{Code, Error, Result};
use weight_manifest::path::Path;
use weight_manifest::value::Value;
use weight_manifest::Options;

use crate::fields::{exact, member, seq, Members};
use crate::wire::key;
use crate::wire::{MooncakeRuntimeBinding, MooncakeRuntimeBindingFragment};

/// One fragment's physical view (upstream's `RuntimeBindingFragment`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MooncakeBindingFragment {
    /// Address of the view's first byte (at least 1).
    pub address: u64,
    /// Device holding the memory.
    pub device: String,
    /// Where to reach the worker.
    pub endpoint: String,
    /// Runtime-side id, unique in the binding.
    pub fragment_id: String,
    /// Bytes per element.
    pub itemsize: u64,
    /// Extents of the view.
    pub local_shape: Vec<u64>,
    /// Bytes of the view.
    pub nbytes: u64,
    /// The placement fragment bound here.
    pub placement_fragment_id: String,
    /// The allocation the view lies in: its first byte.
    pub storage_address: u64,
    /// The allocation's size.
    pub storage_nbytes: u64,
    /// The view's offset in the allocation (`address - storage_address`).
    pub storage_offset_bytes: u64,
    /// Byte stride per dimension (a singleton dimension's normalized to the canonical).
    pub strides_bytes: Vec<u64>,
    /// Worker process holding the memory.
    pub worker_id: String,
}

/// One participant's binding (upstream's `WeightRuntimeBindingManifest`); fragments
/// sorted by placement_fragment_id.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MooncakeBinding {
    /// The views, one per placement fragment of the participant.
    pub fragments: Vec<MooncakeBindingFragment>,
    /// The lease generation.
    pub generation: u64,
    /// The running instance.
    pub instance_id: String,
    /// The lease.
    pub lease_id: String,
    /// The participant whose fragments these are.
    pub participant_id: String,
    /// The Mooncake placement's digest (64 lowercase hex digits).
    pub placement_digest: String,
    /// The Mooncake placement's id.
    pub placement_id: String,
    /// The model.
    pub resource_id: String,
    /// Always `model_weight`.
    pub resource_kind: String,
    /// The revision.
    pub revision: String,
}

const KEYS: &[&str] = MooncakeRuntimeBinding::FIELDS;
const FRAGMENT_KEYS: &[&str] = MooncakeRuntimeBindingFragment::FIELDS;

fn invalid(message: impl Into<String>, path: &Path<'_>) -> Error {
    Error::at(Code::MooncakeBindingInvalid, message, path)
}

/// The canonical strides of a contiguous view: `itemsize` times the product of the later
/// extents, or `None` when one does not fit in a u64.
pub(crate) fn canonical_strides(shape: &[u64], itemsize: u64) -> Option<Vec<u64>> {
    let mut strides = vec![0u64; shape.len()];
    let mut running = itemsize;
    for (slot, &extent) in strides.iter_mut().zip(shape).rev() {
        *slot = running;
        running = running.checked_mul(extent)?;
    }
    Some(strides)
}

/// `address .. address + nbytes` with address and nbytes at least 1, the end in a u64.
fn check_range(address: u64, nbytes: u64, path: &Path<'_>) -> Result<()> {
    if address.checked_add(nbytes).is_none() {
        return Err(Error::at(
            Code::AddressRangeOverflow,
            "address range must fit in an unsigned 64-bit integer",
            path,
        ));
    }
    Ok(())
}

impl MooncakeBindingFragment {
    /// The checks of upstream's constructor, in its order, on a fragment at `path`;
    /// returns it with singleton strides normalized.
    ///
    /// # Errors
    ///
    /// `address_range_overflow`, `stride_rank_mismatch`, or `mooncake_binding_invalid`
    /// (a zero stride on a longer dimension, storage bounds the view does not fit).
    pub(crate) fn checked(mut self, path: &Path<'_>) -> Result<Self> {
        check_range(self.address, self.nbytes, path)?;
        if self.strides_bytes.len() != self.local_shape.len() {
            return Err(Error::at(
                Code::StrideRankMismatch,
                "runtime stride rank differs from local_shape",
                &path.key(key::STRIDES_BYTES),
            ));
        }
        let zero = |(&e, &s): (&u64, &u64)| e > 1 && s == 0;
        if self.local_shape.iter().zip(&self.strides_bytes).any(zero) {
            return Err(invalid(
                "runtime stride must be positive for non-singleton dimensions",
                &path.key(key::STRIDES_BYTES),
            ));
        }
        if let Some(canonical) = canonical_strides(&self.local_shape, self.itemsize) {
            for ((s, &e), c) in self
                .strides_bytes
                .iter_mut()
                .zip(&self.local_shape)
                .zip(canonical)
            {
                if e == 1 {
                    *s = c;
                }
            }
        }
        check_range(self.storage_address, self.storage_nbytes, path)?;
        let start = self.storage_address.checked_add(self.storage_offset_bytes);
        if start.is_none() {
            return Err(invalid(
                "normalized runtime address must fit in 64 bits",
                &path.key(key::STORAGE_OFFSET_BYTES),
            ));
        }
        if start != Some(self.address) {
            return Err(invalid(
                "runtime address must equal storage_address plus storage_offset_bytes",
                &path.key(key::ADDRESS),
            ));
        }
        let room = self.storage_nbytes.checked_sub(self.nbytes);
        if room.is_none_or(|room| self.storage_offset_bytes > room) {
            return Err(invalid(
                "runtime view exceeds storage allocation bounds",
                &path.key(key::STORAGE_NBYTES),
            ));
        }
        Ok(self)
    }
}

impl MooncakeBinding {
    /// The checks of upstream's constructor on a binding at `path`: digest format,
    /// fragments sorted by placement_fragment_id, no placement fragment twice, no
    /// fragment_id twice.
    ///
    /// # Errors
    ///
    /// `digest_format`, `duplicate_binding_fragment`, `duplicate_runtime_fragment_id`.
    pub(crate) fn checked(mut self, path: &Path<'_>) -> Result<Self> {
        let hex = |c: u8| c.is_ascii_digit() || (b'a'..=b'f').contains(&c);
        if self.placement_digest.len() != 64 || !self.placement_digest.bytes().all(hex) {
            return Err(Error::at(
                Code::DigestFormat,
                "placement_digest must be a lowercase SHA-256 digest",
                &path.key(key::PLACEMENT_DIGEST),
            ));
        }
        self.fragments
            .sort_by(|a, b| a.placement_fragment_id.cmp(&b.placement_fragment_id));
        if self
            .fragments
            .windows(2)
            .any(|w| w[0].placement_fragment_id == w[1].placement_fragment_id)
        {
            return Err(Error::at(
                Code::DuplicateBindingFragment,
                "duplicate placement fragment in runtime binding",
                &path.key(key::FRAGMENTS),
            ));
        }
        let mut ids: Vec<&str> = self
            .fragments
            .iter()
            .map(|f| f.fragment_id.as_str())
            .collect();
        ids.sort_unstable();
        if ids.windows(2).any(|w| w[0] == w[1]) {
            return Err(Error::at(
                Code::DuplicateRuntimeFragmentId,
                "duplicate runtime fragment_id in runtime binding",
                &path.key(key::FRAGMENTS),
            ));
        }
        Ok(self)
    }

    /// This project's JSON form of one binding, canonical (§5).
    pub fn to_json(&self) -> String {
        weight_manifest::canonical::to_string(self).unwrap_or_default()
    }

    /// Reads this project's JSON form of a list of bindings (an array, one per
    /// participant), each checked as upstream's constructors check it.
    ///
    /// # Errors
    ///
    /// The reader's codes, the value checks' (`fields_mismatch`, `empty_string`, ...),
    /// `mooncake_resource_kind`, and those of the constructors' checks, each at the value.
    pub fn list_from_json(text: &[u8], options: &Options<'_>) -> Result<Vec<MooncakeBinding>> {
        document::read::<MooncakeBindingsDocument>(text, options)
    }

    /// This project's JSON form of a list of bindings: a canonical array.
    pub fn list_to_json(bindings: &[MooncakeBinding]) -> String {
        weight_manifest::canonical::to_string(bindings).unwrap_or_default()
    }
}

/// This project's JSON form of Mooncake's runtime bindings (an array) as a document kind
/// of the core's reading pipeline.
struct MooncakeBindingsDocument;

impl Document for MooncakeBindingsDocument {
    type Output = Vec<MooncakeBinding>;
    const LABEL: &'static str = "runtime bindings";

    fn from_tree(tree: &Value<'_>, _: &Options<'_>) -> Result<Vec<MooncakeBinding>> {
        let items = seq(tree, Self::LABEL, &Path::Root)?;
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            out.push(read_binding(item, &Path::Root.index(i))?);
        }
        Ok(out)
    }
}

fn read_binding(value: &Value<'_>, path: &Path<'_>) -> Result<MooncakeBinding> {
    let obj = exact(value, KEYS, "runtime binding", path)?;
    let fields = Members::new(obj, "", path);
    let s = |k: &'static str| fields.string(k);
    let kind = s(key::RESOURCE_KIND)?;
    if kind != "model_weight" {
        return Err(Error::at(
            Code::MooncakeResourceKind,
            "runtime binding resource_kind must be model_weight",
            &path.key(key::RESOURCE_KIND),
        ));
    }
    let list_path = path.key(key::FRAGMENTS);
    let items = seq(
        member(obj, key::FRAGMENTS),
        "runtime binding fragments",
        &list_path,
    )?;
    let mut fragments = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        fragments.push(read_fragment(item, &list_path.index(i))?);
    }
    MooncakeBinding {
        resource_id: s(key::RESOURCE_ID)?,
        placement_id: s(key::PLACEMENT_ID)?,
        placement_digest: s(key::PLACEMENT_DIGEST)?,
        instance_id: s(key::INSTANCE_ID)?,
        generation: fields.int(key::GENERATION, 0)?,
        lease_id: s(key::LEASE_ID)?,
        revision: s(key::REVISION)?,
        participant_id: s(key::PARTICIPANT_ID)?,
        resource_kind: kind,
        fragments,
    }
    .checked(path)
}

fn read_fragment(value: &Value<'_>, path: &Path<'_>) -> Result<MooncakeBindingFragment> {
    let obj = exact(value, FRAGMENT_KEYS, "runtime binding fragment", path)?;
    let fields = Members::new(obj, "", path);
    let s = |k: &'static str| fields.string(k);
    let n = |k: &'static str, min: u64| fields.int(k, min);
    let list = |k: &'static str, min: u64| fields.ints(k, min);
    MooncakeBindingFragment {
        placement_fragment_id: s(key::PLACEMENT_FRAGMENT_ID)?,
        fragment_id: s(key::FRAGMENT_ID)?,
        worker_id: s(key::WORKER_ID)?,
        endpoint: s(key::ENDPOINT)?,
        device: s(key::DEVICE)?,
        address: n(key::ADDRESS, 1)?,
        nbytes: n(key::NBYTES, 1)?,
        itemsize: n(key::ITEMSIZE, 1)?,
        local_shape: list(key::LOCAL_SHAPE, 1)?,
        strides_bytes: list(key::STRIDES_BYTES, 0)?,
        storage_address: n(key::STORAGE_ADDRESS, 1)?,
        storage_nbytes: n(key::STORAGE_NBYTES, 1)?,
        storage_offset_bytes: n(key::STORAGE_OFFSET_BYTES, 0)?,
    }
    .checked(path)
}
