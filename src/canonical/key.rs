//! Map keys: captured as text (unescaped) so that entries sort in code point order.

use serde::ser::{Impossible, Serialize, Serializer};

use super::sink::EncodeError;

/// A serializer that accepts only strings (and newtypes or unit variants that serialize as
/// strings), yielding the key text.
pub(super) struct KeyCapture;

#[cold]
fn not_a_string() -> EncodeError {
    EncodeError::new("map keys must be strings")
}

macro_rules! reject {
    ($($method:ident($($ty:ty),*);)*) => {
        $(
            fn $method(self, $(_: $ty),*) -> Result<String, EncodeError> {
                Err(not_a_string())
            }
        )*
    };
}

impl Serializer for KeyCapture {
    type Ok = String;
    type Error = EncodeError;
    type SerializeSeq = Impossible<String, EncodeError>;
    type SerializeTuple = Impossible<String, EncodeError>;
    type SerializeTupleStruct = Impossible<String, EncodeError>;
    type SerializeTupleVariant = Impossible<String, EncodeError>;
    type SerializeMap = Impossible<String, EncodeError>;
    type SerializeStruct = Impossible<String, EncodeError>;
    type SerializeStructVariant = Impossible<String, EncodeError>;

    fn serialize_str(self, v: &str) -> Result<String, EncodeError> {
        Ok(v.to_owned())
    }

    fn serialize_char(self, v: char) -> Result<String, EncodeError> {
        Ok(v.to_string())
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<String, EncodeError> {
        Ok(variant.to_owned())
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<String, EncodeError> {
        value.serialize(self)
    }

    reject! {
        serialize_bool(bool);
        serialize_i8(i8);
        serialize_i16(i16);
        serialize_i32(i32);
        serialize_i64(i64);
        serialize_i128(i128);
        serialize_u8(u8);
        serialize_u16(u16);
        serialize_u32(u32);
        serialize_u64(u64);
        serialize_u128(u128);
        serialize_f32(f32);
        serialize_f64(f64);
        serialize_bytes(&[u8]);
        serialize_none();
        serialize_unit();
        serialize_unit_struct(&'static str);
    }

    fn serialize_some<T: Serialize + ?Sized>(self, _value: &T) -> Result<String, EncodeError> {
        Err(not_a_string())
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<String, EncodeError> {
        Err(not_a_string())
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq, EncodeError> {
        Err(not_a_string())
    }

    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple, EncodeError> {
        Err(not_a_string())
    }

    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct, EncodeError> {
        Err(not_a_string())
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, EncodeError> {
        Err(not_a_string())
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap, EncodeError> {
        Err(not_a_string())
    }

    fn serialize_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStruct, EncodeError> {
        Err(not_a_string())
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, EncodeError> {
        Err(not_a_string())
    }
}
