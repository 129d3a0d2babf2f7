//! A static index of N-D boxes answering "which active boxes intersect this query box?",
//! the one intersection structure behind the §8.3 sweep, the tiling analysis and the
//! planner's source search.
//!
//! A k-d tree over the boxes as points: a box with starts s and exclusive ends e on the
//! `w` indexed axes is the point (s, e) in D = 2w coordinates, and it intersects the query
//! [lo, hi) exactly when s_j < hi_j and e_j > lo_j on every axis: an orthant of that
//! space. Nodes split on one coordinate ([`super::split`]: a cut that keeps equal values
//! together when it leaves both sides a quarter of the members, else the median), trying
//! the D coordinates in cyclic order and skipping those constant in the node, so the depth
//! is O(log n). With cyclic median splits a query visits O(n^(1−1/D) + k) nodes for k
//! hits (the classic k-d tree bound); the balanced clean cuts trade that worst case for
//! far fewer visits on real layouts: O(log n + k) on tilings, and O(log n) times a small
//! constant per axis on slab-like layouts. The [`Work`] budget caps the rest. Each node keeps the
//! least start and greatest end of its members per axis, which is exactly what decides
//! whether its subtree can reach the query.
//!
//! Members can be switched on and off (the sweep keeps only the boxes that contain its
//! line active); every node counts its active members, and a query skips subtrees with
//! none. Query work is charged to a [`Work`] budget, one unit per node visited and per
//! member compared.

use super::boxref::BoxRef;
use super::split::{self, Split};
use super::work::{Exhausted, Work};

/// Boxes per leaf: below this a linear scan is cheaper than another level.
const LEAF: usize = 8;
/// No parent (the root).
const NONE: usize = usize::MAX;

struct Node {
    /// Members are `order[start..end]`.
    start: usize,
    end: usize,
    /// Child node indices; `None` for a leaf.
    children: Option<(usize, usize)>,
    parent: usize,
    /// Members switched on.
    active: usize,
}

/// The index; member ids are positions in the slice it was built from.
pub(crate) struct BoxIndex {
    /// The indexed axes of the boxes (every axis for the planner; all but the sweep axis
    /// for the sweep).
    axes: Vec<usize>,
    /// Per member, `w` starts then `w` exclusive ends, on the indexed axes.
    bounds: Vec<u64>,
    order: Vec<usize>,
    nodes: Vec<Node>,
    /// Per node, `w` least starts then `w` greatest ends of its members.
    node_bounds: Vec<u64>,
    /// Per member: its leaf, and whether it is switched on.
    leaf_of: Vec<usize>,
    active: Vec<bool>,
}

