//! Unit tests of the geometry and the writers' escaping; the rules themselves are tested
//! against upstream's recorded answers in tests/mooncake_oracle.rs.

use crate::boxes::{exactly_cover, overlapping_pair, BoxRef, OverBudget};

fn boxes(list: &[(Vec<u64>, Vec<u64>)]) -> Vec<BoxRef<'_>> {
    list.iter()
        .map(|(o, s)| (o.as_slice(), s.as_slice()))
        .collect()
}

#[test]
fn overlap_is_found_and_touching_boxes_do_not_overlap() {
    let touching = vec![
        (vec![0, 0], vec![2, 2]),
        (vec![2, 0], vec![2, 2]),
        (vec![0, 2], vec![4, 2]),
    ];
    assert_eq!(overlapping_pair(&boxes(&touching), 64), Ok(None));
    assert!(exactly_cover(&[4, 4], &boxes(&touching), 64).unwrap());
    let crossing = vec![
        (vec![0, 0], vec![2, 2]),
        (vec![3, 3], vec![1, 1]),
        (vec![1, 1], vec![2, 2]),
    ];
    assert_eq!(overlapping_pair(&boxes(&crossing), 64), Ok(Some((0, 2))));
    // Volumes add up, but two boxes intersect: not a cover.
    let doubled = vec![(vec![0], vec![3]), (vec![2], vec![2])];
    assert!(!exactly_cover(&[5], &boxes(&doubled), 64).unwrap());
    assert!(!exactly_cover(&[4], &boxes(&doubled), 64).unwrap());
    // Extents beyond u64 sums are compared exactly.
    let huge = vec![(vec![u64::MAX - 1], vec![u64::MAX])];
    assert!(!exactly_cover(&[u64::MAX], &boxes(&huge), 64).unwrap());
}

#[test]
fn slabs_along_any_one_dimension_sweep_in_linear_work() {
    // 10,000 boxes spanning dim 0 and stacked along dim 1: one comparison a box at most.
    let n = 10_000u64;
    let slabs: Vec<(Vec<u64>, Vec<u64>)> = (0..n).map(|i| (vec![0, i], vec![n, 1])).collect();
    assert_eq!(overlapping_pair(&boxes(&slabs), 2), Ok(None));
    assert!(exactly_cover(&[n, n], &boxes(&slabs), 2).unwrap());
}

#[test]
fn the_comparison_budget_fails_closed() {
    // Open on every sweep dimension at once, apart on none: each box meets all before it.
    let stacked: Vec<(Vec<u64>, Vec<u64>)> = (0..100)
        .map(|i| (vec![i, i], vec![200 - i, 200 - i]))
        .collect();
    assert_eq!(
        overlapping_pair(&boxes(&stacked), 1).map(|p| p.is_some()),
        Ok(true)
    );
    let apart: Vec<(Vec<u64>, Vec<u64>)> = (0..100)
        .map(|i| (vec![i, 99 - i], vec![100 - i, 1]))
        .collect();
    assert_eq!(overlapping_pair(&boxes(&apart), 1), Err(OverBudget));
    assert_eq!(overlapping_pair(&boxes(&apart), 100), Ok(None));
}
