//! Where a rule on a manifest's lists found a violation, before it is a pointer.
//!
//! The fragment-set and address rules run over a manifest's lists as the contract orders
//! them (a placement's sorted by id, §8.1), not as the user wrote them. Such a rule names
//! the element by a [`Site`], its position in the list it checked; the constructor that
//! ordered the lists knows the permutation ([`Orders`]) and where the lists are in the
//! document ([`Origin`]), and turns the site into the pointer of the element as written:
//! `/fragments/7/nbytes`, the 8th fragment of the input.

use crate::path::Path;

/// One of a manifest's lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum List {
    /// The tensor descriptors.
    Tensors,
    /// The fragments.
    Fragments,
}

/// An element of a manifest's list by its position as checked, and optionally a member
/// of it and an element of that member (an axis of `local_shape`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Site {
    list: List,
    index: usize,
    member: Option<&'static str>,
    element: Option<usize>,
}

impl Site {
    /// Fragment `index` of the checked list.
    pub(crate) fn fragment(index: usize) -> Site {
        Site {
            list: List::Fragments,
            index,
            member: None,
            element: None,
        }
    }

    /// Tensor `index` of the checked list.
    pub(crate) fn tensor(index: usize) -> Site {
        Site {
            list: List::Tensors,
            index,
            member: None,
            element: None,
        }
    }

    /// Member `key` of the element.
    #[must_use]
    pub(crate) fn member(self, key: &'static str) -> Site {
        Site {
            member: Some(key),
            ..self
        }
    }

    /// Element `k` of the member (an axis).
    #[must_use]
    pub(crate) fn element(self, k: usize) -> Site {
        Site {
            element: Some(k),
            ..self
        }
    }
}

/// The order the rules saw each list in: for each checked position, the element's
/// position in the input; `None` when it is the input's order.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Orders<'o> {
    /// The tensors' input positions.
    pub tensors: Option<&'o [usize]>,
    /// The fragments' input positions.
    pub fragments: Option<&'o [usize]>,
}

/// Where a manifest's lists are in the document the user wrote. A list that is not in the
/// document as such (an inventory's descriptors, merged from its records; an in-memory
/// construction) is `None`, and its sites have no pointer.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Origin<'p> {
    /// The pointer of the tensors array.
    pub tensors: Option<&'p Path<'p>>,
    /// The pointer of the fragments array (an inventory's records).
    pub fragments: Option<&'p Path<'p>>,
}

/// A manifest document's lists: `/tensors` and `/fragments`.
pub(crate) const MANIFEST: Origin<'static> = Origin {
    tensors: Some(&Path::Key(&Path::Root, crate::wire::key::TENSORS)),
    fragments: Some(&Path::Key(&Path::Root, crate::wire::key::FRAGMENTS)),
};

/// An inventory's records (`/tensors`), one fragment each, in order; its descriptors are
/// merged from them.
pub(crate) const INVENTORY: Origin<'static> = Origin {
    tensors: None,
    fragments: Some(&Path::Key(&Path::Root, crate::wire::key::TENSORS)),
};

impl Origin<'_> {
    /// The pointer of `site` in the document, the lists having been checked in `orders`.
    pub(crate) fn pointer(&self, site: Site, orders: &Orders<'_>) -> Option<String> {
        let (list, order) = match site.list {
            List::Tensors => (self.tensors?, orders.tensors),
            List::Fragments => (self.fragments?, orders.fragments),
        };
        let input = match order {
            Some(order) => *order.get(site.index)?,
            None => site.index,
        };
        let element = list.index(input);
        let Some(key) = site.member else {
            return Some(element.to_pointer());
        };
        let member = element.key(key);
        Some(match site.element {
            Some(k) => member.index(k).to_pointer(),
            None => member.to_pointer(),
        })
    }
}
