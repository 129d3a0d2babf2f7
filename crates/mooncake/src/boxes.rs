//! Boxes of a tensor: whether two of a list intersect, and whether a list covers a shape
//! exactly (in bounds, no overlap, volumes adding up), as Mooncake's geometry decides.
//!
//! Volumes are summed in u128 with checked products: a product beyond u128 is no volume
//! any list of u64-byte fragments can add up to, so it is simply "not covered".

/// A box: offset and extents, of one length.
pub(crate) type BoxRef<'a> = (&'a [u64], &'a [u64]);

fn intersect(a: BoxRef<'_>, b: BoxRef<'_>) -> bool {
    a.0.iter()
        .zip(a.1)
        .zip(b.0.iter().zip(b.1))
        .all(|((&ao, &ae), (&bo, &be))| {
            u128::from(ao) < u128::from(bo) + u128::from(be)
                && u128::from(bo) < u128::from(ao) + u128::from(ae)
        })
}

/// The search compared more pairs than its budget allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct OverBudget;

/// The positions (in `boxes`) of two intersecting boxes, if any; the boxes all have the
/// same length. A sweep keeps only the boxes still open along the dimension with the most
/// distinct intervals (so a split on any one dimension sweeps in linear time); it compares
/// at most `work_per_box` pairs per box (`Limits::max_geometry_work`), so that boxes
/// stacked along one dimension and apart on another cannot make it quadratic.
pub(crate) fn overlapping_pair(
    boxes: &[BoxRef<'_>],
    work_per_box: u64,
) -> Result<Option<(usize, usize)>, OverBudget> {
    if boxes.len() < 2 {
        return Ok(None);
    }
    let budget = work_per_box.saturating_mul(boxes.len() as u64);
    let mut spent = 0u64;
    let ndim = boxes.first().map_or(0, |b| b.0.len());
    let interval = |b: BoxRef<'_>, d: usize| match (b.0.get(d), b.1.get(d)) {
        (Some(&o), Some(&e)) => (u128::from(o), u128::from(o) + u128::from(e)),
        _ => (0, u128::MAX),
    };
    let mut sweep = 0;
    let mut most = 0;
    for d in 0..ndim {
        let mut spans: Vec<(u128, u128)> = boxes.iter().map(|&b| interval(b, d)).collect();
        spans.sort_unstable();
        spans.dedup();
        if spans.len() > most {
            (sweep, most) = (d, spans.len());
        }
    }
    let begin = |b: BoxRef<'_>| interval(b, sweep).0;
    let end = |b: BoxRef<'_>| interval(b, sweep).1;
    let mut order: Vec<usize> = (0..boxes.len()).collect();
    order.sort_by_key(|&i| begin(boxes[i]));
    let mut active: Vec<usize> = Vec::new();
    for i in order {
        let start = begin(boxes[i]);
        active.retain(|&j| end(boxes[j]) > start);
        spent = spent.saturating_add(active.len() as u64);
        if spent > budget {
            return Err(OverBudget);
        }
        if let Some(&j) = active.iter().find(|&&j| intersect(boxes[j], boxes[i])) {
            return Ok(Some((j.min(i), j.max(i))));
        }
        active.push(i);
    }
    Ok(None)
}

/// The `limit_exceeded` error of a search over budget, at `pointer`.
pub(crate) fn over_budget(work_per_box: u64, pointer: String) -> weight_manifest::error::Error {
    weight_manifest::error::Error::new(
        weight_manifest::error::Code::LimitExceeded,
        format!(
            "box overlap search exceeds max_geometry_work ({work_per_box} comparisons per box)"
        ),
    )
    .with_pointer(Some(pointer))
}

/// The number of elements of `shape`, if it fits in u128.
pub(crate) fn volume(shape: &[u64]) -> Option<u128> {
    shape
        .iter()
        .try_fold(1u128, |acc, &e| acc.checked_mul(u128::from(e)))
}

/// Whether `boxes` cover a tensor of `shape` exactly: at least one, each inside, volumes
/// adding up to the tensor's, none intersecting another.
pub(crate) fn exactly_cover(
    shape: &[u64],
    boxes: &[BoxRef<'_>],
    work_per_box: u64,
) -> Result<bool, OverBudget> {
    if boxes.is_empty() {
        return Ok(false);
    }
    let inside = |b: BoxRef<'_>| {
        b.0.len() == shape.len()
            && b.1.len() == shape.len()
            && b.0
                .iter()
                .zip(b.1)
                .zip(shape)
                .all(|((&o, &e), &s)| u128::from(o) + u128::from(e) <= u128::from(s))
    };
    if !boxes.iter().all(|&b| inside(b)) {
        return Ok(false);
    }
    let mut total = 0u128;
    for &(_, extents) in boxes {
        match volume(extents).and_then(|v| total.checked_add(v)) {
            Some(t) => total = t,
            None => return Ok(false),
        }
    }
    if volume(shape) != Some(total) {
        return Ok(false);
    }
    Ok(overlapping_pair(boxes, work_per_box)?.is_none())
}
