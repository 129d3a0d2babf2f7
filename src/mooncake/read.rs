//! The strict reader of Mooncake's placement wire form (`weight_placement_from_json`):
//! exact key sets and value checks, member by member in upstream's order, into a
//! [`Draft`] that still remembers where each tensor and fragment was written.

use crate::error::{Code, Error, Result};
use crate::limits::Limits;
use crate::path::Path;
use crate::validate::fxhash::FxHashMap as HashMap;
use crate::value::Value;

use super::descriptor::{read_tensor, Order};
use super::fields::{exact, int, ints, member, object, opt_int, seq, string};
use super::fragments::check_part;
use super::model::{Fragment, Participant, Rank, Tensor, Topology};
use super::topology::check_topology;

/// A part as written: its position in `parts` and its fragments with their positions.
pub(crate) struct DraftPart {
    pub(crate) participant_id: String,
    pub(crate) rank: Rank,
    pub(crate) fragments: Vec<(Fragment, usize)>,
    pub(crate) at: usize,
}

/// A placement as read, before the rules that span the document.
pub(crate) struct Draft {
    pub(crate) resource_id: String,
    pub(crate) revision: String,
    pub(crate) weight_generation: u64,
    pub(crate) placement_set_id: String,
    /// The id as written, to be checked against the recomputed one (`None`: compute it).
    pub(crate) placement_id: Option<String>,
    /// Checked, participants sorted.
    pub(crate) topology: Topology,
    pub(crate) topology_id: String,
    /// In document order.
    pub(crate) tensors: Vec<Tensor>,
    pub(crate) parts: Vec<DraftPart>,
    /// `Limits::max_geometry_work`, for the rules of the whole placement.
    pub(crate) work: u64,
}

/// The members of this object, sorted.
pub(crate) const TOP: [&str; 9] = [
    "parts",
    "placement_id",
    "placement_set_id",
    "resource_id",
    "resource_kind",
    "revision",
    "tensors",
    "topology",
    "weight_generation",
];
/// The members of this object, sorted.
pub(crate) const TOPOLOGY: [&str; 6] = [
    "dp_size",
    "ep_size",
    "participants",
    "pp_size",
    "topology_id",
    "tp_size",
];
/// The members of this object, sorted.
pub(crate) const FRAGMENT: [&str; 8] = [
    "aliases",
    "global_offset",
    "local_shape",
    "nbytes",
    "pipeline_stage_id",
    "placement_fragment_id",
    "rank",
    "tensor_id",
];

/// Reads a rank `{dp, tp, pp, ep}`.
pub(crate) fn read_rank(value: &Value<'_>, label: &str, path: &Path<'_>) -> Result<Rank> {
    let obj = exact(value, &["dp", "ep", "pp", "tp"], label, path)?;
    let coord = |k: &'static str| int(member(obj, k), &format!("rank {k}"), 0, &path.key(k));
    Ok(Rank {
        dp: coord("dp")?,
        tp: coord("tp")?,
        pp: coord("pp")?,
        ep: coord("ep")?,
    })
}

fn read_topology(value: &Value<'_>, path: &Path<'_>) -> Result<(Topology, Option<String>)> {
    let obj = exact(value, &TOPOLOGY, "parallel topology", path)?;
    let list_path = path.key("participants");
    let items = seq(
        member(obj, "participants"),
        "parallel topology participants",
        &list_path,
    )?;
    let mut participants = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let at = list_path.index(i);
        let p = exact(
            item,
            &["participant_id", "rank"],
            &format!("parallel topology participant {i}"),
            &at,
        )?;
        participants.push(Participant {
            participant_id: string(
                member(p, "participant_id"),
                "participant_id",
                &at.key("participant_id"),
            )?,
            rank: read_rank(
                member(p, "rank"),
                &format!("parallel topology rank {i}"),
                &at.key("rank"),
            )?,
        });
    }
    let size = |k: &'static str| int(member(obj, k), k, 1, &path.key(k));
    let topology = Topology {
        tp_size: size("tp_size")?,
        pp_size: size("pp_size")?,
        ep_size: size("ep_size")?,
        dp_size: size("dp_size")?,
        participants,
    };
    let id = string(
        member(obj, "topology_id"),
        "topology_id",
        &path.key("topology_id"),
    )?;
    Ok((topology, Some(id)))
}

