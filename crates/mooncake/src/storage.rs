//! [`MooncakeStorageManifest`]: Mooncake Store's `WeightManifest` of `StoredFragment`s
//! (`mooncake.reshard.weight.storage_manifest`), read strictly, validated as upstream
//! validates it, and written back byte for byte (raw UTF-8, unlike the placement).

use std::collections::{HashMap, HashSet};

use crate::wire;
use crate::wire::key;
use weight_manifest::document::{self, Document};
use weight_manifest::error::{Code, Error, Result};
use weight_manifest::limits::Limits;
use weight_manifest::path::Path;
use weight_manifest::value::Value;
use weight_manifest::Options;

use crate::boxes::{over_budget, overlapping_pair, volume, BoxRef};
use crate::descriptor::{read_tensors, Order};
use crate::fields::{exact, int, member, seq, string, Boxed, Members};
use crate::fragments::check_geometry;
use crate::model::Tensor;

/// One stored box of a tensor: where its bytes sit in a Store object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredFragment {
    /// The fragment's id, unique in the manifest.
    pub fragment_id: String,
    /// The tensor.
    pub tensor_id: String,
    /// Offset of the box.
    pub global_offset: Vec<u64>,
    /// Extents of the box.
    pub local_shape: Vec<u64>,
    /// The Store object holding the bytes, under `{group_id}/payload/`.
    pub object_key: String,
    /// Byte offset of the box in the object.
    pub object_offset: u64,
    /// Bytes of the box.
    pub nbytes: u64,
    /// Empty, or at least two tensor ids including the own one, sorted.
    pub aliases: Vec<String>,
}

/// A validated Mooncake Store manifest (upstream's `WeightManifest`): tensors and
/// fragments keep their written order, which is part of its text and digest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MooncakeStorageManifest {
    /// The Store namespace.
    pub namespace: String,
    /// The resource (model) id.
    pub resource_id: String,
    /// The revision.
    pub revision: String,
    /// The weight generation.
    pub weight_generation: u64,
    /// The manifest group.
    pub group_id: String,
    /// `{group_id}/manifest`.
    pub manifest_key: String,
    /// The tensors, as written.
    pub tensors: Vec<Tensor>,
    /// The fragments, as written.
    pub fragments: Vec<StoredFragment>,
    /// Creation time, as written.
    pub created_at: String,
}

const TOP: &[&str] = wire::MooncakeStorageManifest::FIELDS;
const FRAGMENT: &[&str] = wire::MooncakeStoredFragment::FIELDS;

fn read_fragment(value: &Value<'_>, path: &Path<'_>) -> Result<StoredFragment> {
    let obj = exact(value, FRAGMENT, "stored fragment", path)?;
    let fields = Members::new(obj, "stored fragment ", path);
    let fragment_id = fields.string(key::FRAGMENT_ID)?;
    let Boxed {
        tensor_id,
        global_offset,
        local_shape,
    } = fields.boxed()?;
    let object_key = fields.string(key::OBJECT_KEY)?;
    let object_offset = fields.int(key::OBJECT_OFFSET, 0)?;
    let nbytes = fields.int(key::NBYTES, 1)?;
    let aliases = fields.aliases("stored fragment alias", &tensor_id)?;
    Ok(StoredFragment {
        fragment_id,
        tensor_id,
        global_offset,
        local_shape,
        object_key,
        object_offset,
        nbytes,
        aliases,
    })
}

/// Mooncake Store's manifest (`WeightManifest`) as a document kind of the core's reading
/// pipeline.
struct MooncakeStorageDocument;

impl Document for MooncakeStorageDocument {
    type Output = MooncakeStorageManifest;
    const LABEL: &'static str = "weight manifest";

    fn from_tree(tree: &Value<'_>, options: &Options<'_>) -> Result<MooncakeStorageManifest> {
        let manifest = MooncakeStorageManifest::read(tree, &options.limits)?;
        manifest.check(options.limits.max_geometry_work)?;
        Ok(manifest)
    }
}

