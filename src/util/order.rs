//! The stable sorts of §1.5 on large lists: by a string key, moving each element once.
//!
//! Sorting the elements themselves moves ~160-byte structs O(n log n) times and compares
//! through them; here the keys' first 16 bytes are packed into an integer and a list of
//! (prefix, index) pairs is sorted instead, falling back to the full key only on equal
//! prefixes, with the index as the last tie-break so the result is the stable order. An
//! already sorted list (a canonical document) is detected in one pass and left alone.

/// The first 16 bytes of `key`, big-endian, zero-padded: prefixes order like the keys
/// whenever they differ.
fn prefix(key: &str) -> u128 {
    let mut bytes = [0u8; 16];
    let head = key.as_bytes().get(..16).unwrap_or(key.as_bytes());
    bytes[..head.len()].copy_from_slice(head);
    u128::from_be_bytes(bytes)
}

/// `a` against `b` in code point order, comparing the packed prefixes first.
#[inline]
fn compare(a: &str, b: &str) -> std::cmp::Ordering {
    prefix(a).cmp(&prefix(b)).then_with(|| a.cmp(b))
}

/// Whether `key(0), key(1), ...` are strictly ascending (so also distinct).
pub(crate) fn ascending_by<'k>(count: usize, key: impl Fn(usize) -> &'k str) -> bool {
    (1..count).all(|i| compare(key(i - 1), key(i)).is_lt())
}

/// Whether the keys are in ascending order.
fn ascending<T>(items: &[T], key: impl Fn(&T) -> &str) -> bool {
    items
        .windows(2)
        .all(|w| compare(key(&w[0]), key(&w[1])).is_le())
}

/// Sorts `items` stably by `key` in code point (byte) order. Returns, for each sorted
/// position, the element's position before the sort, or `None` when the items were
/// already in order (so that a rejection can point at the element as written).
#[must_use = "the input positions locate a rejection"]
pub(crate) fn sort_by_str_key<T>(items: &mut [T], key: impl Fn(&T) -> &str) -> Option<Vec<usize>> {
    if ascending(items, &key) {
        return None;
    }
    let mut order: Vec<(u128, usize)> = items
        .iter()
        .enumerate()
        .map(|(i, item)| (prefix(key(item)), i))
        .collect();
    order.sort_unstable_by(|a, b| {
        a.0.cmp(&b.0)
            .then_with(|| key(&items[a.1]).cmp(key(&items[b.1])))
            .then(a.1.cmp(&b.1))
    });
    let sources: Vec<usize> = order.into_iter().map(|(_, i)| i).collect();
    permute(items, &sources);
    Some(sources)
}

/// Rearranges `items` so that position k holds the element that was at `sources[k]`
/// (`sources` is a permutation), following cycles with swaps.
fn permute<T>(items: &mut [T], sources: &[usize]) {
    let mut placed = vec![false; items.len()];
    for start in 0..items.len() {
        if placed[start] {
            continue;
        }
        let mut at = start;
        loop {
            placed[at] = true;
            let source = sources[at];
            if source == start {
                break;
            }
            items.swap(at, source);
            at = source;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::sort_by_str_key;
    use crate::test_support::Rng;

    #[test]
    fn equals_the_standard_stable_sort() {
        let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15_u64);
        let mut next = |bound: u64| rng.below(bound);
        let alphabet = [
            "",
            "a",
            "\u{0}",
            "logical:0123456789abcdef",
            "logical:0123456789abcdeg",
            "\u{e9}",
            "zz",
        ];
        for _ in 0..500 {
            let len = usize::try_from(next(40)).unwrap();
            let items: Vec<(String, usize)> = (0..len)
                .map(|i| {
                    let a = alphabet[usize::try_from(next(7)).unwrap()];
                    let b = alphabet[usize::try_from(next(7)).unwrap()];
                    (format!("{a}{b}"), i)
                })
                .collect();
            let mut expected = items.clone();
            expected.sort_by(|x, y| x.0.cmp(&y.0));
            let mut actual = items.clone();
            let sources = sort_by_str_key(&mut actual, |x| &x.0);
            assert_eq!(actual, expected);
            // The input positions: each sorted element came from there.
            if let Some(sources) = sources {
                for (k, &source) in sources.iter().enumerate() {
                    assert_eq!(actual[k], items[source]);
                }
            } else {
                assert_eq!(actual, items);
            }
        }
    }
}
