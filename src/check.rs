//! The named value checks of contract §1.4 (INT, STR, INTS, ALIASES, SEQ).
//!
//! Every procedure of the contract is written in terms of these; each returns the typed
//! value on success and the contract's error, located at the member that held the value,
//! on failure.

use crate::error::{Code, Error, Result};
use crate::path::Path;
use crate::rules::values::{at_least, is_non_empty, sort_aliases};
use crate::value::Value;

/// INT(field, min): an integer, at least `min`, at most 2^64−1.
pub(crate) fn int(value: &Value<'_>, field: &str, min: u64, path: &Path<'_>) -> Result<u64> {
    match value {
        Value::UInt(n) if at_least(*n, min) => Ok(*n),
        Value::UInt(_) | Value::NegInt(_) => Err(below_minimum(field, min, path)),
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

fn below_minimum(field: &str, min: u64, path: &Path<'_>) -> Error {
    Error::at(
        Code::BelowMinimum,
        format!("{field} must be at least {min}"),
        path,
    )
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
    items
        .iter()
        .map(|item| int(item, field, min, path))
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
    let invalid = || {
        Error::at(
            Code::AliasesInvalid,
            "aliases must contain non-empty strings",
            path,
        )
    };
    let Value::Array(items) = value else {
        return Err(invalid());
    };
    let mut names = Vec::with_capacity(items.len());
    for item in items {
        match item {
            Value::Str(s) if is_non_empty(s) => names.push(s.as_ref().to_owned()),
            _ => return Err(invalid()),
        }
    }
    if !sort_aliases(&mut names) {
        return Err(Error::at(
            Code::AliasesDuplicate,
            "aliases must not contain duplicates",
            path,
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
