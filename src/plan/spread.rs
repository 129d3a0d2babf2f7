//! The spread replica choice: read each region from the replica that keeps the busiest
//! source (host, then rank) sending the fewest bytes.
//!
//! With DP replicas on the source side, the balanced choice reads a target's tiles from
//! the source replica with the target's own dp, so a source of DP 4 feeding a target of
//! DP 2 leaves half its ranks idle, and the busiest sends a whole copy. An update ends
//! when its busiest link does, so here every region may read from any replica of its tile.
//!
//! Minimising the busiest source's bytes is makespan scheduling with restricted
//! assignment (NP-hard in general), so this is a heuristic with a guarantee: regions are
//! dealt largest first to the candidate that is least loaded after taking it (longest
//! processing time first); then, while a region on the busiest source can move to
//! another of its replicas whose load stays below the busiest's, it moves. Each move
//! lowers the sum of squared loads, so the search ends; at its end no single move lowers
//! the busiest source's bytes. With hosts known ([`SourceHosts`]), the same two steps run
//! on host loads first, and rank moves then never raise the busiest host's bytes.
//! Everything is ordered (size, then plan order; ties to the lower rank), so the same
//! inputs give the same plan.

use crate::coverage::group::rank_key;
use crate::util::fxhash::FxHashMap;
use crate::wire::{ParallelRank, PlacementFragment};

type RankKey = (u64, u64, u64, u64);

/// Which host each source rank runs on, for [`super::ReplicaChoice::Spread`]: the busiest
/// host link is then balanced before the busiest rank. A rank not named is a host of its
/// own.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourceHosts {
    host_of: FxHashMap<RankKey, usize>,
    hosts: usize,
}

impl SourceHosts {
    /// The map from `(rank, host)` pairs; hosts are compared by name.
    pub fn new<S: AsRef<str>>(pairs: impl IntoIterator<Item = (ParallelRank, S)>) -> SourceHosts {
        let mut names: FxHashMap<String, usize> = FxHashMap::default();
        let mut host_of = FxHashMap::default();
        for (rank, name) in pairs {
            let next = names.len();
            let host = *names.entry(name.as_ref().to_owned()).or_insert(next);
            host_of.insert(rank_key(&rank), host);
        }
        SourceHosts {
            host_of,
            hosts: names.len(),
        }
    }

    /// The number of hosts named.
    pub fn len(&self) -> usize {
        self.hosts
    }

    /// Whether no host is named.
    pub fn is_empty(&self) -> bool {
        self.hosts == 0
    }
}

/// One region to place: the source fragments holding its tile (in rank order, not
/// empty) and its bytes.
pub(crate) struct Item<'a> {
    pub replicas: &'a [usize],
    pub nbytes: u64,
}

/// Dense indices for the ranks and hosts the candidates name, with their loads.
struct Loads {
    /// Per candidate fragment (by position in `fragments`): its rank's dense index.
    rank_of: FxHashMap<usize, usize>,
    /// Per rank: its host's dense index.
    host_of_rank: Vec<usize>,
    rank: Vec<u128>,
    host: Vec<u128>,
}

impl Loads {
    fn new(
        fragments: &[PlacementFragment],
        items: &[Item<'_>],
        hosts: Option<&SourceHosts>,
    ) -> Loads {
        let mut keys: Vec<RankKey> = items
            .iter()
            .flat_map(|item| item.replicas.iter().map(|&f| rank_key(&fragments[f].rank)))
            .collect();
        keys.sort_unstable();
        keys.dedup();
        let dense = |key: &RankKey| keys.binary_search(key).unwrap_or(0);
        let mut rank_of = FxHashMap::default();
        for item in items {
            for &f in item.replicas {
                rank_of.insert(f, dense(&rank_key(&fragments[f].rank)));
            }
        }
        // Hosts named by the map keep their index; every other rank is a host of its own.
        let named = hosts.map_or(0, SourceHosts::len);
        let host_of_rank: Vec<usize> = keys
            .iter()
            .enumerate()
            .map(|(r, key)| {
                hosts
                    .and_then(|h| h.host_of.get(key).copied())
                    .unwrap_or(named + r)
            })
            .collect();
        let host_count = named + keys.len();
        Loads {
            rank_of,
            host_of_rank,
            rank: vec![0; keys.len()],
            host: vec![0; host_count],
        }
    }

    fn charge(&mut self, rank: usize, nbytes: u64, sign: bool) {
        let host = self.host_of_rank[rank];
        let n = u128::from(nbytes);
        if sign {
            self.rank[rank] += n;
            self.host[host] += n;
        } else {
            self.rank[rank] -= n;
            self.host[host] -= n;
        }
    }
}

/// For each item, the fragment it reads (an element of its `replicas`).
pub(crate) fn spread(
    fragments: &[PlacementFragment],
    items: &[Item<'_>],
    hosts: Option<&SourceHosts>,
) -> Vec<usize> {
    let mut loads = Loads::new(fragments, items, hosts);
    let rank = |loads: &Loads, f: usize| loads.rank_of[&f];
    // Largest first; equal sizes in plan order.
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(items[i].nbytes), i));
    let mut chosen = vec![0usize; items.len()];
    for &i in &order {
        let item = &items[i];
        // Without hosts named, each rank is a host of its own: the host load is the rank's.
        let key = |f: usize| {
            let r = rank(&loads, f);
            (loads.host[loads.host_of_rank[r]], loads.rank[r])
        };
        // `min_by_key` keeps the first minimum: replicas are in rank order.
        let f = item
            .replicas
            .iter()
            .copied()
            .min_by_key(|&f| key(f))
            .unwrap_or(item.replicas[0]);
        chosen[i] = f;
        let r = rank(&loads, f);
        loads.charge(r, item.nbytes, true);
    }
    if hosts.is_some_and(|h| !h.is_empty()) {
        improve(items, &mut chosen, &mut loads, Level::Host);
    }
    improve(items, &mut chosen, &mut loads, Level::Rank);
    chosen
}

