//! The one-pass reader of a Mooncake placement: the text straight into a [`Draft`], no
//! document tree, then the same rules as the tree reader ([`crate::read`]).
//!
//! It reads the JSON placements are written in (canonical or not: any key order and
//! whitespace, through the core's cursor, `weight_manifest::reader::cursor`) and checks each value as a
//! yes/no question. Every rule runs through the functions the tree reader calls
//! ([`check_topology`], [`check_tensor`], [`normalize_aliases`], [`check_part`], then the
//! placement's assembly), so an accepted document gives exactly the tree reader's
//! placement. Anything else (an escape, a value check or a rule that fails, a limit)
//! answers `None`, and the tree reader then decides, with its code, message and pointer:
//! this reader never rejects.

use weight_manifest::limits::Limits;
use weight_manifest::path::Path;
use weight_manifest::reader::cursor::{index_of, mask_of, Cursor, Fast, KeyOrder};
use weight_manifest::util::fxhash::FxHashMap as HashMap;

use crate::aliases::normalize_aliases;
use crate::descriptor::{check_tensor, KEYS};
use crate::draft::{Draft, DraftPart};
use crate::fragments::check_part;
use crate::model::{Axis, AxisKind, Fragment, Participant, Rank, Semantics, Tensor, Topology};
use crate::topology::check_topology;
use crate::wire::key;
use crate::wire::{
    MooncakeAxis, MooncakeParticipant, MooncakePlacementFragment, MooncakePlacementManifest,
    MooncakePlacementPart, MooncakeRank, MooncakeTopology,
};

const TOP: &[&str] = MooncakePlacementManifest::FIELDS;
const TOPOLOGY: &[&str] = MooncakeTopology::FIELDS;
const FRAGMENT: &[&str] = MooncakePlacementFragment::FIELDS;
const RANK: &[&str] = MooncakeRank::FIELDS;
const PARTICIPANT: &[&str] = MooncakeParticipant::FIELDS;
const PART: &[&str] = MooncakePlacementPart::FIELDS;
const AXIS: &[&str] = MooncakeAxis::FIELDS;

/// Every member of `keys` (bit i for `keys[i]`), as [`Cursor::members`] reports them.
const fn all(keys: &[&str]) -> u32 {
    mask_of(keys, keys)
}

/// Every member of `keys` but `except`.
const fn all_but(keys: &[&str], except: &str) -> u32 {
    all(keys) & !(1 << index_of(keys, except))
}

// The index of each member in its key list, as `Cursor::members` reports it.
const T_PARTS: usize = index_of(TOP, key::PARTS);
const T_PLACEMENT_ID: usize = index_of(TOP, key::PLACEMENT_ID);
const T_PLACEMENT_SET_ID: usize = index_of(TOP, key::PLACEMENT_SET_ID);
const T_RESOURCE_ID: usize = index_of(TOP, key::RESOURCE_ID);
const T_RESOURCE_KIND: usize = index_of(TOP, key::RESOURCE_KIND);
const T_REVISION: usize = index_of(TOP, key::REVISION);
const T_TENSORS: usize = index_of(TOP, key::TENSORS);
const T_TOPOLOGY: usize = index_of(TOP, key::TOPOLOGY);
const T_WEIGHT_GENERATION: usize = index_of(TOP, key::WEIGHT_GENERATION);
const TOPO_PARTICIPANTS: usize = index_of(TOPOLOGY, key::PARTICIPANTS);
const TOPO_ID: usize = index_of(TOPOLOGY, key::TOPOLOGY_ID);
const TOPO_TP: usize = index_of(TOPOLOGY, key::TP_SIZE);
const TOPO_PP: usize = index_of(TOPOLOGY, key::PP_SIZE);
const TOPO_EP: usize = index_of(TOPOLOGY, key::EP_SIZE);
const TOPO_DP: usize = index_of(TOPOLOGY, key::DP_SIZE);
const R_DP: usize = index_of(RANK, key::DP);
const R_EP: usize = index_of(RANK, key::EP);
const R_PP: usize = index_of(RANK, key::PP);
const R_TP: usize = index_of(RANK, key::TP);
const P_NAME: usize = index_of(PARTICIPANT, key::PARTICIPANT_ID);
const P_RANK: usize = index_of(PARTICIPANT, key::RANK);
const D_DTYPE: usize = index_of(KEYS, key::DTYPE);
const D_EXPERT_ID: usize = index_of(KEYS, key::EXPERT_ID);
const D_GLOBAL_SHAPE: usize = index_of(KEYS, key::GLOBAL_SHAPE);
const D_ITEMSIZE: usize = index_of(KEYS, key::ITEMSIZE);
const D_LAYER_ID: usize = index_of(KEYS, key::LAYER_ID);
const D_LAYOUT: usize = index_of(KEYS, key::LAYOUT_FINGERPRINT);
const D_AXES: usize = index_of(KEYS, key::PARALLEL_AXES);
const D_SHARD_DIMS: usize = index_of(KEYS, key::SHARD_DIMS);
const D_TENSOR_ID: usize = index_of(KEYS, key::TENSOR_ID);
const A_DIM: usize = index_of(AXIS, key::DIM);
const A_KIND: usize = index_of(AXIS, key::KIND);
const A_SEMANTICS: usize = index_of(AXIS, key::SEMANTICS);
const PT_FRAGMENTS: usize = index_of(PART, key::FRAGMENTS);
const PT_NAME: usize = index_of(PART, key::PARTICIPANT_ID);
const PT_RANK: usize = index_of(PART, key::RANK);
const F_ALIASES: usize = index_of(FRAGMENT, key::ALIASES);
const F_OFFSET: usize = index_of(FRAGMENT, key::GLOBAL_OFFSET);
const F_SHAPE: usize = index_of(FRAGMENT, key::LOCAL_SHAPE);
const F_NBYTES: usize = index_of(FRAGMENT, key::NBYTES);
const F_STAGE: usize = index_of(FRAGMENT, key::PIPELINE_STAGE_ID);
const F_ID: usize = index_of(FRAGMENT, key::PLACEMENT_FRAGMENT_ID);
const F_RANK: usize = index_of(FRAGMENT, key::RANK);
const F_TENSOR_ID: usize = index_of(FRAGMENT, key::TENSOR_ID);
const ALL_TOP: u32 = all(TOP);
const ALL_TOPOLOGY: u32 = all(TOPOLOGY);
const ALL_RANK: u32 = all(RANK);
const ALL_PARTICIPANT: u32 = all(PARTICIPANT);
const ALL_DESCRIPTOR: u32 = all(KEYS);
const ALL_PART: u32 = all(PART);
const AXIS_SPLIT: u32 = all(AXIS);
const AXIS_OTHER: u32 = all_but(AXIS, key::DIM);
const FRAGMENT_STAGED: u32 = all(FRAGMENT);
const FRAGMENT_UNSTAGED: u32 = all_but(FRAGMENT, key::PIPELINE_STAGE_ID);