impl BoxIndex {
    /// Indexes `boxes` (all with the same number of axes) on every axis, every member on.
    pub(crate) fn new(boxes: &[BoxRef<'_>]) -> BoxIndex {
        let ndim = boxes.first().map_or(0, |b| b.offset.len());
        let mut index = BoxIndex::on_axes(boxes, (0..ndim).collect());
        for member in 0..boxes.len() {
            index.switch(member, true);
        }
        index
    }

    /// Indexes `boxes` on `axes` only, every member off.
    pub(crate) fn on_axes(boxes: &[BoxRef<'_>], axes: Vec<usize>) -> BoxIndex {
        let w = axes.len();
        let mut bounds = Vec::with_capacity(boxes.len().saturating_mul(2 * w));
        for b in boxes {
            bounds.extend(axes.iter().map(|&k| b.offset[k]));
            bounds.extend(axes.iter().map(|&k| b.end(k)));
        }
        let mut index = BoxIndex {
            axes,
            bounds,
            order: (0..boxes.len()).collect(),
            nodes: Vec::new(),
            node_bounds: Vec::new(),
            leaf_of: vec![NONE; boxes.len()],
            active: vec![false; boxes.len()],
        };
        if !boxes.is_empty() {
            index.build(0, boxes.len(), 0, NONE);
        }
        index
    }

    fn width(&self) -> usize {
        self.axes.len()
    }

    /// Coordinate `c` (a start for c < w, an end otherwise) of `member`.
    fn coordinate(&self, member: usize, c: usize) -> u64 {
        self.bounds[member * 2 * self.width() + c]
    }

    fn member_bounds(&self, member: usize) -> &[u64] {
        let at = member * 2 * self.width();
        &self.bounds[at..at + 2 * self.width()]
    }

    /// Builds the node for `order[start..end]`, trying coordinate `next` first, and returns
    /// its index. Depth is O(log n): each level halves the members.
    fn build(&mut self, start: usize, end: usize, next: usize, parent: usize) -> usize {
        let w = self.width();
        let node = self.nodes.len();
        self.nodes.push(Node {
            start,
            end,
            children: None,
            parent,
            active: 0,
        });
        // Per coordinate: the least and greatest value among the members.
        let mut low = vec![u64::MAX; 2 * w];
        let mut high = vec![0u64; 2 * w];
        for &m in &self.order[start..end] {
            for c in 0..2 * w {
                let v = self.coordinate(m, c);
                low[c] = low[c].min(v);
                high[c] = high[c].max(v);
            }
        }
        self.node_bounds.extend_from_slice(&low[..w]);
        self.node_bounds.extend_from_slice(&high[w..]);
        if end - start <= LEAF {
            for &m in &self.order[start..end] {
                self.leaf_of[m] = node;
            }
            return node;
        }
        let coordinates = 2 * w;
        let split = split::choose(
            &self.order[start..end],
            coordinates,
            next,
            &|c| low[c] < high[c],
            &|m, c| self.coordinate(m, c),
        );
        let mut order = std::mem::take(&mut self.order);
        let members = &mut order[start..end];
        let half = members.len() / 2;
        let (mid, after) = match split {
            Split::Clean { coordinate, cut } => {
                let left = partition(members, |m| self.coordinate(m, coordinate) < cut);
                // The cut was chosen on a sample: it holds for the node unless the
                // sample misled it, and then the node is halved after all.
                if left * 4 >= members.len() && (members.len() - left) * 4 >= members.len() {
                    (start + left, (coordinate + 1) % coordinates)
                } else {
                    members.select_nth_unstable_by_key(half, |&m| self.coordinate(m, coordinate));
                    (start + half, (coordinate + 1) % coordinates)
                }
            }
            Split::Median { coordinate } => {
                members.select_nth_unstable_by_key(half, |&m| self.coordinate(m, coordinate));
                (start + half, (coordinate + 1) % coordinates)
            }
            // Without a coordinate to split on (identical points, or no indexed axis)
            // the halves are still built, so that activity counts prune them.
            Split::Halves => (start + half, next),
        };
        self.order = order;
        let left = self.build(start, mid, after, node);
        let right = self.build(mid, end, after, node);
        self.nodes[node].children = Some((left, right));
        node
    }

    /// Switches `member` on or off (a no-op when it already is).
    pub(crate) fn switch(&mut self, member: usize, on: bool) {
        if self.active[member] == on {
            return;
        }
        self.active[member] = on;
        let mut node = self.leaf_of[member];
        while node != NONE {
            let n = &mut self.nodes[node];
            n.active = if on { n.active + 1 } else { n.active - 1 };
            node = n.parent;
        }
    }

    /// Calls `visit` with every active member that intersects the box [lo, hi) on the
    /// indexed axes (`lo` and `hi` have one entry per axis of the boxes, exclusive ends),
    /// in no particular order; `Err` when `work` runs out first.
    pub(crate) fn for_each_intersecting(
        &self,
        lo: &[u64],
        hi: &[u64],
        work: &mut Work,
        visit: &mut dyn FnMut(usize),
    ) -> Result<(), Exhausted> {
        if self.nodes.is_empty() {
            return Ok(());
        }
        let mut stack = vec![0usize];
        while let Some(n) = stack.pop() {
            work.spend(1)?;
            let node = &self.nodes[n];
            if node.active == 0 || !self.reaches(self.node_box(n), lo, hi) {
                continue;
            }
            if let Some((left, right)) = node.children {
                stack.push(right);
                stack.push(left);
                continue;
            }
            work.spend(u64::try_from(node.end - node.start).unwrap_or(u64::MAX))?;
            for &m in &self.order[node.start..node.end] {
                if self.active[m] && self.reaches(self.member_bounds(m), lo, hi) {
                    visit(m);
                }
            }
        }
        Ok(())
    }

    fn node_box(&self, n: usize) -> &[u64] {
        let at = n * 2 * self.width();
        &self.node_bounds[at..at + 2 * self.width()]
    }

    /// Whether starts `b[..w]` and ends `b[w..]` reach [lo, hi) on every indexed axis.
    fn reaches(&self, b: &[u64], lo: &[u64], hi: &[u64]) -> bool {
        let w = self.width();
        self.axes
            .iter()
            .enumerate()
            .all(|(j, &k)| b[j] < hi[k] && lo[k] < b[w + j])
    }
}

/// Moves the members for which `left` holds to the front (in any order); returns how many.
fn partition(members: &mut [usize], left: impl Fn(usize) -> bool) -> usize {
    let mut count = 0;
    for i in 0..members.len() {
        if left(members[i]) {
            members.swap(i, count);
            count += 1;
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::BoxIndex;
    use crate::geometry::work::Work;
    use crate::geometry::BoxRef;
    use crate::test_support::{box_refs, Rng};

    fn query(index: &BoxIndex, q: BoxRef<'_>, work: &mut Work) -> Vec<usize> {
        let hi: Vec<u64> = (0..q.offset.len()).map(|k| q.end(k)).collect();
        let mut found = Vec::new();
        index
            .for_each_intersecting(q.offset, &hi, work, &mut |m| found.push(m))
            .unwrap();
        found.sort_unstable();
        found
    }

    #[test]
    fn finds_exactly_the_intersecting_active_boxes() {
        let mut rng = Rng::new(0x2545_f491_4f6c_dd1d_u64);
        for _ in 0..300 {
            let ndim = rng.ndim(6);
            let count = rng.below(80);
            let raw = rng.boxes(count, ndim, 20, (0, 7));
            let mut next = |bound: u64| rng.below(bound);
            let boxes: Vec<BoxRef<'_>> = box_refs(&raw);
            // Every axis, all on; or all axes but one, a random half on.
            let skip = usize::try_from(next(ndim as u64)).unwrap();
            let mut partial = BoxIndex::on_axes(&boxes, (0..ndim).filter(|&k| k != skip).collect());
            let on: Vec<bool> = (0..boxes.len()).map(|_| next(2) == 0).collect();
            for (m, &o) in on.iter().enumerate() {
                partial.switch(m, true);
                partial.switch(m, o);
            }
            let full = BoxIndex::new(&boxes);
            for _ in 0..20 {
                let qo: Vec<u64> = (0..ndim).map(|_| next(22)).collect();
                let qe: Vec<u64> = (0..ndim).map(|_| next(8)).collect();
                let q = BoxRef {
                    offset: &qo,
                    extent: &qe,
                };
                let mut work = Work::unlimited();
                let expected: Vec<usize> = (0..boxes.len())
                    .filter(|&i| boxes[i].intersects(&q))
                    .collect();
                assert_eq!(query(&full, q, &mut work), expected);
                let reaches = |i: usize| {
                    (0..ndim)
                        .filter(|&k| k != skip)
                        .all(|k| boxes[i].offset[k] < q.end(k) && q.offset[k] < boxes[i].end(k))
                };
                let expected: Vec<usize> =
                    (0..boxes.len()).filter(|&i| on[i] && reaches(i)).collect();
                assert_eq!(query(&partial, q, &mut work), expected);
            }
        }
    }

    #[test]
    fn a_query_runs_out_of_work() {
        let raw: Vec<(Vec<u64>, Vec<u64>)> = (0..100).map(|i| (vec![i, 0], vec![1, 5])).collect();
        let boxes = box_refs(&raw);
        let index = BoxIndex::new(&boxes);
        let mut work = Work::new(1, 3);
        let hi = [100, 5];
        let result = index.for_each_intersecting(&[0, 0], &hi, &mut work, &mut |_| {});
        assert!(result.is_err());
    }
}
