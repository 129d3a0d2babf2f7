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

/// The positions (in `boxes`) of two intersecting boxes, if any; the boxes all have the
/// same length. A sweep along dimension 0 keeps only the boxes still open.
pub(crate) fn overlapping_pair(boxes: &[BoxRef<'_>]) -> Option<(usize, usize)> {
    if boxes.len() < 2 {
        return None;
    }
    let begin = |b: BoxRef<'_>| b.0.first().copied().map_or(0, u128::from);
    let end = |b: BoxRef<'_>| match (b.0.first(), b.1.first()) {
        (Some(&o), Some(&e)) => u128::from(o) + u128::from(e),
        _ => u128::MAX,
    };
    let mut order: Vec<usize> = (0..boxes.len()).collect();
    order.sort_by_key(|&i| begin(boxes[i]));
    let mut active: Vec<usize> = Vec::new();
    for i in order {
        let start = begin(boxes[i]);
        active.retain(|&j| end(boxes[j]) > start);
        if let Some(&j) = active.iter().find(|&&j| intersect(boxes[j], boxes[i])) {
            return Some((j.min(i), j.max(i)));
        }
        active.push(i);
    }
    None
}

/// The number of elements of `shape`, if it fits in u128.
pub(crate) fn volume(shape: &[u64]) -> Option<u128> {
    shape
        .iter()
        .try_fold(1u128, |acc, &e| acc.checked_mul(u128::from(e)))
}

/// Whether `boxes` cover a tensor of `shape` exactly: at least one, each inside, volumes
/// adding up to the tensor's, none intersecting another.
pub(crate) fn exactly_cover(shape: &[u64], boxes: &[BoxRef<'_>]) -> bool {
    if boxes.is_empty() {
        return false;
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
        return false;
    }
    let mut total = 0u128;
    for &(_, extents) in boxes {
        match volume(extents).and_then(|v| total.checked_add(v)) {
            Some(t) => total = t,
            None => return false,
        }
    }
    if volume(shape) != Some(total) {
        return false;
    }
    overlapping_pair(boxes).is_none()
}
