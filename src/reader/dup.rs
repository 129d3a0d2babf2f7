//! Duplicate-key detection for one object (contract §4.4).

use std::borrow::Cow;
use std::collections::HashSet;

use crate::value::Value;

/// Objects with at most this many members are checked by pairwise comparison; larger ones
/// with a hash set, so the check stays linear in expectation.
const LINEAR_LIMIT: usize = 16;

/// The first member key, in document order, that equals an earlier key of the same object.
pub(super) fn first_duplicate<'m>(members: &'m [(Cow<'_, str>, Value<'_>)]) -> Option<&'m str> {
    if members.len() <= LINEAR_LIMIT {
        for (j, (key, _)) in members.iter().enumerate().skip(1) {
            let earlier = members.get(..j).unwrap_or_default();
            if earlier.iter().any(|(k, _)| k == key) {
                return Some(key);
            }
        }
        None
    } else {
        let mut seen = HashSet::with_capacity(members.len());
        members
            .iter()
            .map(|(key, _)| key.as_ref())
            .find(|key| !seen.insert(*key))
    }
}
