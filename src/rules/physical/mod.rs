//! Physical address rules (contract §8.5): within one address space (instance, worker,
//! device) byte ranges are disjoint, except for exact declared alias pairs.

pub(crate) mod alias_pair;

use std::fmt::Write as _;

use crate::error::{Code, Detail, Error, Result};
use crate::locate::Site;
use crate::util::fxhash::FxHashMap;
use crate::wire::{key, RuntimeFragment, TensorDescriptor};
use alias_pair::AliasCandidate;

/// Checks every address space of a runtime manifest. `descriptor` resolves a tensor_id to
/// its canonical descriptor (the fragment-set rules have already run, so it always does).
pub(crate) fn check_physical<'a>(
    instance_id: &str,
    fragments: &'a [RuntimeFragment],
    descriptor: &dyn Fn(&str) -> Option<&'a TensorDescriptor>,
) -> Result<()> {
    let mut spaces = AddressSpaces::default();
    for (i, fragment) in fragments.iter().enumerate() {
        spaces.add(&fragment.worker_id, &fragment.device, i);
    }
    let overlap = spaces.first_overlap(
        |i| (fragments[i].address, fragments[i].nbytes),
        |p, c| exact_alias_pair(&fragments[p], &fragments[c], descriptor),
    );
    match overlap {
        Some((p, c)) => Err(overlap_error(instance_id, &fragments[p], &fragments[c], c)
            .with_other_site(Site::fragment(p).member(key::ADDRESS))),
        None => Ok(()),
    }
}

/// The fragments of each address space (worker_id, device) of one instance.
#[derive(Default)]
pub(crate) struct AddressSpaces<'a> {
    space_of: FxHashMap<(&'a str, &'a str), usize>,
    /// The fragment indices of each space, in the order added.
    members: Vec<Vec<usize>>,
    /// The last fragment's space: records usually come device by device.
    last: Option<((&'a str, &'a str), usize)>,
}

impl<'a> AddressSpaces<'a> {
    /// Adds fragment `index`, which lives on `device` of `worker_id`.
    pub(crate) fn add(&mut self, worker_id: &'a str, device: &'a str, index: usize) {
        let key = (worker_id, device);
        let space = match self.last {
            Some((previous, space)) if previous == key => space,
            _ => {
                let next = self.members.len();
                let space = *self.space_of.entry(key).or_insert(next);
                if space == next {
                    self.members.push(Vec::new());
                }
                space
            }
        };
        self.last = Some((key, space));
        self.members[space].push(index);
    }

    /// The sweep of §8.5 over each space in the order the spaces were met, `range(i)` being
    /// the (address, nbytes) of fragment i: the first pair, in sweep order, whose byte
    /// ranges overlap without being an exact alias pair.
    pub(crate) fn first_overlap(
        &mut self,
        range: impl Fn(usize) -> (u64, u64),
        exact_alias_pair: impl Fn(usize, usize) -> bool,
    ) -> Option<(usize, usize)> {
        self.members.iter_mut().find_map(|members| {
            members.sort_by_key(|&i| range(i).0); // stable
            sweep(members, &range, &exact_alias_pair)
        })
    }
}

/// The sweep of one address space, `members` sorted by address.
fn sweep(
    members: &[usize],
    range: impl Fn(usize) -> (u64, u64),
    exact_alias_pair: impl Fn(usize, usize) -> bool,
) -> Option<(usize, usize)> {
    // While no violation has been found, every active fragment contains the current
    // address, so any two active ones overlap and must be an exact alias pair: the active
    // set is one class of identical ranges. The alias relation is a conjunction of
    // equalities, hence transitive, so comparing with the first member decides.
    let mut active: Option<usize> = None;
    for &current in members {
        if let Some(first) = active {
            let (address, nbytes) = range(first);
            if address.saturating_add(nbytes) <= range(current).0 {
                active = None;
            } else if !exact_alias_pair(first, current) {
                return Some((first, current));
            }
        }
        active.get_or_insert(current);
    }
    None
}

/// §8.5's exact alias pair ([`alias_pair`]) of two
/// fragments, their descriptors resolved by tensor_id.
fn exact_alias_pair<'a>(
    p: &'a RuntimeFragment,
    c: &'a RuntimeFragment,
    descriptor: &dyn Fn(&str) -> Option<&'a TensorDescriptor>,
) -> bool {
    let candidate = |f: &'a RuntimeFragment, descriptor: &'a TensorDescriptor| AliasCandidate {
        address: f.address,
        nbytes: f.nbytes,
        lease_generation: f.lease_generation,
        aliases: &f.aliases,
        global_offset: &f.global_offset,
        local_shape: &f.local_shape,
        descriptor,
    };
    match (descriptor(&p.tensor_id), descriptor(&c.tensor_id)) {
        (Some(a), Some(b)) => alias_pair::exact_alias_pair(&candidate(p, a), &candidate(c, b)),
        _ => false,
    }
}

/// The error of two overlapping fragments, at the address of the second (fragment
/// `second_index`).
fn overlap_error(
    instance_id: &str,
    first: &RuntimeFragment,
    second: &RuntimeFragment,
    second_index: usize,
) -> Error {
    let detail = Detail::AddressOverlap {
        first: first.fragment_id.clone(),
        second: second.fragment_id.clone(),
        instance_id: instance_id.to_owned(),
        worker_id: first.worker_id.clone(),
        device: first.device.clone(),
        other: None,
    };
    Error::at_site(
        Code::AddressOverlap,
        format!(
            "runtime manifest address ranges overlap: {} and {} in ({}, {}, {})",
            first.fragment_id,
            second.fragment_id,
            python_repr(instance_id),
            python_repr(&first.worker_id),
            python_repr(&first.device),
        ),
        Site::fragment(second_index).member(key::ADDRESS),
    )
    .with_detail(detail)
}

/// Python's `repr` of a str, which the reference embeds in the address_overlap message
/// (§16 D8): single quotes unless the text has a `'` and no `"`; backslash, the quote,
/// `\n`, `\r`, `\t` and other control characters escaped.
pub(crate) fn python_repr(text: &str) -> String {
    let quote = if text.contains('\'') && !text.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(text.len() + 2);
    out.push(quote);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if u32::from(c) < 0x20 || (0x7f..0xa0).contains(&u32::from(c)) => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

#[cfg(test)]
mod tests {
    use super::python_repr;

    #[test]
    fn renders_like_python_repr() {
        assert_eq!(python_repr("cuda:0"), "'cuda:0'");
        assert_eq!(python_repr("it's"), "\"it's\"");
        assert_eq!(python_repr("a'\"b"), "'a\\'\"b'");
        assert_eq!(python_repr("a\\b\n\u{1}"), "'a\\\\b\\n\\x01'");
    }
}
