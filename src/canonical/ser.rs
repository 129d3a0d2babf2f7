//! The `serde::Serializer` that writes the canonical encoding into a [`Sink`].

use std::ops::Range;

use serde::ser::{self, Serialize};

use super::escape::{write_i128, write_str, write_u128, write_u64};
use super::key::KeyCapture;
use super::sink::{EncodeError, Sink};

/// The canonical serializer over a sink.
pub(super) struct Encoder<'s, S: Sink + ?Sized> {
    sink: &'s mut S,
}

impl<'s, S: Sink + ?Sized> Encoder<'s, S> {
    pub(super) fn new(sink: &'s mut S) -> Self {
        Encoder { sink }
    }
}

#[cold]
fn unsupported(what: &str) -> EncodeError {
    EncodeError::new(format!("{what} cannot be encoded canonically"))
}

/// Writes `{"variant":` for the externally tagged enum forms.
fn open_variant<S: Sink + ?Sized>(sink: &mut S, variant: &str) {
    sink.put(b"{");
    write_str(sink, variant);
    sink.put(b":");
}

impl<'s, S: Sink + ?Sized> ser::Serializer for Encoder<'s, S> {
    type Ok = ();
    type Error = EncodeError;
    type SerializeSeq = Seq<'s, S>;
    type SerializeTuple = Seq<'s, S>;
    type SerializeTupleStruct = Seq<'s, S>;
    type SerializeTupleVariant = Seq<'s, S>;
    type SerializeMap = Map<'s, S>;
    type SerializeStruct = Struct<'s, S>;
    type SerializeStructVariant = Struct<'s, S>;

    fn serialize_bool(self, v: bool) -> Result<(), EncodeError> {
        self.sink.put(if v { b"true" } else { b"false" });
        Ok(())
    }
    fn serialize_i8(self, v: i8) -> Result<(), EncodeError> {
        self.serialize_i128(i128::from(v))
    }
    fn serialize_i16(self, v: i16) -> Result<(), EncodeError> {
        self.serialize_i128(i128::from(v))
    }
    fn serialize_i32(self, v: i32) -> Result<(), EncodeError> {
        self.serialize_i128(i128::from(v))
    }
    fn serialize_i64(self, v: i64) -> Result<(), EncodeError> {
        if v < 0 {
            self.sink.put(b"-");
        }
        write_u64(self.sink, v.unsigned_abs());
        Ok(())
    }
    fn serialize_i128(self, v: i128) -> Result<(), EncodeError> {
        write_i128(self.sink, v);
        Ok(())
    }
    fn serialize_u8(self, v: u8) -> Result<(), EncodeError> {
        self.serialize_u64(u64::from(v))
    }
    fn serialize_u16(self, v: u16) -> Result<(), EncodeError> {
        self.serialize_u64(u64::from(v))
    }
    fn serialize_u32(self, v: u32) -> Result<(), EncodeError> {
        self.serialize_u64(u64::from(v))
    }
    fn serialize_u64(self, v: u64) -> Result<(), EncodeError> {
        write_u64(self.sink, v);
        Ok(())
    }
    fn serialize_u128(self, v: u128) -> Result<(), EncodeError> {
        write_u128(self.sink, v);
        Ok(())
    }
    fn serialize_f32(self, _v: f32) -> Result<(), EncodeError> {
        Err(unsupported("a float"))
    }
    fn serialize_f64(self, _v: f64) -> Result<(), EncodeError> {
        Err(unsupported("a float"))
    }
    fn serialize_char(self, v: char) -> Result<(), EncodeError> {
        write_str(self.sink, v.encode_utf8(&mut [0u8; 4]));
        Ok(())
    }
    fn serialize_str(self, v: &str) -> Result<(), EncodeError> {
        write_str(self.sink, v);
        Ok(())
    }
    fn serialize_bytes(self, _v: &[u8]) -> Result<(), EncodeError> {
        Err(unsupported("a byte string"))
    }
    fn serialize_none(self) -> Result<(), EncodeError> {
        self.sink.put(b"null");
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), EncodeError> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), EncodeError> {
        self.serialize_none()
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), EncodeError> {
        self.serialize_none()
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), EncodeError> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), EncodeError> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), EncodeError> {
        open_variant(self.sink, variant);
        value.serialize(Encoder::new(&mut *self.sink))?;
        self.sink.put(b"}");
        Ok(())
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Seq<'s, S>, EncodeError> {
        self.sink.put(b"[");
        Ok(Seq::new(self.sink, b"]"))
    }
    fn serialize_tuple(self, len: usize) -> Result<Seq<'s, S>, EncodeError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<Seq<'s, S>, EncodeError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Seq<'s, S>, EncodeError> {
        open_variant(self.sink, variant);
        self.sink.put(b"[");
        Ok(Seq::new(self.sink, b"]}"))
    }
    fn serialize_map(self, len: Option<usize>) -> Result<Map<'s, S>, EncodeError> {
        Ok(Map {
            sink: self.sink,
            entries: Vec::with_capacity(len.unwrap_or(0)),
            values: Vec::new(),
            key: None,
        })
    }
    fn serialize_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Struct<'s, S>, EncodeError> {
        self.sink.put(b"{");
        Ok(Struct::new(self.sink, b"}"))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Struct<'s, S>, EncodeError> {
        open_variant(self.sink, variant);
        self.sink.put(b"{");
        Ok(Struct::new(self.sink, b"}}"))
    }
}