/// The key order of the last object of each kind (see [`KeyOrder`]).
struct Orders {
    rank: KeyOrder,
    participant: KeyOrder,
    tensor: KeyOrder,
    axis: KeyOrder,
    part: KeyOrder,
    fragment: KeyOrder,
}

impl Orders {
    fn new() -> Self {
        Orders {
            rank: KeyOrder::listed(),
            participant: KeyOrder::listed(),
            tensor: KeyOrder::listed(),
            axis: KeyOrder::listed(),
            part: KeyOrder::listed(),
            fragment: KeyOrder::listed(),
        }
    }
}

/// Reads `text` into a draft for the rules of the whole placement, having run every rule
/// the tree reader runs while reading; `None` when the tree reader must decide.
pub(crate) fn draft(text: &str, limits: &Limits) -> Fast<Draft> {
    // The deepest value is a fragment's rank or box, six containers down; member names
    // (at most 21 bytes) are matched as literals.
    if limits.effective_depth() < 6 || limits.max_string_bytes < 32 {
        return None;
    }
    let mut c = Cursor::limited(text, limits.max_string_bytes);
    let mut o = Orders::new();
    let mut d = Draft {
        resource_id: String::new(),
        revision: String::new(),
        weight_generation: 0,
        placement_set_id: String::new(),
        placement_id: None,
        topology: Topology {
            tp_size: 0,
            pp_size: 0,
            ep_size: 0,
            dp_size: 0,
            participants: Vec::new(),
        },
        topology_id: String::new(),
        tensors: Vec::new(),
        parts: Vec::new(),
        work: limits.max_geometry_work,
    };
    let mut topology = None;
    let seen = c.members(TOP, &mut KeyOrder::listed(), |c, key| {
        match key {
            T_PARTS => c.array(|c| {
                let at = d.parts.len();
                d.parts.push(part(c, &mut o, at)?);
                Some(())
            })?,
            T_PLACEMENT_ID => d.placement_id = Some(c.non_empty()?.to_owned()),
            T_PLACEMENT_SET_ID => c.non_empty()?.clone_into(&mut d.placement_set_id),
            T_RESOURCE_ID => c.non_empty()?.clone_into(&mut d.resource_id),
            T_RESOURCE_KIND => (c.string()? == "model_weight").then_some(())?,
            T_REVISION => c.non_empty()?.clone_into(&mut d.revision),
            T_TENSORS => c.array(|c| {
                if d.tensors.capacity() == 0 {
                    // No tensor element is shorter than about 200 bytes.
                    d.tensors
                        .reserve(text.len().saturating_sub(c.offset()) / 200);
                }
                let at = d.tensors.len();
                d.tensors.push(tensor(c, &mut o, limits, at)?);
                Some(())
            })?,
            T_TOPOLOGY => topology = Some(read_topology(c, &mut o)?),
            T_WEIGHT_GENERATION => d.weight_generation = c.u64()?,
            _ => return None,
        }
        Some(())
    })?;
    if seen != ALL_TOP || !c.at_end() || d.tensors.len() > limits.max_tensors {
        return None;
    }
    // The tree reader's order: the topology, the tensors, then each part.
    let (t, given) = topology?;
    (d.topology, d.topology_id) =
        check_topology(t, Some(&given), &Path::Root.key(key::TOPOLOGY)).ok()?;
    let mut ids: Vec<(&str, usize)> = d
        .tensors
        .iter()
        .enumerate()
        .map(|(i, t)| (t.tensor_id.as_str(), i))
        .collect();
    ids.sort_unstable();
    if ids.windows(2).any(|w| w[0].0 == w[1].0) {
        return None;
    }
    let by_id: HashMap<&str, usize> = ids.into_iter().collect();
    let mut total = 0usize;
    for p in &d.parts {
        total = total.checked_add(p.fragments.len())?;
        if total > limits.max_fragments {
            return None;
        }
        check_part(p, &d.tensors, &by_id, d.work).ok()?;
    }
    drop(by_id);
    Some(d)
}

