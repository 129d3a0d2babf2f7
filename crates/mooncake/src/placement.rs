//! [`MooncakePlacement`]: a validated Mooncake `WeightPlacementManifest`, built from its
//! wire text or from typed fragments, written back byte for byte.

use weight_manifest::document::{self, Document};
use weight_manifest::error::{Code, Error, Result};
use weight_manifest::limits::Limits;
use weight_manifest::path::Path;
use weight_manifest::reader;
use weight_manifest::util::fxhash::{FxHashMap as HashMap, FxHashSet as HashSet};
use weight_manifest::value::Value;
use weight_manifest::Options;

use crate::cover::check_cover;
use crate::draft::{Draft, DraftPart};
use crate::fragments::{check_all, check_part, Placed};
use crate::model::{Fragment, MooncakePlacement, Part, Tensor, Topology};
use crate::read::read_placement;
use crate::topology::check_topology;
use crate::wire::key;
use crate::write;

/// The members of a placement built from values (upstream's
/// `WeightPlacementManifest.from_fragments`): fragments are grouped by the participant of
/// their rank.
#[derive(Clone, Debug)]
pub struct MooncakeInput {
    /// The resource (model) id.
    pub resource_id: String,
    /// The revision.
    pub revision: String,
    /// The weight generation.
    pub weight_generation: u64,
    /// The placement set id.
    pub placement_set_id: String,
    /// The topology (participants in any order).
    pub topology: Topology,
    /// The tensors, each placed by some fragment.
    pub tensors: Vec<Tensor>,
    /// The fragments, each on a rank of a participant.
    pub fragments: Vec<Fragment>,
}

impl MooncakePlacement {
    /// Reads and validates Mooncake's wire text (`weight_placement_from_json`) under
    /// `options.limits`, through the core's reading pipeline: the one-pass reader when it
    /// accepts, else the document tree, which decides every rejection.
    ///
    /// # Errors
    ///
    /// The reader's codes (`invalid_json`, `duplicate_key`, `non_finite_number`,
    /// `limit_exceeded`), the value checks' and the `mooncake_*` rule codes, each with a
    /// message and a JSON pointer into the text. A document of another kind (this
    /// project's placement, say) is `fields_mismatch` naming the keys missing and
    /// unexpected and the command that reads it.
    pub fn from_json(text: &[u8], options: &Options<'_>) -> Result<Self> {
        document::read::<MooncakePlacementDocument>(text, options)
    }

    /// The one-pass reader alone: the placement when it reads and accepts the text,
    /// `None` when it leaves the text to the tree reader (anything it does not read, and
    /// every rejection). Its result is always the tree reader's
    /// ([`MooncakePlacement::from_json_general`]); [`MooncakePlacement::from_json`] tries
    /// it first.
    pub fn from_json_one_pass(text: &[u8], options: &Options<'_>) -> Option<Self> {
        options.limits.check_document_bytes(text.len()).ok()?;
        MooncakePlacementDocument::fast(std::str::from_utf8(text).ok()?, options)
    }

    /// Reads the text through the document tree only (never the one-pass reader): the
    /// reader that decides every rejection, and the reference the one-pass reader is
    /// tested against.
    ///
    /// # Errors
    ///
    /// As [`MooncakePlacement::from_json`].
    pub fn from_json_general(text: &[u8], options: &Options<'_>) -> Result<Self> {
        let tree = reader::read(text, MooncakePlacementDocument::LABEL, &options.limits)?;
        let draft = read_placement(&tree, &options.limits)?;
        // The tree is larger than the draft: its memory is reused by the rules that follow.
        drop(tree);
        assemble(draft)
    }

    /// Validates a document tree read by [`weight_manifest::reader`], under
    /// `options.limits`.
    ///
    /// # Errors
    ///
    /// As [`MooncakePlacement::from_json`], without the reader's.
    pub fn from_value(tree: &Value<'_>, options: &Options<'_>) -> Result<Self> {
        MooncakePlacementDocument::from_tree(tree, options)
    }