/// An array (or tuple, or the array inside a tuple variant) being written.
pub(super) struct Seq<'s, S: Sink + ?Sized> {
    sink: &'s mut S,
    first: bool,
    close: &'static [u8],
}

impl<'s, S: Sink + ?Sized> Seq<'s, S> {
    fn new(sink: &'s mut S, close: &'static [u8]) -> Self {
        Seq {
            sink,
            first: true,
            close,
        }
    }

    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), EncodeError> {
        if !self.first {
            self.sink.put(b",");
        }
        self.first = false;
        value.serialize(Encoder::new(&mut *self.sink))
    }

    fn finish(self) {
        self.sink.put(self.close);
    }
}

macro_rules! seq_impl {
    ($($trait:ident :: $method:ident),*) => {
        $(
            impl<S: Sink + ?Sized> ser::$trait for Seq<'_, S> {
                type Ok = ();
                type Error = EncodeError;
                fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), EncodeError> {
                    self.element(value)
                }
                fn end(self) -> Result<(), EncodeError> {
                    self.finish();
                    Ok(())
                }
            }
        )*
    };
}

seq_impl!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

/// A struct (or the object inside a struct variant) being written, fields in declaration
/// order, which must be strictly ascending.
pub(super) struct Struct<'s, S: Sink + ?Sized> {
    sink: &'s mut S,
    previous: Option<&'static str>,
    close: &'static [u8],
}

impl<'s, S: Sink + ?Sized> Struct<'s, S> {
    fn new(sink: &'s mut S, close: &'static [u8]) -> Self {
        Struct {
            sink,
            previous: None,
            close,
        }
    }

    fn field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), EncodeError> {
        if let Some(previous) = self.previous {
            if previous >= key {
                return Err(EncodeError::new(format!(
                    "struct fields are not in sorted order: {key} after {previous}"
                )));
            }
            self.sink.put(b",");
        }
        self.previous = Some(key);
        write_str(self.sink, key);
        self.sink.put(b":");
        value.serialize(Encoder::new(&mut *self.sink))
    }
}

macro_rules! struct_impl {
    ($($trait:ident),*) => {
        $(
            impl<S: Sink + ?Sized> ser::$trait for Struct<'_, S> {
                type Ok = ();
                type Error = EncodeError;
                fn serialize_field<T: Serialize + ?Sized>(
                    &mut self,
                    key: &'static str,
                    value: &T,
                ) -> Result<(), EncodeError> {
                    self.field(key, value)
                }
                fn end(self) -> Result<(), EncodeError> {
                    self.sink.put(self.close);
                    Ok(())
                }
            }
        )*
    };
}

struct_impl!(SerializeStruct, SerializeStructVariant);

/// A map being buffered: entries are sorted by key when it ends.
pub(super) struct Map<'s, S: Sink + ?Sized> {
    sink: &'s mut S,
    /// Each key with the range of its encoded value in `values`.
    entries: Vec<(String, Range<usize>)>,
    values: Vec<u8>,
    key: Option<String>,
}

impl<S: Sink + ?Sized> ser::SerializeMap for Map<'_, S> {
    type Ok = ();
    type Error = EncodeError;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), EncodeError> {
        self.key = Some(key.serialize(KeyCapture)?);
        Ok(())
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), EncodeError> {
        let key = self
            .key
            .take()
            .ok_or_else(|| EncodeError::new("map value without a key"))?;
        let start = self.values.len();
        value.serialize(Encoder::new(&mut self.values))?;
        self.entries.push((key, start..self.values.len()));
        Ok(())
    }

    fn end(mut self) -> Result<(), EncodeError> {
        self.entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        if let Some(pair) = self.entries.windows(2).find(|pair| pair[0].0 == pair[1].0) {
            return Err(EncodeError::new(format!(
                "duplicate map key: {}",
                pair[0].0
            )));
        }
        self.sink.put(b"{");
        for (i, (key, range)) in self.entries.iter().enumerate() {
            if i > 0 {
                self.sink.put(b",");
            }
            write_str(self.sink, key);
            self.sink.put(b":");
            self.sink
                .put(self.values.get(range.clone()).unwrap_or_default());
        }
        self.sink.put(b"}");
        Ok(())
    }
}