/// A rank `{dp, ep, pp, tp}`.
fn rank(c: &mut Cursor<'_>, order: &mut KeyOrder) -> Fast<Rank> {
    let mut r = [0u64; 4];
    let seen = c.members(RANK, order, |c, key| {
        *r.get_mut(key)? = c.u64()?;
        Some(())
    })?;
    (seen == ALL_RANK).then_some(Rank {
        dp: r[R_DP],
        ep: r[R_EP],
        pp: r[R_PP],
        tp: r[R_TP],
    })
}

/// The topology as written (participants in document order), with its given id.
fn read_topology(c: &mut Cursor<'_>, o: &mut Orders) -> Fast<(Topology, String)> {
    let mut sizes = [0u64; TOPOLOGY.len()];
    let (mut participants, mut id) = (Vec::new(), String::new());
    let seen = c.members(TOPOLOGY, &mut KeyOrder::listed(), |c, key| {
        match key {
            TOPO_PARTICIPANTS => c.array(|c| {
                participants.push(participant(c, o)?);
                Some(())
            })?,
            TOPO_ID => c.non_empty()?.clone_into(&mut id),
            _ => *sizes.get_mut(key)? = c.u64_min(1)?,
        }
        Some(())
    })?;
    (seen == ALL_TOPOLOGY).then_some(())?;
    let topology = Topology {
        tp_size: sizes[TOPO_TP],
        pp_size: sizes[TOPO_PP],
        ep_size: sizes[TOPO_EP],
        dp_size: sizes[TOPO_DP],
        participants,
    };
    Some((topology, id))
}

/// One topology participant.
fn participant(c: &mut Cursor<'_>, o: &mut Orders) -> Fast<Participant> {
    let (mut name, mut at) = (String::new(), Rank::default());
    let seen = c.members(PARTICIPANT, &mut o.participant, |c, key| {
        match key {
            P_NAME => c.non_empty()?.clone_into(&mut name),
            P_RANK => at = rank(c, &mut o.rank)?,
            _ => return None,
        }
        Some(())
    })?;
    (seen == ALL_PARTICIPANT).then_some(Participant {
        participant_id: name,
        rank: at,
    })
}

/// `null` or an integer.
fn opt_u64(c: &mut Cursor<'_>) -> Fast<Option<u64>> {
    if c.null() {
        Some(None)
    } else {
        c.u64().map(Some)
    }
}

/// One descriptor, `at` its position in `tensors`, then the descriptor's rules.
fn tensor(c: &mut Cursor<'_>, o: &mut Orders, limits: &Limits, at: usize) -> Fast<Tensor> {
    let mut t = Tensor {
        tensor_id: String::new(),
        global_shape: Vec::new(),
        dtype: String::new(),
        itemsize: 0,
        shard_dims: Vec::new(),
        layout_fingerprint: String::new(),
        parallel_axes: Vec::new(),
        layer_id: None,
        expert_id: None,
    };
    let axis_order = &mut o.axis;
    let seen = c.members(KEYS, &mut o.tensor, |c, key| {
        match key {
            D_DTYPE => c.non_empty()?.clone_into(&mut t.dtype),
            D_EXPERT_ID => t.expert_id = opt_u64(c)?,
            D_GLOBAL_SHAPE => t.global_shape = c.u64s(1)?,
            D_ITEMSIZE => t.itemsize = c.u64_min(1)?,
            D_LAYER_ID => t.layer_id = opt_u64(c)?,
            D_LAYOUT => c.non_empty()?.clone_into(&mut t.layout_fingerprint),
            D_AXES => c.array(|c| {
                t.parallel_axes.push(axis(c, axis_order)?);
                Some(())
            })?,
            D_SHARD_DIMS => t.shard_dims = c.u64s(0)?,
            D_TENSOR_ID => c.non_empty()?.clone_into(&mut t.tensor_id),
            _ => return None,
        }
        Some(())
    })?;
    if seen != ALL_DESCRIPTOR || t.global_shape.len() > limits.max_dims {
        return None;
    }
    check_tensor(t, &Path::Root.key(key::TENSORS).index(at)).ok()
}

