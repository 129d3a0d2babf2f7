//! The slowest correct answer: every element of a tensor visited, for the oracles of the
//! coverage and geometry properties.

/// Every point of a tensor of `shape` in row-major (lexicographic) order, with the number
/// of `boxes` (offset, extent) that contain it.
pub fn cover_counts(shape: &[u64], boxes: &[(Vec<u64>, Vec<u64>)]) -> Vec<(Vec<u64>, usize)> {
    let total: u64 = shape.iter().product();
    (0..total)
        .map(|flat| {
            let mut point = vec![0u64; shape.len()];
            let mut rest = flat;
            for k in (0..shape.len()).rev() {
                point[k] = rest % shape[k];
                rest /= shape[k];
            }
            let hits = boxes
                .iter()
                .filter(|(o, e)| {
                    (0..shape.len()).all(|k| o[k] <= point[k] && point[k] - o[k] < e[k])
                })
                .count();
            (point, hits)
        })
        .collect()
}
