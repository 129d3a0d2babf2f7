//! Per-value rules of the element checks (§1.4, §2.3, §2.4): the INT field minimums, STR's
//! non-empty string, ALIASES' order and uniqueness, and ADDR's end address.

/// The minimum of INT(field, min) (§1.4 "Field minimums") for each element of
/// `global_shape` and of `local_shape`: a box extent is at least 1.
pub(crate) const MIN_EXTENT: u64 = 1;
/// The minimum of INT for each element of `global_offset` (§1.4).
pub(crate) const MIN_OFFSET: u64 = 0;
/// The minimum of INT for each element of `stride` (§1.4, §10.3 step 4.3).
pub(crate) const MIN_STRIDE: u64 = 0;
/// The minimum of INT(itemsize, 1) (§1.4, §2.2).
pub(crate) const MIN_ITEMSIZE: u64 = 1;
/// The minimum of INT(nbytes, 1), in every type (§1.4, §2.3, §2.4, §2.5).
pub(crate) const MIN_NBYTES: u64 = 1;
/// The minimum of INT(address, 1), in every type (§1.4, §2.4 step 4, §2.5).
pub(crate) const MIN_ADDRESS: u64 = 1;

/// INT step 2 (§1.4): whether the integer `n` is at least `min`.
#[inline]
pub(crate) const fn at_least(n: u64, min: u64) -> bool {
    n >= min
}

/// STR (§1.4): whether a string holds at least one scalar.
#[inline]
pub(crate) const fn is_non_empty(text: &str) -> bool {
    !text.is_empty()
}

/// ALIASES steps 2–3 (§1.4): sorts `names` in code point order (how they are held from
/// then on) and answers whether no name equals another.
#[inline]
pub(crate) fn sort_aliases(names: &mut [String]) -> bool {
    names.sort_unstable();
    names.windows(2).all(|w| w[0] != w[1])
}

/// ADDR (§2.4 step 4): the exclusive end `address + nbytes` of a byte range, or `None`
/// when it does not fit in a u64 (`address_range_overflow`).
#[inline]
pub(crate) const fn end_address(address: u64, nbytes: u64) -> Option<u64> {
    address.checked_add(nbytes)
}
