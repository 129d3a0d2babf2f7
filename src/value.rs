//! The document tree every contract check reads: JSON values with exact integers.
//!
//! Numbers keep what the contract needs (contract §4.3): an integer in u64 range is held
//! exactly; a negative integer, an integer above 2^64−1 and a non-integer number keep their
//! text, so the INT check can tell `below_minimum`, `u64_overflow` and `not_an_integer`
//! apart. Strings borrow from the input when they contain no escape.

use std::borrow::Cow;

/// A JSON value as read by the strict reader (or built by a binding from its own objects).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value<'a> {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// An integer in 0..=2^64−1 (`-0` is 0).
    UInt(u64),
    /// A negative integer, as written.
    NegInt(Cow<'a, str>),
    /// A non-negative integer above 2^64−1, as written.
    BigUInt(Cow<'a, str>),
    /// A number with a fraction or an exponent, as written.
    Float(Cow<'a, str>),
    /// A string of Unicode scalar values.
    Str(Cow<'a, str>),
    /// An array.
    Array(Vec<Value<'a>>),
    /// An object; members in document order, keys distinct.
    Object(Object<'a>),
}

/// A JSON object: members in document order. The reader guarantees distinct keys.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Object<'a> {
    members: Vec<(Cow<'a, str>, Value<'a>)>,
}

impl<'a> Object<'a> {
    /// An object from members whose keys the caller guarantees to be distinct.
    pub fn from_members(members: Vec<(Cow<'a, str>, Value<'a>)>) -> Self {
        Object { members }
    }

    /// The member named `key`, if present.
    pub fn get(&self, key: &str) -> Option<&Value<'a>> {
        self.members
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, value)| value)
    }

    /// The number of members.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Whether the object has no member.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// The members, in document order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value<'a>)> {
        self.members.iter().map(|(k, v)| (k.as_ref(), v))
    }

    /// Whether the key set is exactly `keys` (given without duplicates).
    pub fn has_exact_keys(&self, keys: &[&str]) -> bool {
        self.members.len() == keys.len() && keys.iter().all(|k| self.get(k).is_some())
    }
}

impl<'a> Value<'a> {
    /// The value as an object, if it is one.
    pub fn as_object(&self) -> Option<&Object<'a>> {
        match self {
            Value::Object(object) => Some(object),
            _ => None,
        }
    }

    /// Copies every borrowed string, detaching the value from the input text.
    pub fn into_owned(self) -> Value<'static> {
        fn own(s: Cow<'_, str>) -> Cow<'static, str> {
            Cow::Owned(s.into_owned())
        }
        match self {
            Value::Null => Value::Null,
            Value::Bool(b) => Value::Bool(b),
            Value::UInt(n) => Value::UInt(n),
            Value::NegInt(s) => Value::NegInt(own(s)),
            Value::BigUInt(s) => Value::BigUInt(own(s)),
            Value::Float(s) => Value::Float(own(s)),
            Value::Str(s) => Value::Str(own(s)),
            Value::Array(items) => Value::Array(items.into_iter().map(Value::into_owned).collect()),
            Value::Object(object) => Value::Object(Object {
                members: object
                    .members
                    .into_iter()
                    .map(|(k, v)| (own(k), v.into_owned()))
                    .collect(),
            }),
        }
    }
}
