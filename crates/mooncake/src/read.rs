//! The strict reader of Mooncake's placement wire form (`weight_placement_from_json`):
//! exact key sets and value checks, member by member in upstream's order, into a
//! [`Draft`] that still remembers where each tensor and fragment was written.

use weight_manifest::error::{Code, Error, Result};
use weight_manifest::limits::Limits;
use weight_manifest::path::Path;
use weight_manifest::util::fxhash::FxHashMap as HashMap;
use weight_manifest::value::Value;

use crate::descriptor::{read_tensors, Order};
use crate::draft::{Draft, DraftPart};
use crate::fields::{exact, int, member, object, seq, string, Boxed, Members};
use crate::fragments::check_part;
use crate::model::{Fragment, Participant, Rank, Topology};
use crate::topology::check_topology;
use crate::wire::key;
use crate::wire::{
    MooncakeParticipant, MooncakePlacementFragment, MooncakePlacementManifest,
    MooncakePlacementPart, MooncakeRank, MooncakeTopology,
};

/// The members of this object, sorted (the schema's field list).
const TOP: &[&str] = MooncakePlacementManifest::FIELDS;
/// The members of this object, sorted (the schema's field list).
const TOPOLOGY: &[&str] = MooncakeTopology::FIELDS;
/// The members of this object, sorted (the schema's field list).
const FRAGMENT: &[&str] = MooncakePlacementFragment::FIELDS;

/// Reads a rank `{dp, tp, pp, ep}`.
pub(crate) fn read_rank(value: &Value<'_>, label: &str, path: &Path<'_>) -> Result<Rank> {
    let obj = exact(value, MooncakeRank::FIELDS, label, path)?;
    let coord = |k: &'static str| int(member(obj, k), &format!("rank {k}"), 0, &path.key(k));
    Ok(Rank {
        dp: coord(key::DP)?,
        tp: coord(key::TP)?,
        pp: coord(key::PP)?,
        ep: coord(key::EP)?,
    })
}

fn read_topology(value: &Value<'_>, path: &Path<'_>) -> Result<(Topology, Option<String>)> {
    let obj = exact(value, TOPOLOGY, "parallel topology", path)?;
    let list_path = path.key(key::PARTICIPANTS);
    let items = seq(
        member(obj, key::PARTICIPANTS),
        "parallel topology participants",
        &list_path,
    )?;
    let mut participants = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let at = list_path.index(i);
        let p = exact(
            item,
            MooncakeParticipant::FIELDS,
            &format!("parallel topology participant {i}"),
            &at,
        )?;
        participants.push(Participant {
            participant_id: string(
                member(p, key::PARTICIPANT_ID),
                key::PARTICIPANT_ID,
                &at.key(key::PARTICIPANT_ID),
            )?,
            rank: read_rank(
                member(p, key::RANK),
                &format!("parallel topology rank {i}"),
                &at.key(key::RANK),
            )?,
        });
    }
    let size = |k: &'static str| int(member(obj, k), k, 1, &path.key(k));
    let topology = Topology {
        tp_size: size(key::TP_SIZE)?,
        pp_size: size(key::PP_SIZE)?,
        ep_size: size(key::EP_SIZE)?,
        dp_size: size(key::DP_SIZE)?,
        participants,
    };
    let id = string(
        member(obj, key::TOPOLOGY_ID),
        key::TOPOLOGY_ID,
        &path.key(key::TOPOLOGY_ID),
    )?;
    Ok((topology, Some(id)))
}

/// Reads one fragment (`_fragment_from_wire` and `PlacementFragment.__init__`).
fn read_fragment(value: &Value<'_>, index: usize, path: &Path<'_>) -> Result<Fragment> {
    let obj = object(value, &format!("placement fragment {index}"), path)?;
    // Without pipeline_stage_id: the form before upstream added it (its only optional member).
    let with_stage = obj.has_exact_keys(FRAGMENT);
    if !with_stage && !obj.has_exact_keys(MooncakePlacementFragment::REQUIRED) {
        return Err(Error::at(
            Code::FieldsMismatch,
            format!("placement fragment {index} has an invalid schema"),
            path,
        ));
    }
    let fields = Members::new(obj, "", path);
    let placement_fragment_id = fields.string(key::PLACEMENT_FRAGMENT_ID)?;
    let Boxed {
        tensor_id,
        global_offset,
        local_shape,
    } = fields.boxed()?;
    let nbytes = fields.int(key::NBYTES, 1)?;
    let rank = read_rank(
        member(obj, key::RANK),
        &format!("placement rank {index}"),
        &path.key(key::RANK),
    )?;
    let pipeline_stage_id = if with_stage {
        fields.opt_int(key::PIPELINE_STAGE_ID, 0)?
    } else {
        None
    };
    let aliases = fields.aliases("alias", &tensor_id)?;
    Ok(Fragment {
        placement_fragment_id,
        tensor_id,
        global_offset,
        local_shape,
        nbytes,
        rank,
        pipeline_stage_id,
        aliases,
    })
}

