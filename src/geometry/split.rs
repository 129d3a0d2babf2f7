//! How the k-d index ([`super::BoxIndex`]) splits a node: prefer a *clean* cut, one that
//! puts every member with a coordinate below a value on one side and the rest on the
//! other, so that no run of equal values straddles the two children (ties that straddle
//! leave both children with the same range, and a query then visits both for nothing).
//!
//! For each coordinate that varies in the node, in cyclic order from the one after the
//! parent's, the median of a sample and the two cuts around it (just below and just above
//! the run of values equal to it) are scored by the smaller side; the best cut is taken
//! when both sides hold at least a quarter of the members, which keeps the depth below
//! log_{4/3} n. Otherwise the node is halved at the median of the best coordinate (ties
//! broken arbitrarily). Cost per node: O(coordinates × sample + members).

/// Members sampled per node to choose the cut (all of them in smaller nodes).
const SAMPLE: usize = 512;

/// A node's split.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Split {
    /// Members whose coordinate `coordinate` is below `cut` go left.
    Clean { coordinate: usize, cut: u64 },
    /// Halve at the median of `coordinate`.
    Median { coordinate: usize },
    /// No coordinate varies: halve in any order.
    Halves,
}

/// Chooses the split of `members` (at least 2), whose coordinate `c` is
/// `value(member, c)` for `c < coordinates`; `varies(c)` tells whether it takes more than
/// one value in the node; `next` is tried first.
pub(crate) fn choose(
    members: &[usize],
    coordinates: usize,
    next: usize,
    varies: &dyn Fn(usize) -> bool,
    value: &dyn Fn(usize, usize) -> u64,
) -> Split {
    let stride = (members.len() / SAMPLE).max(1);
    let sample: Vec<usize> = members.iter().step_by(stride).copied().collect();
    let mut values: Vec<u64> = Vec::with_capacity(sample.len());
    // (smaller side in the sample, coordinate, cut)
    let mut best: Option<(usize, usize, u64)> = None;
    for c in (0..coordinates).map(|i| (next + i) % coordinates) {
        if !varies(c) {
            continue;
        }
        values.clear();
        values.extend(sample.iter().map(|&m| value(m, c)));
        let half = values.len() / 2;
        let median = *values.select_nth_unstable(half).1;
        let below = values.iter().filter(|&&v| v < median).count();
        let equal = values.iter().filter(|&&v| v == median).count();
        let cuts = [
            (below, Some(median)),
            (below + equal, median.checked_add(1)),
        ];
        for (left, cut) in cuts {
            let Some(cut) = cut else { continue };
            let balance = left.min(values.len() - left);
            if best.is_none_or(|(b, _, _)| balance > b) {
                best = Some((balance, c, cut));
            }
        }
    }
    match best {
        None => Split::Halves,
        Some((balance, coordinate, cut)) if balance * 4 >= sample.len() => {
            Split::Clean { coordinate, cut }
        }
        Some((_, coordinate, _)) => Split::Median { coordinate },
    }
}

#[cfg(test)]
mod tests {
    use super::{choose, Split};

    #[test]
    fn prefers_cuts_that_keep_equal_values_together() {
        // Coordinate 0: five 0s then five 1s (a clean, even cut at 1); coordinate 1: nine
        // 0s and a 1 (its only clean cut leaves one member on a side).
        let rows: Vec<[u64; 2]> = (0..10u64)
            .map(|i| [u64::from(i >= 5), u64::from(i == 9)])
            .collect();
        let members: Vec<usize> = (0..10).collect();
        let value = |m: usize, c: usize| rows[m][c];
        let split = choose(&members, 2, 0, &|_| true, &value);
        assert_eq!(
            split,
            Split::Clean {
                coordinate: 0,
                cut: 1
            }
        );
        // Nine equal values and one other: no clean cut is balanced.
        let skewed: Vec<[u64; 1]> = (0..10u64).map(|i| [u64::from(i == 9)]).collect();
        let value = |m: usize, c: usize| skewed[m][c];
        assert_eq!(
            choose(&members, 1, 0, &|_| true, &value),
            Split::Median { coordinate: 0 }
        );
        assert_eq!(choose(&members, 1, 0, &|_| false, &value), Split::Halves);
    }
}