    /// Builds a placement from values, as upstream's `from_fragments` does, and validates
    /// it; error pointers refer to the canonical text ([`MooncakePlacement::to_json`]).
    ///
    /// # Errors
    ///
    /// The rule codes of [`MooncakePlacement::from_json`]; `mooncake_participant_mismatch`
    /// for a fragment on a rank that no participant has.
    pub fn from_input(input: MooncakeInput) -> Result<Self> {
        let (topology, topology_id) =
            check_topology(input.topology, None, &Path::Root.key(key::TOPOLOGY))?;
        let mut tensors = Vec::with_capacity(input.tensors.len());
        for (i, t) in input.tensors.into_iter().enumerate() {
            tensors.push(crate::descriptor::check_tensor(
                t,
                &Path::Root.key(key::TENSORS).index(i),
            )?);
        }
        tensors.sort_by(|a, b| a.tensor_id.cmp(&b.tensor_id));
        if let Some(w) = tensors
            .windows(2)
            .position(|w| w[0].tensor_id == w[1].tensor_id)
        {
            return Err(Error::new(
                Code::DuplicateTensorId,
                "duplicate tensor_id in placement tensors",
            )
            .with_pointer(Some(format!("/tensors/{}", w + 1))));
        }
        let slot: HashMap<_, usize> = topology
            .participants
            .iter()
            .enumerate()
            .map(|(i, p)| (p.rank, i))
            .collect();
        let mut parts: Vec<DraftPart> = topology
            .participants
            .iter()
            .enumerate()
            .map(|(i, p)| DraftPart {
                participant_id: p.participant_id.clone(),
                rank: p.rank,
                fragments: Vec::new(),
                at: i,
            })
            .collect();
        let mut fragments = input.fragments;
        fragments.sort_by(|a, b| a.placement_fragment_id.cmp(&b.placement_fragment_id));
        for f in fragments {
            let Some(part) = slot.get(&f.rank).and_then(|&i| parts.get_mut(i)) else {
                return Err(Error::new(
                    Code::MooncakeParticipantMismatch,
                    format!(
                        "placement fragment rank has no topology participant: {}",
                        f.placement_fragment_id
                    ),
                ));
            };
            let n = part.fragments.len();
            part.fragments.push((f, n));
        }
        let by_id: HashMap<&str, usize> = tensors
            .iter()
            .enumerate()
            .map(|(i, t)| (t.tensor_id.as_str(), i))
            .collect();
        let work = Limits::default().max_geometry_work;
        for part in &parts {
            check_part(part, &tensors, &by_id, work)?;
        }
        let draft = Draft {
            resource_id: input.resource_id,
            revision: input.revision,
            weight_generation: input.weight_generation,
            placement_set_id: input.placement_set_id,
            placement_id: None,
            topology,
            topology_id,
            tensors,
            parts: std::mem::take(&mut parts),
            work,
        };
        for (k, v) in [
            (key::RESOURCE_ID, &draft.resource_id),
            (key::REVISION, &draft.revision),
            (key::PLACEMENT_SET_ID, &draft.placement_set_id),
        ] {
            if v.is_empty() {
                return Err(weight_manifest::rules::values::empty_string(
                    k,
                    &Path::Root.key(k),
                ));
            }
        }
        assemble(draft)
    }

    /// The canonical wire text, byte for byte what `weight_placement_to_json` writes.
    pub fn to_json(&self) -> String {
        // Only ASCII is written (every other scalar is escaped).
        String::from_utf8(write::placement_text(self)).unwrap_or_default()
    }

    /// Upstream's `digest`: SHA-256 of the canonical text, 64 lowercase hex digits.
    pub fn digest(&self) -> String {
        weight_manifest::canonical::sha256_hex(&write::placement_text(self))
    }

    /// The placement_id (`sha256:` + the identity payload's digest).
    pub fn placement_id(&self) -> &str {
        &self.placement_id
    }

    /// The topology's id.
    pub fn topology_id(&self) -> &str {
        &self.topology_id
    }

    /// The resource (model) id.
    pub fn resource_id(&self) -> &str {
        &self.resource_id
    }