/// Reads the document tree into a draft; the part-local rules run as each part is read,
/// as upstream builds each `WeightPlacementPart` in turn.
pub(crate) fn read_placement(value: &Value<'_>, limits: &Limits) -> Result<Draft> {
    let root = Path::Root;
    let obj = exact(value, TOP, "placement manifest", &root)?;
    let kind_path = root.key(key::RESOURCE_KIND);
    let kind = string(
        member(obj, key::RESOURCE_KIND),
        key::RESOURCE_KIND,
        &kind_path,
    )?;
    if kind != "model_weight" {
        return Err(Error::at(
            Code::MooncakeResourceKind,
            "placement manifest resource_kind must be model_weight",
            &kind_path,
        ));
    }
    let str_of = |k: &'static str| string(member(obj, k), k, &root.key(k));
    let resource_id = str_of(key::RESOURCE_ID)?;
    let revision = str_of(key::REVISION)?;
    let weight_generation = int(
        member(obj, key::WEIGHT_GENERATION),
        key::WEIGHT_GENERATION,
        0,
        &root.key(key::WEIGHT_GENERATION),
    )?;
    let placement_set_id = str_of(key::PLACEMENT_SET_ID)?;
    let placement_id = str_of(key::PLACEMENT_ID)?;
    let (topology, given) = read_topology(member(obj, key::TOPOLOGY), &root.key(key::TOPOLOGY))?;
    let (topology, topology_id) =
        check_topology(topology, given.as_deref(), &root.key(key::TOPOLOGY))?;

    let tensors_path = root.key(key::TENSORS);
    let tensors = read_tensors(
        obj,
        "placement tensors",
        |i| format!("placement tensor {i}"),
        Order::Placement,
        &root,
        limits,
    )?;
    let mut ids: Vec<(&str, usize)> = tensors
        .iter()
        .enumerate()
        .map(|(i, t)| (t.tensor_id.as_str(), i))
        .collect();
    ids.sort_unstable();
    if let Some(w) = ids.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(Error::at(
            Code::DuplicateTensorId,
            "duplicate tensor_id in placement JSON",
            &tensors_path.index(w[0].1.max(w[1].1)),
        ));
    }

    let by_id: HashMap<&str, usize> = ids.iter().map(|&(id, i)| (id, i)).collect();
    let mut total = 0usize;
    let parts_path = root.key(key::PARTS);
    let items = seq(member(obj, key::PARTS), "placement parts", &parts_path)?;
    let mut parts = Vec::with_capacity(items.len());
    for (p, item) in items.iter().enumerate() {
        let at = parts_path.index(p);
        let part = exact(
            item,
            MooncakePlacementPart::FIELDS,
            &format!("placement part {p}"),
            &at,
        )?;
        let participant_id = string(
            member(part, key::PARTICIPANT_ID),
            key::PARTICIPANT_ID,
            &at.key(key::PARTICIPANT_ID),
        )?;
        let rank = read_rank(
            member(part, key::RANK),
            &format!("placement part rank {p}"),
            &at.key(key::RANK),
        )?;
        let list_path = at.key(key::FRAGMENTS);
        let list = seq(
            member(part, key::FRAGMENTS),
            "placement part fragments",
            &list_path,
        )?;
        total = total.saturating_add(list.len());
        limits.check_fragments(total, &list_path)?;
        let mut fragments = Vec::with_capacity(list.len());
        for (f, v) in list.iter().enumerate() {
            fragments.push((read_fragment(v, f, &list_path.index(f))?, f));
        }
        let draft = DraftPart {
            participant_id,
            rank,
            fragments,
            at: p,
        };
        check_part(&draft, &tensors, &by_id, limits.max_geometry_work)?;
        parts.push(draft);
    }
    Ok(Draft {
        resource_id,
        revision,
        weight_generation,
        placement_set_id,
        placement_id: Some(placement_id),
        topology,
        topology_id,
        tensors,
        parts,
        work: limits.max_geometry_work,
    })
}
