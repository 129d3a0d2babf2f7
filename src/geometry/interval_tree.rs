//! A dynamic set of intervals keyed by a fixed, known set of start coordinates, answering
//! "which members overlap [lo, hi)?" in O(log n + k) node visits.
//!
//! A segment tree over the sorted distinct starts; each leaf keeps its members ordered by
//! end, each node the largest end below it, so subtrees whose members all end at or before
//! `lo` are pruned.

use std::collections::BTreeSet;

pub(crate) struct IntervalTree {
    starts: Vec<u64>,
    size: usize,
    max_end: Vec<u64>,
    /// Per leaf: (end, member id), ordered.
    leaves: Vec<BTreeSet<(u64, usize)>>,
}

impl IntervalTree {
    /// A tree for intervals whose starts are drawn from `starts` (any order, duplicates ok).
    pub(crate) fn new(mut starts: Vec<u64>) -> Self {
        starts.sort_unstable();
        starts.dedup();
        let size = starts.len().next_power_of_two().max(1);
        IntervalTree {
            leaves: vec![BTreeSet::new(); starts.len()],
            max_end: vec![0; 2 * size],
            size,
            starts,
        }
    }

    fn leaf_of(&self, start: u64) -> Option<usize> {
        self.starts.binary_search(&start).ok()
    }

    fn refresh(&mut self, leaf: usize) {
        let mut node = leaf + self.size;
        self.max_end[node] = self.leaves[leaf].last().map_or(0, |&(end, _)| end);
        while node > 1 {
            node /= 2;
            self.max_end[node] = self.max_end[2 * node].max(self.max_end[2 * node + 1]);
        }
    }

    /// Adds member `id` covering [start, end); `start` must be one of the known starts.
    pub(crate) fn insert(&mut self, start: u64, end: u64, id: usize) {
        if let Some(leaf) = self.leaf_of(start) {
            self.leaves[leaf].insert((end, id));
            self.refresh(leaf);
        }
    }

    /// Removes member `id` previously inserted with the same start and end.
    pub(crate) fn remove(&mut self, start: u64, end: u64, id: usize) {
        if let Some(leaf) = self.leaf_of(start) {
            self.leaves[leaf].remove(&(end, id));
            self.refresh(leaf);
        }
    }

    /// Calls `visit` with every member overlapping [lo, hi), until it returns `false`.
    pub(crate) fn for_each_overlapping(
        &self,
        lo: u64,
        hi: u64,
        visit: &mut dyn FnMut(usize) -> bool,
    ) {
        // Leaves whose start is < hi form a prefix.
        let limit = self.starts.partition_point(|&s| s < hi);
        if limit > 0 {
            self.descend(1, 0, self.size, limit, lo, visit);
        }
    }

    fn descend(
        &self,
        node: usize,
        from: usize,
        to: usize,
        limit: usize,
        lo: u64,
        visit: &mut dyn FnMut(usize) -> bool,
    ) -> bool {
        if from >= limit || self.max_end[node] <= lo {
            return true;
        }
        if to - from == 1 {
            for &(end, id) in self.leaves[from].iter().rev() {
                if end <= lo {
                    break;
                }
                if !visit(id) {
                    return false;
                }
            }
            return true;
        }
        let mid = from + (to - from) / 2;
        self.descend(2 * node, from, mid, limit, lo, visit)
            && self.descend(2 * node + 1, mid, to, limit, lo, visit)
    }
}

#[cfg(test)]
mod tests {
    use super::IntervalTree;

    #[test]
    fn finds_exactly_the_overlapping_members() {
        let intervals = [(0, 4), (2, 3), (4, 9), (7, 8), (2, 10)];
        let mut tree = IntervalTree::new(intervals.iter().map(|&(s, _)| s).collect());
        for (id, &(s, e)) in intervals.iter().enumerate() {
            tree.insert(s, e, id);
        }
        let query = |tree: &IntervalTree, lo, hi| {
            let mut found = Vec::new();
            tree.for_each_overlapping(lo, hi, &mut |id| {
                found.push(id);
                true
            });
            found.sort_unstable();
            found
        };
        for lo in 0..11 {
            for hi in lo + 1..12 {
                let expected: Vec<usize> = intervals
                    .iter()
                    .enumerate()
                    .filter(|(_, &(s, e))| s < hi && lo < e)
                    .map(|(i, _)| i)
                    .collect();
                assert_eq!(query(&tree, lo, hi), expected, "[{lo},{hi})");
            }
        }
        tree.remove(2, 10, 4);
        assert_eq!(query(&tree, 9, 10), Vec::<usize>::new());
    }
}