    /// The revision.
    pub fn revision(&self) -> &str {
        &self.revision
    }

    /// The weight generation.
    pub fn weight_generation(&self) -> u64 {
        self.weight_generation
    }

    /// The placement set id.
    pub fn placement_set_id(&self) -> &str {
        &self.placement_set_id
    }

    /// The topology, participants sorted by participant_id.
    pub fn topology(&self) -> &Topology {
        &self.topology
    }

    /// The tensors, sorted by tensor_id.
    pub fn tensors(&self) -> &[Tensor] {
        &self.tensors
    }

    /// The parts, sorted by participant_id.
    pub fn parts(&self) -> &[Part] {
        &self.parts
    }

    /// Every fragment, in part order then id order.
    pub fn fragments(&self) -> impl Iterator<Item = &Fragment> {
        self.parts.iter().flat_map(|p| p.fragments.iter())
    }
}

/// Mooncake's placement (`WeightPlacementManifest`) as a document kind of the core's
/// reading pipeline.
struct MooncakePlacementDocument;

impl Document for MooncakePlacementDocument {
    type Output = MooncakePlacement;
    const LABEL: &'static str = "placement manifest";

    fn fast(text: &str, options: &Options<'_>) -> Option<MooncakePlacement> {
        assemble(crate::fast::draft(text, &options.limits)?).ok()
    }

    fn from_tree(tree: &Value<'_>, options: &Options<'_>) -> Result<MooncakePlacement> {
        assemble(read_placement(tree, &options.limits)?)
    }

    fn from_text(_: &str, tree: Value<'_>, options: &Options<'_>) -> Result<MooncakePlacement> {
        let draft = read_placement(&tree, &options.limits)?;
        // The tree is larger than the draft: its memory is reused by the rules that follow.
        drop(tree);
        assemble(draft)
    }
}

/// The id Mooncake generates for a fragment (`PlacementFragment` without an explicit
/// id): `sha256:` + SHA-256 of its canonical payload. Readers accept any non-empty id;
/// this is what upstream's constructors assign.
pub fn generated_fragment_id(fragment: &Fragment) -> String {
    write::fragment_id(fragment)
}