/// One parallel axis, by the value rules of the tree reader's `read_axis`.
fn axis(c: &mut Cursor<'_>, order: &mut KeyOrder) -> Fast<Axis> {
    let (mut dim, mut kind, mut semantics) = (0u64, "", "");
    let seen = c.members(AXIS, order, |c, key| {
        match key {
            A_DIM => dim = c.u64()?,
            A_KIND => kind = c.non_empty()?,
            A_SEMANTICS => semantics = c.non_empty()?,
            _ => return None,
        }
        Some(())
    })?;
    let kind = AxisKind::parse(kind)?;
    let semantics = match (semantics, seen) {
        (weight_manifest::wire::key::SPLIT, AXIS_SPLIT) => match kind {
            AxisKind::Tp => Semantics::Split { dim },
            AxisKind::Ep if dim == 0 => Semantics::Split { dim },
            _ => return None,
        },
        ("replicated", AXIS_OTHER) => Semantics::Replicated,
        ("ownership", AXIS_OTHER) => Semantics::Ownership,
        _ => return None,
    };
    Some(Axis { kind, semantics })
}

/// One part with its fragments, `at` its position in `parts`.
fn part(c: &mut Cursor<'_>, o: &mut Orders, at: usize) -> Fast<DraftPart> {
    let mut p = DraftPart {
        participant_id: String::new(),
        rank: Rank::default(),
        fragments: Vec::new(),
        at,
    };
    let (fragment_order, rank_order) = (&mut o.fragment, &mut o.rank);
    let seen = c.members(PART, &mut o.part, |c, key| {
        match key {
            PT_FRAGMENTS => c.array(|c| {
                let f = p.fragments.len();
                p.fragments
                    .push((fragment(c, fragment_order, rank_order, at, f)?, f));
                Some(())
            })?,
            PT_NAME => c.non_empty()?.clone_into(&mut p.participant_id),
            PT_RANK => p.rank = rank(c, rank_order)?,
            _ => return None,
        }
        Some(())
    })?;
    (seen == ALL_PART).then_some(p)
}

/// Fragment `i` of part `p` (`pipeline_stage_id` optional, `null` read as absent), its
/// aliases held to the group's rules.
fn fragment(
    c: &mut Cursor<'_>,
    order: &mut KeyOrder,
    rank_order: &mut KeyOrder,
    p: usize,
    i: usize,
) -> Fast<Fragment> {
    let mut f = Fragment {
        placement_fragment_id: String::new(),
        tensor_id: String::new(),
        global_offset: Vec::new(),
        local_shape: Vec::new(),
        nbytes: 0,
        rank: Rank::default(),
        pipeline_stage_id: None,
        aliases: Vec::new(),
    };
    let seen = c.members(FRAGMENT, order, |c, key| {
        match key {
            F_ALIASES => c.array(|c| {
                f.aliases.push(c.non_empty()?.to_owned());
                Some(())
            })?,
            F_OFFSET => f.global_offset = c.u64s(0)?,
            F_SHAPE => f.local_shape = c.u64s(1)?,
            F_NBYTES => f.nbytes = c.u64_min(1)?,
            F_STAGE => f.pipeline_stage_id = opt_u64(c)?,
            F_ID => c.non_empty()?.clone_into(&mut f.placement_fragment_id),
            F_RANK => f.rank = rank(c, rank_order)?,
            F_TENSOR_ID => c.non_empty()?.clone_into(&mut f.tensor_id),
            _ => return None,
        }
        Some(())
    })?;
    if seen != FRAGMENT_STAGED && seen != FRAGMENT_UNSTAGED {
        return None;
    }
    if !f.aliases.is_empty() {
        // The pointer is the tree reader's; a rejection leaves the text to it anyway.
        let parts = Path::Root.key(key::PARTS);
        let part = parts.index(p);
        let list = part.key(key::FRAGMENTS);
        let at = list.index(i);
        let aliases = std::mem::take(&mut f.aliases);
        f.aliases = normalize_aliases(aliases, &f.tensor_id, &at.key(key::ALIASES)).ok()?;
    }
    Some(f)
}
