//! The named value checks of contract §1.4 (INT, STR, INTS, ALIASES, SEQ).
//!
//! Every procedure of the contract is written in terms of these; each returns the typed
//! value on success and the contract's error, located at the member that held the value,
//! on failure.

use crate::error::{Code, Detail, Error, Result};
use crate::path::Path;
use crate::rules::values::{at_least, is_non_empty, sort_aliases};
use crate::value::Value;

/// INT(field, min): an integer, at least `min`, at most 2^64−1.
pub(crate) fn int(value: &Value<'_>, field: &str, min: u64, path: &Path<'_>) -> Result<u64> {
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
pub(crate) fn opt_int(
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
pub(crate) fn string<'v>(value: &'v Value<'_>, field: &str, path: &Path<'_>) -> Result<&'v str> {
    match value {
        Value::Str(s) if is_non_empty(s) => Ok(s),
        _ => Err(empty_string(field, path)),
    }
}

/// STR on an optional value: not set gives `None`.
pub(crate) fn opt_string<'v>(
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
pub(crate) fn empty_string(field: &str, path: &Path<'_>) -> Error {
    Error::at(
        Code::EmptyString,
        format!("{field} must be a non-empty string"),
        path,
    )
}

/// INTS(field, min): an array of integers, each checked by INT; the message names the array.
pub(crate) fn ints(value: &Value<'_>, field: &str, min: u64, path: &Path<'_>) -> Result<Vec<u64>> {
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
pub(crate) fn seq<'v, 'a>(
    value: &'v Value<'a>,
    label: &str,
    path: &Path<'_>,
) -> Result<&'v [Value<'a>]> {
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
pub(crate) fn aliases(value: &Value<'_>, path: &Path<'_>) -> Result<Vec<String>> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

    fn s(text: &str) -> Value<'_> {
        Value::Str(Cow::Borrowed(text))
    }

    #[test]
    fn int_distinguishes_type_minimum_and_range() {
        let p = Path::Root;
        assert_eq!(int(&Value::UInt(3), "x", 1, &p).unwrap(), 3);
        let codes: Vec<Code> = [
            Value::UInt(0),
            Value::NegInt(Cow::Borrowed("-99999999999999999999999")),
            Value::BigUInt(Cow::Borrowed("18446744073709551616")),
            Value::Float(Cow::Borrowed("2.0")),
            Value::Bool(true),
            Value::Null,
            s("1"),
        ]
        .iter()
        .map(|v| int(v, "x", 1, &p).unwrap_err().code())
        .collect();
        assert_eq!(
            codes,
            [
                Code::BelowMinimum,
                Code::BelowMinimum,
                Code::U64Overflow,
                Code::NotAnInteger,
                Code::NotAnInteger,
                Code::NotAnInteger,
                Code::NotAnInteger
            ]
        );
        assert_eq!(
            int(&Value::UInt(0), "itemsize", 1, &p)
                .unwrap_err()
                .message(),
            "itemsize must be at least 1"
        );
    }

    #[test]
    fn ints_names_the_array() {
        let p = Path::Root;
        let err = ints(
            &Value::Array(vec![Value::UInt(1), Value::Null]),
            "local_shape",
            1,
            &p,
        )
        .unwrap_err();
        assert_eq!(err.message(), "local_shape must be an integer");
        let err = ints(&s("x"), "local_shape", 1, &p).unwrap_err();
        assert_eq!(err.code(), Code::NotASequence);
        assert_eq!(err.message(), "local_shape must contain integers");
    }

    #[test]
    fn aliases_are_sorted_and_distinct() {
        let p = Path::Root;
        let v = Value::Array(vec![s("zeta"), s("alpha")]);
        assert_eq!(aliases(&v, &p).unwrap(), ["alpha", "zeta"]);
        let dup = Value::Array(vec![s("a"), s("a")]);
        assert_eq!(
            aliases(&dup, &p).unwrap_err().code(),
            Code::AliasesDuplicate
        );
        for bad in [Value::Null, s("a"), Value::Array(vec![s("")])] {
            assert_eq!(aliases(&bad, &p).unwrap_err().code(), Code::AliasesInvalid);
        }
    }

    #[test]
    fn string_rejects_empty_and_non_strings() {
        let p = Path::Root;
        assert_eq!(string(&s("a"), "f", &p).unwrap(), "a");
        for bad in [s(""), Value::Null, Value::UInt(1)] {
            let err = string(&bad, "model_id", &p).unwrap_err();
            assert_eq!(err.code(), Code::EmptyString);
            assert_eq!(err.message(), "model_id must be a non-empty string");
        }
    }
}
