//! ParallelRank checks (contract §2.1).

use crate::error::Result;
use crate::path::Path;
use crate::rules::values;
use crate::value::Value;
use crate::wire::key;
use crate::wire::ParallelRank;

/// The four coordinates as found in the document, in check order dp, tp, pp, ep.
pub(crate) struct RankFields<'v, 'a> {
    pub dp: &'v Value<'a>,
    pub tp: &'v Value<'a>,
    pub pp: &'v Value<'a>,
    pub ep: &'v Value<'a>,
}

/// Runs INT("parallel rank {c}", 0) on dp, tp, pp, ep in that order.
/// `rank` locates the rank object.
pub(crate) fn check_rank(fields: &RankFields<'_, '_>, rank: &Path<'_>) -> Result<ParallelRank> {
    let dp = values::int(fields.dp, "parallel rank dp", 0, &rank.key(key::DP))?;
    let tp = values::int(fields.tp, "parallel rank tp", 0, &rank.key(key::TP))?;
    let pp = values::int(fields.pp, "parallel rank pp", 0, &rank.key(key::PP))?;
    let ep = values::int(fields.ep, "parallel rank ep", 0, &rank.key(key::EP))?;
    Ok(ParallelRank { dp, ep, pp, tp })
}
