//! Mooncake's topology rules (`ParallelTopology.__init__`) and its `topology_id`.

use weight_manifest::error::{Code, Error, Result};
use weight_manifest::path::Path;

use crate::model::{AxisKind, Topology};
use crate::wire::key;
use crate::write;

fn invalid(message: impl Into<String>, path: &Path<'_>) -> Error {
    Error::at(Code::MooncakeTopologyInvalid, message, path)
}

/// Checks a topology read at `path` (participants in document order), sorts its
/// participants by participant_id and returns it with its recomputed id; a `given` id
/// must equal that one.
pub(crate) fn check_topology(
    mut t: Topology,
    given: Option<&str>,
    path: &Path<'_>,
) -> Result<(Topology, String)> {
    let list = path.key(key::PARTICIPANTS);
    if t.participants.is_empty() {
        return Err(invalid(
            "parallel topology participants must not be empty",
            &list,
        ));
    }
    let mut order: Vec<usize> = (0..t.participants.len()).collect();
    // Stable, as Python's sort: equal names keep document order.
    order.sort_by(|&a, &b| {
        t.participants[a]
            .participant_id
            .cmp(&t.participants[b].participant_id)
    });
    if let Some(w) = order
        .windows(2)
        .find(|w| t.participants[w[0]].participant_id == t.participants[w[1]].participant_id)
    {
        return Err(invalid(
            "duplicate topology participant_id",
            &list.index(w[1]),
        ));
    }
    let mut by_rank = order.clone();
    by_rank.sort_by_key(|&i| t.participants[i].rank);
    if let Some(w) = by_rank
        .windows(2)
        .find(|w| t.participants[w[0]].rank == t.participants[w[1]].rank)
    {
        return Err(invalid(
            "duplicate topology parallel rank",
            &list.index(w[0].max(w[1])),
        ));
    }
    for &i in &order {
        let p = &t.participants[i];
        for kind in [AxisKind::Tp, AxisKind::Pp, AxisKind::Ep, AxisKind::Dp] {
            if p.rank.get(kind) >= t.size(kind) {
                let at = list.index(i);
                let rank = at.key(key::RANK);
                return Err(invalid(
                    format!(
                        "{} rank is out of range for participant {}",
                        kind.as_str(),
                        p.participant_id
                    ),
                    &rank.key(kind.as_str()),
                ));
            }
        }
    }
    let mut sorted = Vec::with_capacity(order.len());
    let mut slots: Vec<Option<_>> = std::mem::take(&mut t.participants)
        .into_iter()
        .map(Some)
        .collect();
    for i in order {
        if let Some(p) = slots.get_mut(i).and_then(Option::take) {
            sorted.push(p);
        }
    }
    t.participants = sorted;
    let id = write::topology_id(&t);
    if given.is_some_and(|g| g != id) {
        return Err(Error::at(
            Code::MooncakeTopologyIdMismatch,
            "topology_id does not match canonical topology",
            &path.key(key::TOPOLOGY_ID),
        ));
    }
    Ok((t, id))
}