/// Reads one fragment (`_fragment_from_wire` and `PlacementFragment.__init__`).
fn read_fragment(value: &Value<'_>, index: usize, path: &Path<'_>) -> Result<Fragment> {
    let obj = object(value, &format!("placement fragment {index}"), path)?;
    let with_stage = obj.has_exact_keys(&FRAGMENT);
    let legacy: Vec<&str> = FRAGMENT
        .into_iter()
        .filter(|k| *k != "pipeline_stage_id")
        .collect();
    if !with_stage && !obj.has_exact_keys(&legacy) {
        return Err(Error::at(
            Code::FieldsMismatch,
            format!("placement fragment {index} has an invalid schema"),
            path,
        ));
    }
    let str_of = |k: &'static str| string(member(obj, k), k, &path.key(k));
    let placement_fragment_id = str_of("placement_fragment_id")?;
    let tensor_id = str_of("tensor_id")?;
    let global_offset = ints(
        member(obj, "global_offset"),
        "global_offset",
        0,
        &path.key("global_offset"),
    )?;
    let local_shape = ints(
        member(obj, "local_shape"),
        "local_shape",
        1,
        &path.key("local_shape"),
    )?;
    let nbytes = int(member(obj, "nbytes"), "nbytes", 1, &path.key("nbytes"))?;
    let rank = read_rank(
        member(obj, "rank"),
        &format!("placement rank {index}"),
        &path.key("rank"),
    )?;
    let pipeline_stage_id = if with_stage {
        opt_int(
            member(obj, "pipeline_stage_id"),
            "pipeline_stage_id",
            0,
            &path.key("pipeline_stage_id"),
        )?
    } else {
        None
    };
    let aliases_path = path.key("aliases");
    let items = seq(member(obj, "aliases"), "aliases", &aliases_path)?;
    let aliases = read_aliases(items, "alias", &tensor_id, &aliases_path)?;
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

/// An alias list read and held to its own rules (non-empty strings, then
/// `_normalize_aliases` and the group's size and membership): returns it sorted. `what`
/// names an element in the message ("alias", "stored fragment alias").
pub(crate) fn read_aliases(
    items: &[Value<'_>],
    what: &str,
    tensor_id: &str,
    path: &Path<'_>,
) -> Result<Vec<String>> {
    let mut aliases = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        match item {
            Value::Str(s) if !s.is_empty() => aliases.push(s.to_string()),
            _ => {
                return Err(Error::at(
                    Code::AliasesInvalid,
                    format!("{what} must be a non-empty string"),
                    &path.index(i),
                ))
            }
        }
    }
    normalize_aliases(aliases, tensor_id, path)
}

/// An alias list of non-empty names held to `_normalize_aliases` and the group's rules
/// (no duplicate, at least two names, the own tensor among them): returns it sorted. The
/// one check of both placement readers (the tree's and the one-pass).
pub(crate) fn normalize_aliases(
    mut aliases: Vec<String>,
    tensor_id: &str,
    path: &Path<'_>,
) -> Result<Vec<String>> {
    aliases.sort();
    if aliases.windows(2).any(|w| w[0] == w[1]) {
        return Err(Error::at(
            Code::AliasesDuplicate,
            "aliases must not contain duplicates",
            path,
        ));
    }
    if !aliases.is_empty() {
        if aliases.len() < 2 {
            return Err(Error::at(
                Code::MooncakeAliasGroupInvalid,
                "alias group must contain at least two tensor IDs",
                path,
            ));
        }
        if aliases
            .binary_search_by(|a| a.as_str().cmp(tensor_id))
            .is_err()
        {
            return Err(Error::at(
                Code::MooncakeAliasGroupInvalid,
                "alias group must contain the fragment tensor_id",
                path,
            ));
        }
    }
    Ok(aliases)
}

/// Reads the document tree into a draft; the part-local rules run as each part is read,
/// as upstream builds each `WeightPlacementPart` in turn.
pub(crate) fn read_placement(value: &Value<'_>, limits: &Limits) -> Result<Draft> {
    let root = Path::Root;
    let obj = exact(value, &TOP, "placement manifest", &root)?;
    let kind_path = root.key("resource_kind");
    let kind = string(member(obj, "resource_kind"), "resource_kind", &kind_path)?;
    if kind != "model_weight" {
        return Err(Error::at(
            Code::MooncakeResourceKind,
            "placement manifest resource_kind must be model_weight",
            &kind_path,
        ));
    }
    let str_of = |k: &'static str| string(member(obj, k), k, &root.key(k));
    let resource_id = str_of("resource_id")?;
    let revision = str_of("revision")?;
    let weight_generation = int(
        member(obj, "weight_generation"),
        "weight_generation",
        0,
        &root.key("weight_generation"),
    )?;
    let placement_set_id = str_of("placement_set_id")?;
    let placement_id = str_of("placement_id")?;
    let (topology, given) = read_topology(member(obj, "topology"), &root.key("topology"))?;
    let (topology, topology_id) =
        check_topology(topology, given.as_deref(), &root.key("topology"))?;

    let tensors_path = root.key("tensors");
    let items = seq(member(obj, "tensors"), "placement tensors", &tensors_path)?;
    limits.check_tensors(items.len(), &tensors_path)?;
    let mut tensors = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        if let Some(shape) = item.as_object().and_then(|o| o.get("global_shape")) {
            limits.check_dims(shape, &tensors_path.index(i).key("global_shape"))?;
        }
        tensors.push(read_tensor(
            item,
            &format!("placement tensor {i}"),
            Order::Placement,
            &tensors_path.index(i),
        )?);
    }
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
    let parts_path = root.key("parts");
    let items = seq(member(obj, "parts"), "placement parts", &parts_path)?;
    let mut parts = Vec::with_capacity(items.len());
    for (p, item) in items.iter().enumerate() {
        let at = parts_path.index(p);
        let part = exact(
            item,
            &["fragments", "participant_id", "rank"],
            &format!("placement part {p}"),
            &at,
        )?;
        let participant_id = string(
            member(part, "participant_id"),
            "participant_id",
            &at.key("participant_id"),
        )?;
        let rank = read_rank(
            member(part, "rank"),
            &format!("placement part rank {p}"),
            &at.key("rank"),
        )?;
        let list_path = at.key("fragments");
        let list = seq(
            member(part, "fragments"),
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
