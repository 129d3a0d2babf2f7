//! The value checks of contract §1.4 (INT, STR, INTS, ALIASES, SEQ) and the per-value rules
//! under them (§1.4, §2.3, §2.4): the field minimums, STR's non-empty string, ALIASES'
//! order and uniqueness, ADDR's end address.
//!
//! Every procedure of the contract is written in terms of these checks; each returns the
//! typed value on success and the contract's error, located at the member that held the
//! value, on failure. The predicates below them are what the fast paths ask. The checks
//! are public for the readers of other formats built on this crate (Mooncake's).

use crate::error::{Code, Detail, Error, Result};
use crate::path::Path;
use crate::value::Value;

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

/// INT(field, min): an integer, at least `min`, at most 2^64−1.
pub fn int(value: &Value<'_>, field: &str, min: u64, path: &Path<'_>) -> Result<u64> {
    match value {
        Value::UInt(n) if at_least(*n, min) => Ok(*n),
        Value::UInt(n) => Err(below_minimum(field, min, &n.to_string(), path)),
        Value::NegInt(text) => Err(below_minimum(field, min, text, path)),
        Value::BigUInt(_) => Err(Error::at(
            Code::U64Overflow,
            format!("{field} must fit in an unsigned 64-bit integer"),
            path,
        )),
        _ => Err(Error::at(
            Code::NotAnInteger,
            format!("{field} must be an integer"),
            path,
        )),
    }
}

/// INT on an optional value: not set (absent or `null`) gives `None`.
pub fn opt_int(
    value: Option<&Value<'_>>,
    field: &str,
    min: u64,
    path: &Path<'_>,
) -> Result<Option<u64>> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(v) => int(v, field, min, path).map(Some),
    }
}

/// `below_minimum`; `got` is the integer as written (digits, maybe a sign).
fn below_minimum(field: &str, min: u64, got: &str, path: &Path<'_>) -> Error {
    Error::at(
        Code::BelowMinimum,
        format!("{field} must be at least {min}"),
        path,
    )
    .with_detail(Detail::BelowMinimum {
        minimum: min,
        got: got.to_owned(),
    })
}

/// STR(field): a string with at least one scalar.
pub fn string<'v>(value: &'v Value<'_>, field: &str, path: &Path<'_>) -> Result<&'v str> {
    match value {
        Value::Str(s) if is_non_empty(s) => Ok(s),
        _ => Err(empty_string(field, path)),
    }
}

/// STR on an optional value: not set gives `None`.
pub fn opt_string<'v>(
    value: Option<&'v Value<'_>>,
    field: &str,
    path: &Path<'_>,
) -> Result<Option<&'v str>> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(v) => string(v, field, path).map(Some),
    }
}

/// The `empty_string` error of STR.
pub fn empty_string(field: &str, path: &Path<'_>) -> Error {
    Error::at(
        Code::EmptyString,
        format!("{field} must be a non-empty string"),
        path,
    )
}

/// INTS(field, min): an array of integers, each checked by INT; the message names the array.
pub fn ints(value: &Value<'_>, field: &str, min: u64, path: &Path<'_>) -> Result<Vec<u64>> {
    let Value::Array(items) = value else {
        return Err(Error::at(
            Code::NotASequence,
            format!("{field} must contain integers"),
            path,
        ));
    };
    // An element that fails is located at itself: `/tensors/0/global_shape/1`.
    items
        .iter()
        .enumerate()
        .map(|(i, item)| int(item, field, min, &path.index(i)))
        .collect()
}

/// SEQ(label): the value is an array.
pub fn seq<'v, 'a>(value: &'v Value<'a>, label: &str, path: &Path<'_>) -> Result<&'v [Value<'a>]> {
    match value {
        Value::Array(items) => Ok(items),
        _ => Err(Error::at(
            Code::NotASequence,
            format!("{label} must be a sequence"),
            path,
        )),
    }
}

/// ALIASES: an array of distinct non-empty strings, returned sorted in code point order.
pub fn aliases(value: &Value<'_>, path: &Path<'_>) -> Result<Vec<String>> {
    let invalid = |at: &Path<'_>| {
        Error::at(
            Code::AliasesInvalid,
            "aliases must contain non-empty strings",
            at,
        )
    };
    let Value::Array(items) = value else {
        return Err(invalid(path));
    };
    let mut names = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        match item {
            Value::Str(s) if is_non_empty(s) => names.push(s.as_ref().to_owned()),
            _ => return Err(invalid(&path.index(i))),
        }
    }
    if !sort_aliases(&mut names) {
        // The first element that repeats an earlier one, as written.
        let repeated = (1..items.len()).find(|&j| items[..j].contains(&items[j]));
        let at = repeated.map_or(*path, |j| path.index(j));
        return Err(Error::at(
            Code::AliasesDuplicate,
            "aliases must not contain duplicates",
            &at,
        ));
    }
    Ok(names)
}