/// The rules of the whole placement, in upstream's order, then its canonical form and id.
fn assemble(draft: Draft) -> Result<MooncakePlacement> {
    let Draft {
        resource_id,
        revision,
        weight_generation,
        placement_set_id,
        placement_id: given,
        topology,
        topology_id,
        tensors,
        parts,
        work,
    } = draft;
    let referenced: HashSet<&str> = parts
        .iter()
        .flat_map(|p| p.fragments.iter().map(|(f, _)| f.tensor_id.as_str()))
        .collect();
    let mut order: Vec<usize> = (0..tensors.len()).collect();
    order.sort_by(|&a, &b| tensors[a].tensor_id.cmp(&tensors[b].tensor_id));
    if let Some(&i) = order
        .iter()
        .find(|&&i| !referenced.contains(tensors[i].tensor_id.as_str()))
    {
        return Err(Error::new(
            Code::MooncakeUnreferencedTensor,
            format!(
                "placement JSON contains an unreferenced tensor: {}",
                tensors[i].tensor_id
            ),
        )
        .with_pointer(Some(format!("/tensors/{i}"))));
    }
    check_participants(&parts, &topology)?;
    let known: HashMap<&str, usize> = tensors
        .iter()
        .enumerate()
        .map(|(i, t)| (t.tensor_id.as_str(), i))
        .collect();
    let mut all: Vec<Placed<'_>> = parts
        .iter()
        .flat_map(|p| p.fragments.iter().map(move |(f, i)| (f, p.at, *i)))
        .collect();
    all.sort_by(|a, b| a.0.placement_fragment_id.cmp(&b.0.placement_fragment_id));
    check_all(&all, &known)?;
    if tensors.is_empty() {
        return Err(Error::new(
            Code::MooncakeNotCovered,
            "global weight placement must contain tensors",
        )
        .with_pointer(Some("/tensors".to_owned())));
    }
    if all.is_empty() {
        return Err(Error::new(
            Code::MooncakeNotCovered,
            "global weight placement must contain fragments",
        )
        .with_pointer(Some("/parts".to_owned())));
    }
    let mut by_tensor: HashMap<&str, Vec<&Fragment>> = HashMap::default();
    for (f, _, _) in &all {
        by_tensor.entry(f.tensor_id.as_str()).or_default().push(f);
    }
    for &i in &order {
        let t = &tensors[i];
        let frags = by_tensor
            .get(t.tensor_id.as_str())
            .map(Vec::as_slice)
            .unwrap_or_default();
        check_cover(t, i, frags, &topology, work)?;
    }
    drop(all);
    drop(by_tensor);
    let mut slots: Vec<Option<Tensor>> = tensors.into_iter().map(Some).collect();
    let tensors: Vec<Tensor> = order
        .iter()
        .filter_map(|&i| slots.get_mut(i).and_then(Option::take))
        .collect();
    let mut parts: Vec<Part> = parts
        .into_iter()
        .map(|p| {
            let mut fragments: Vec<Fragment> = p.fragments.into_iter().map(|(f, _)| f).collect();
            fragments.sort_by(|a, b| a.placement_fragment_id.cmp(&b.placement_fragment_id));
            Part {
                participant_id: p.participant_id,
                rank: p.rank,
                fragments,
            }
        })
        .collect();
    parts.sort_by(|a, b| a.participant_id.cmp(&b.participant_id));
    let mut placement = MooncakePlacement {
        resource_id,
        revision,
        weight_generation,
        placement_set_id,
        placement_id: String::new(),
        topology,
        topology_id,
        tensors,
        parts,
    };
    placement.placement_id = write::placement_id(&placement);
    if given.is_some_and(|g| g != placement.placement_id) {
        return Err(Error::at(
            Code::PlacementIdMismatch,
            "placement_id does not match canonical logical content",
            &Path::Root.key(key::PLACEMENT_ID),
        ));
    }
    Ok(placement)
}

/// The parts are the topology's participants one to one, each with its rank.
fn check_participants(parts: &[DraftPart], topology: &Topology) -> Result<()> {
    let mismatch = |message: String, pointer: String| {
        Error::new(Code::MooncakeParticipantMismatch, message).with_pointer(Some(pointer))
    };
    let mut order: Vec<&DraftPart> = parts.iter().collect();
    order.sort_by(|a, b| a.participant_id.cmp(&b.participant_id));
    if let Some(w) = order
        .windows(2)
        .find(|w| w[0].participant_id == w[1].participant_id)
    {
        return Err(mismatch(
            "duplicate placement participant".to_owned(),
            format!("/parts/{}/participant_id", w[0].at.max(w[1].at)),
        ));
    }
    let named: HashSet<&str> = parts.iter().map(|p| p.participant_id.as_str()).collect();
    let expected: HashMap<&str, usize> = topology
        .participants
        .iter()
        .enumerate()
        .map(|(i, p)| (p.participant_id.as_str(), i))
        .collect();
    if let Some(missing) = topology
        .participants
        .iter()
        .find(|p| !named.contains(p.participant_id.as_str()))
    {
        return Err(mismatch(
            format!("missing topology participant: {}", missing.participant_id),
            "/parts".to_owned(),
        ));
    }
    if let Some(unknown) = order
        .iter()
        .find(|p| !expected.contains_key(p.participant_id.as_str()))
    {
        return Err(mismatch(
            format!("unknown topology participant: {}", unknown.participant_id),
            format!("/parts/{}/participant_id", unknown.at),
        ));
    }
    for p in order {
        let rank = expected
            .get(p.participant_id.as_str())
            .and_then(|&i| topology.participants.get(i))
            .map(|t| t.rank);
        if rank != Some(p.rank) {
            return Err(mismatch(
                "placement part rank differs from topology".to_owned(),
                format!("/parts/{}/rank", p.at),
            ));
        }
    }
    Ok(())
}