/// Which loads a local search lowers.
#[derive(Clone, Copy)]
enum Level {
    Host,
    /// Ranks; no move raises the busiest host's load (without hosts named, each rank is
    /// its own host and this holds by itself).
    Rank,
}

/// Moves regions off the busiest source (host or rank) while one can go to another of its
/// replicas whose load stays below the busiest's.
fn improve(items: &[Item<'_>], chosen: &mut [usize], loads: &mut Loads, level: Level) {
    let group = |loads: &Loads, rank: usize| match level {
        Level::Host => loads.host_of_rank[rank],
        Level::Rank => rank,
    };
    let groups = match level {
        Level::Host => loads.host.len(),
        Level::Rank => loads.rank.len(),
    };
    // The movable items of each group, largest first (equal sizes in plan order), so the
    // biggest step is tried first and only the busiest group's items are looked at.
    let size_order = |&i: &usize| (std::cmp::Reverse(items[i].nbytes), i);
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); groups];
    for (i, item) in items.iter().enumerate() {
        if item.replicas.len() > 1 {
            members[group(loads, loads.rank_of[&chosen[i]])].push(i);
        }
    }
    for list in &mut members {
        list.sort_by_key(size_order);
    }
    // Each move lowers the sum of squared loads, so the search ends; the bound only
    // guards the time.
    let mut moves_left = items.len().saturating_mul(4);
    while moves_left > 0 {
        let group_loads = match level {
            Level::Host => &loads.host,
            Level::Rank => &loads.rank,
        };
        let Some((busiest, &top)) = group_loads
            .iter()
            .enumerate()
            .max_by_key(|&(g, &load)| (load, std::cmp::Reverse(g)))
        else {
            return;
        };
        let host_max = loads.host.iter().copied().max().unwrap_or(0);
        let mut best: Option<(usize, usize, usize)> = None;
        for (at, &i) in members[busiest].iter().enumerate() {
            let from = loads.rank_of[&chosen[i]];
            let n = u128::from(items[i].nbytes);
            let mut target: Option<(u128, usize)> = None;
            for &f in items[i].replicas {
                let to = loads.rank_of[&f];
                let g = group(loads, to);
                if g == busiest {
                    continue;
                }
                let after = match level {
                    Level::Host => loads.host[g] + n,
                    Level::Rank => loads.rank[to] + n,
                };
                if after >= top {
                    continue;
                }
                if let Level::Rank = level {
                    let (h_from, h_to) = (loads.host_of_rank[from], loads.host_of_rank[to]);
                    if h_from != h_to && loads.host[h_to] + n > host_max {
                        continue;
                    }
                }
                if target.is_none_or(|(load, _)| after < load) {
                    target = Some((after, f));
                }
            }
            if let Some((_, f)) = target {
                best = Some((at, i, f));
                break;
            }
        }
        let step = match best {
            Some((_, i, f)) => vec![(i, f)],
            None => match swap(items, chosen, loads, level, &members, busiest, top) {
                Some(pair) => pair.to_vec(),
                None => return,
            },
        };
        for (i, f) in step {
            let (from, to) = (loads.rank_of[&chosen[i]], loads.rank_of[&f]);
            let (g_from, g_to) = (group(loads, from), group(loads, to));
            loads.charge(from, items[i].nbytes, false);
            loads.charge(to, items[i].nbytes, true);
            chosen[i] = f;
            if let Some(at) = members[g_from].iter().position(|&j| j == i) {
                members[g_from].remove(at);
            }
            let list = &mut members[g_to];
            let place = list.partition_point(|j| size_order(j) < size_order(&i));
            list.insert(place, i);
        }
        moves_left -= 1;
    }
}

/// When no region can move off the busiest group alone: a region `i` on it and a smaller
/// one `j` on a rank `i` could read, such that exchanging them keeps both groups below the
/// busiest's load. Returns the two moves (region, fragment it then reads).
fn swap(
    items: &[Item<'_>],
    chosen: &[usize],
    loads: &Loads,
    level: Level,
    members: &[Vec<usize>],
    busiest: usize,
    top: u128,
) -> Option<[(usize, usize); 2]> {
    let group = |rank: usize| match level {
        Level::Host => loads.host_of_rank[rank],
        Level::Rank => rank,
    };
    let load = |g: usize| match level {
        Level::Host => loads.host[g],
        Level::Rank => loads.rank[g],
    };
    let host_max = loads.host.iter().copied().max().unwrap_or(0);
    for &i in &members[busiest] {
        let from = loads.rank_of[&chosen[i]];
        let a = u128::from(items[i].nbytes);
        for &f in items[i].replicas {
            let to = loads.rank_of[&f];
            let g = group(to);
            if g == busiest {
                continue;
            }
            for &j in &members[g] {
                let b = u128::from(items[j].nbytes);
                if loads.rank_of[&chosen[j]] != to || b >= a || load(g) + a - b >= top {
                    continue;
                }
                let Some(&back) = items[j]
                    .replicas
                    .iter()
                    .find(|&&e| loads.rank_of[&e] == from)
                else {
                    continue;
                };
                if let Level::Rank = level {
                    let (h_from, h_to) = (loads.host_of_rank[from], loads.host_of_rank[to]);
                    if h_from != h_to && loads.host[h_to] + a - b > host_max {
                        continue;
                    }
                }
                return Some([(i, f), (j, back)]);
            }
        }
    }
    None
}