fn fragment_pointer(i: usize) -> String {
    format!("/fragments/{i}")
}

fn rule(code: Code, message: impl Into<String>, pointer: String) -> Error {
    Error::new(code, message).with_pointer(Some(pointer))
}

impl MooncakeStorageManifest {
    /// Reads and validates a manifest's text (`WeightManifest.from_json`) under
    /// `options.limits`, through the core's reading pipeline.
    ///
    /// # Errors
    ///
    /// The reader's codes, the value checks' and the `mooncake_storage_*` rule codes (with
    /// `duplicate_tensor_id`, `duplicate_fragment_id`, `unknown_tensor_id` and the geometry
    /// codes for the rules this project shares), each with a message and a JSON pointer.
    pub fn from_json(text: &[u8], options: &Options<'_>) -> Result<Self> {
        document::read::<MooncakeStorageDocument>(text, options)
    }

    /// Validates a document tree read by [`weight_manifest::reader`], under
    /// `options.limits`.
    ///
    /// # Errors
    ///
    /// As [`MooncakeStorageManifest::from_json`], without the reader's.
    pub fn from_value(tree: &Value<'_>, options: &Options<'_>) -> Result<Self> {
        MooncakeStorageDocument::from_tree(tree, options)
    }

    /// The members, each checked as upstream reads it, before the manifest's rules.
    fn read(tree: &Value<'_>, limits: &Limits) -> Result<Self> {
        let root = Path::Root;
        let obj = exact(tree, TOP, MooncakeStorageDocument::LABEL, &root)?;
        if !matches!(member(obj, key::RESOURCE_KIND), Value::Str(s) if s == "model_weight") {
            return Err(Error::at(
                Code::MooncakeResourceKind,
                "weight manifest resource_kind must be model_weight",
                &root.key(key::RESOURCE_KIND),
            ));
        }
        let tensors = read_tensors(
            obj,
            "WeightManifest tensors",
            |_| "tensor descriptor".to_owned(),
            Order::Storage,
            &root,
            limits,
        )?;
        let fragments_path = root.key(key::FRAGMENTS);
        let items = seq(
            member(obj, key::FRAGMENTS),
            "WeightManifest fragments",
            &fragments_path,
        )?;
        limits.check_fragments(items.len(), &fragments_path)?;
        let mut fragments = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            fragments.push(read_fragment(item, &fragments_path.index(i))?);
        }
        let str_of = |k: &'static str| string(member(obj, k), k, &root.key(k));
        let namespace = str_of(key::NAMESPACE)?;
        let resource_id = str_of(key::RESOURCE_ID)?;
        let revision = str_of(key::REVISION)?;
        let weight_generation = int(
            member(obj, key::WEIGHT_GENERATION),
            key::WEIGHT_GENERATION,
            0,
            &root.key(key::WEIGHT_GENERATION),
        )?;
        let group_id = str_of(key::GROUP_ID)?;
        let manifest_key = str_of(key::MANIFEST_KEY)?;
        let created_at = str_of(key::CREATED_AT)?;
        let manifest = MooncakeStorageManifest {
            namespace,
            resource_id,
            revision,
            weight_generation,
            group_id,
            manifest_key,
            tensors,
            fragments,
            created_at,
        };
        Ok(manifest)
    }

    /// Checks a manifest built from values as upstream's `WeightManifest` checks itself.
    ///
    /// # Errors
    ///
    /// As [`MooncakeStorageManifest::from_json`]; pointers refer to the manifest's text.
    pub fn validate(&self) -> Result<()> {
        self.check(Limits::default().max_geometry_work)
    }

    /// The rules, in upstream's order, with `work` comparisons per box for overlaps.
    fn check(&self, work: u64) -> Result<()> {
        for (k, v) in [
            (key::NAMESPACE, &self.namespace),
            (key::RESOURCE_ID, &self.resource_id),
            (key::REVISION, &self.revision),
            (key::GROUP_ID, &self.group_id),
            (key::MANIFEST_KEY, &self.manifest_key),
            (key::CREATED_AT, &self.created_at),
        ] {
            if v.is_empty() {
                return Err(weight_manifest::rules::values::empty_string(
                    k,
                    &Path::Root.key(k),
                ));
            }
        }
        if self.manifest_key != format!("{}/manifest", self.group_id) {
            return Err(rule(
                Code::MooncakeStorageKey,
                "manifest_key does not belong to manifest group",
                "/manifest_key".to_owned(),
            ));
        }
        let prefix = format!("{}/payload/", self.group_id);
        if let Some(i) = self
            .fragments
            .iter()
            .position(|f| !f.object_key.starts_with(&prefix))
        {
            return Err(rule(
                Code::MooncakeStorageKey,
                "payload object_key does not belong to manifest group",
                format!("{}/object_key", fragment_pointer(i)),
            ));
        }
        let by_id = self.check_fragments()?;
        self.check_aliases(&by_id)?;
        self.check_coverage(work)?;
        self.check_object_ranges()
    }

    /// Distinct tensor and fragment ids, known tensors, each fragment's geometry.
    fn check_fragments(&self) -> Result<HashMap<&str, usize>> {
        let mut by_id = HashMap::with_capacity(self.tensors.len());
        for (i, t) in self.tensors.iter().enumerate() {
            if by_id.insert(t.tensor_id.as_str(), i).is_some() {
                return Err(rule(
                    Code::DuplicateTensorId,
                    format!("duplicate tensor_id: {}", t.tensor_id),
                    format!("/tensors/{i}"),
                ));
            }
        }
        let mut ids = HashSet::with_capacity(self.fragments.len());
        for (i, f) in self.fragments.iter().enumerate() {
            let ptr = fragment_pointer(i);
            if !ids.insert(f.fragment_id.as_str()) {
                return Err(rule(
                    Code::DuplicateFragmentId,
                    format!("duplicate fragment_id: {}", f.fragment_id),
                    format!("{ptr}/fragment_id"),
                ));
            }
            let Some(t) = by_id
                .get(f.tensor_id.as_str())
                .and_then(|&t| self.tensors.get(t))
            else {
                return Err(rule(
                    Code::UnknownTensorId,
                    format!("unknown tensor_id: {}", f.tensor_id),
                    format!("{ptr}/tensor_id"),
                ));
            };
            check_geometry(
                t,
                &f.fragment_id,
                &f.global_offset,
                &f.local_shape,
                f.nbytes,
                &ptr,
            )?;
        }
        Ok(by_id)
    }

    /// Every alias group names known tensors, is complete for each box it declares, and
    /// joins tensors of one descriptor (all but the name).
    fn check_aliases(&self, by_id: &HashMap<&str, usize>) -> Result<()> {
        type Key<'a> = (&'a [String], &'a [u64], &'a [u64], u64);
        let mut groups: Vec<(Key<'_>, Vec<usize>)> = Vec::new();
        let mut slot: HashMap<Key<'_>, usize> = HashMap::new();
        for (i, f) in self.fragments.iter().enumerate() {
            if f.aliases.is_empty() {
                continue;
            }
            if let Some(name) = f.aliases.iter().find(|a| !by_id.contains_key(a.as_str())) {
                return Err(rule(
                    Code::MooncakeStorageAlias,
                    format!("stored alias references unknown tensor: {name}"),
                    format!("{}/aliases", fragment_pointer(i)),
                ));
            }
            let key = (
                f.aliases.as_slice(),
                f.global_offset.as_slice(),
                f.local_shape.as_slice(),
                f.nbytes,
            );
            let g = *slot.entry(key).or_insert_with(|| {
                groups.push((key, Vec::new()));
                groups.len() - 1
            });
            if let Some(group) = groups.get_mut(g) {
                group.1.push(i);
            }
        }
        for ((aliases, ..), members) in &groups {
            let names: HashSet<&str> = members
                .iter()
                .map(|&i| self.fragments[i].tensor_id.as_str())
                .collect();
            let wanted: HashSet<&str> = aliases.iter().map(String::as_str).collect();
            let at = format!("{}/aliases", fragment_pointer(members[0]));
            if names != wanted {
                return Err(rule(
                    Code::MooncakeStorageAlias,
                    "stored alias group is incomplete for fragment geometry",
                    at,
                ));
            }
            let descriptor = |name: &str| {
                by_id
                    .get(name)
                    .and_then(|&t| self.tensors.get(t))
                    .map(Tensor::alias_descriptor)
            };
            let first = descriptor(aliases[0].as_str());
            if aliases.iter().any(|a| descriptor(a) != first) {
                return Err(rule(
                    Code::MooncakeStorageAlias,
                    "stored alias tensor descriptors differ",
                    at,
                ));
            }
        }
        Ok(())
    }

    /// No two fragments of a tensor with one box; each tensor covered exactly once.
    fn check_coverage(&self, work: u64) -> Result<()> {
        let mut seen = HashSet::with_capacity(self.fragments.len());
        let mut by_tensor: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, f) in self.fragments.iter().enumerate() {
            if !seen.insert((
                f.tensor_id.as_str(),
                f.global_offset.as_slice(),
                f.local_shape.as_slice(),
            )) {
                return Err(rule(
                    Code::MooncakeStorageDuplicateGeometry,
                    format!("duplicate fragment geometry: {}", f.tensor_id),
                    fragment_pointer(i),
                ));
            }
            by_tensor.entry(f.tensor_id.as_str()).or_default().push(i);
        }
        for (i, t) in self.tensors.iter().enumerate() {
            let members = by_tensor
                .get(t.tensor_id.as_str())
                .map(Vec::as_slice)
                .unwrap_or_default();
            let boxes: Vec<BoxRef<'_>> = members
                .iter()
                .map(|&k| {
                    (
                        self.fragments[k].global_offset.as_slice(),
                        self.fragments[k].local_shape.as_slice(),
                    )
                })
                .collect();
            let total = boxes
                .iter()
                .try_fold(0u128, |acc, b| volume(b.1).and_then(|v| acc.checked_add(v)));
            let overlap = overlapping_pair(&boxes, work)
                .map_err(|_| over_budget(work, format!("/tensors/{i}")))?;
            if total.is_none() || total != volume(&t.global_shape) || overlap.is_some() {
                return Err(rule(
                    Code::MooncakeStorageNotCovered,
                    format!("tensor is not fully covered: {}", t.tensor_id),
                    format!("/tensors/{i}"),
                ));
            }
        }
        Ok(())
    }

    /// No two fragments overlap in one stored object.
    fn check_object_ranges(&self) -> Result<()> {
        let mut by_object: Vec<(&str, Vec<usize>)> = Vec::new();
        let mut slot: HashMap<&str, usize> = HashMap::new();
        for (i, f) in self.fragments.iter().enumerate() {
            let g = *slot.entry(f.object_key.as_str()).or_insert_with(|| {
                by_object.push((f.object_key.as_str(), Vec::new()));
                by_object.len() - 1
            });
            if let Some(group) = by_object.get_mut(g) {
                group.1.push(i);
            }
        }
        for (key, mut members) in by_object {
            members.sort_by_key(|&i| self.fragments[i].object_offset);
            for w in members.windows(2) {
                let (a, b) = (&self.fragments[w[0]], &self.fragments[w[1]]);
                if u128::from(b.object_offset) < u128::from(a.object_offset) + u128::from(a.nbytes)
                {
                    return Err(rule(
                        Code::MooncakeStorageObjectOverlap,
                        format!(
                            "stored fragment object ranges overlap: {} and {} in {key}",
                            a.fragment_id, b.fragment_id
                        ),
                        fragment_pointer(w[1]),
                    ));
                }
            }
        }
        Ok(())
    }
}
