//! A static index of N-D boxes answering "which boxes intersect this query box?".
//!
//! A bounding-volume hierarchy: the boxes are split recursively in halves along the axis
//! where their centres spread most, and every node keeps the bounding box of its members,
//! so a query descends only into nodes that reach the query box. For the tilings the
//! planner indexes (disjoint boxes), a query visits O(log n + k) nodes for k hits.

use super::BoxRef;

/// Boxes per leaf: below this a linear scan is cheaper than another level.
const LEAF: usize = 8;

struct Node {
    /// Members are `order[start..end]`.
    start: usize,
    end: usize,
    /// Child node indices; `None` for a leaf.
    children: Option<(usize, usize)>,
}

/// The index; member ids are positions in the slice it was built from.
pub(crate) struct BoxIndex {
    ndim: usize,
    /// Per member, `ndim` starts then `ndim` exclusive ends.
    bounds: Vec<u64>,
    order: Vec<usize>,
    nodes: Vec<Node>,
    /// Per node, `ndim` starts then `ndim` exclusive ends of its members' union.
    node_bounds: Vec<u64>,
}

impl BoxIndex {
    /// Indexes `boxes`, which all have the same number of axes.
    pub(crate) fn new(boxes: &[BoxRef<'_>]) -> BoxIndex {
        let ndim = boxes.first().map_or(0, |b| b.offset.len());
        let mut bounds = Vec::with_capacity(boxes.len() * 2 * ndim);
        for b in boxes {
            bounds.extend_from_slice(b.offset);
            bounds.extend((0..ndim).map(|k| b.end(k)));
        }
        let mut index = BoxIndex {
            ndim,
            bounds,
            order: (0..boxes.len()).collect(),
            nodes: Vec::new(),
            node_bounds: Vec::new(),
        };
        if !boxes.is_empty() {
            index.build(0, boxes.len());
        }
        index
    }

    fn lo(&self, member: usize) -> &[u64] {
        let at = member * 2 * self.ndim;
        &self.bounds[at..at + self.ndim]
    }

    fn hi(&self, member: usize) -> &[u64] {
        let at = member * 2 * self.ndim + self.ndim;
        &self.bounds[at..at + self.ndim]
    }

    /// Builds the node for `order[start..end]` and returns its index.
    fn build(&mut self, start: usize, end: usize) -> usize {
        let ndim = self.ndim;
        let node = self.nodes.len();
        self.nodes.push(Node {
            start,
            end,
            children: None,
        });
        let at = self.node_bounds.len();
        self.node_bounds.resize(at + ndim, u64::MAX);
        self.node_bounds.resize(at + 2 * ndim, 0);
        // The axis where the members' centres (doubled) spread most.
        let mut best: Option<(u128, usize)> = None;
        for k in 0..ndim {
            let (mut cmin, mut cmax) = (u128::MAX, 0u128);
            for &m in &self.order[start..end] {
                let (l, h) = (self.lo(m)[k], self.hi(m)[k]);
                self.node_bounds[at + k] = self.node_bounds[at + k].min(l);
                self.node_bounds[at + ndim + k] = self.node_bounds[at + ndim + k].max(h);
                let c = u128::from(l) + u128::from(h);
                cmin = cmin.min(c);
                cmax = cmax.max(c);
            }
            if cmax > cmin && best.is_none_or(|(spread, _)| cmax - cmin > spread) {
                best = Some((cmax - cmin, k));
            }
        }
        let Some((_, axis)) = best else {
            return node;
        };
        if end - start <= LEAF {
            return node;
        }
        let mid = start + (end - start) / 2;
        let mut order = std::mem::take(&mut self.order);
        order[start..end].select_nth_unstable_by_key(mid - start, |&m| {
            u128::from(self.lo(m)[axis]) + u128::from(self.hi(m)[axis])
        });
        self.order = order;
        let left = self.build(start, mid);
        let right = self.build(mid, end);
        self.nodes[node].children = Some((left, right));
        node
    }

    /// Calls `visit` with every member that intersects the box [lo, hi) (exclusive ends),
    /// in no particular order.
    pub(crate) fn for_each_intersecting(
        &self,
        lo: &[u64],
        hi: &[u64],
        visit: &mut dyn FnMut(usize),
    ) {
        if !self.nodes.is_empty() {
            self.descend(0, lo, hi, visit);
        }
    }

    fn reaches(&self, blo: &[u64], bhi: &[u64], lo: &[u64], hi: &[u64]) -> bool {
        (0..self.ndim).all(|k| blo[k] < hi[k] && lo[k] < bhi[k])
    }

    /// Depth is O(log n): each level halves the members.
    fn descend(&self, n: usize, lo: &[u64], hi: &[u64], visit: &mut dyn FnMut(usize)) {
        let ndim = self.ndim;
        let at = n * 2 * ndim;
        let bounds = &self.node_bounds[at..at + 2 * ndim];
        if !self.reaches(&bounds[..ndim], &bounds[ndim..], lo, hi) {
            return;
        }
        let node = &self.nodes[n];
        match node.children {
            Some((left, right)) => {
                self.descend(left, lo, hi, visit);
                self.descend(right, lo, hi, visit);
            }
            None => {
                for &m in &self.order[node.start..node.end] {
                    if self.reaches(self.lo(m), self.hi(m), lo, hi) {
                        visit(m);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::BoxIndex;
    use crate::geometry::BoxRef;
    use crate::test_support::{box_refs, Rng};

    #[test]
    fn finds_exactly_the_intersecting_boxes() {
        let mut rng = Rng::new(0x2545_f491_4f6c_dd1d_u64);
        let mut next = |bound: u64| rng.below(bound);
        for _ in 0..300 {
            let ndim = 1 + usize::try_from(next(4)).unwrap();
            let count = next(60);
            let raw: Vec<(Vec<u64>, Vec<u64>)> = (0..count)
                .map(|_| {
                    (
                        (0..ndim).map(|_| next(20)).collect(),
                        (0..ndim).map(|_| 1 + next(6)).collect(),
                    )
                })
                .collect();
            let boxes: Vec<BoxRef<'_>> = box_refs(&raw);
            let index = BoxIndex::new(&boxes);
            for _ in 0..20 {
                let qo: Vec<u64> = (0..ndim).map(|_| next(22)).collect();
                let qe: Vec<u64> = (0..ndim).map(|_| 1 + next(8)).collect();
                let query = BoxRef {
                    offset: &qo,
                    extent: &qe,
                };
                let hi: Vec<u64> = (0..ndim).map(|k| query.end(k)).collect();
                let mut found = Vec::new();
                index.for_each_intersecting(&qo, &hi, &mut |m| found.push(m));
                found.sort_unstable();
                let expected: Vec<usize> = (0..boxes.len())
                    .filter(|&i| boxes[i].intersects(&query))
                    .collect();
                assert_eq!(found, expected);
            }
        }
    }
}
