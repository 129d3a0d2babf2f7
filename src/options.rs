//! [`Options`]: the one value every constructor that reads a document takes.
//!
//! Each document type has one constructor per input kind (`from_json` for text,
//! `from_value` for a tree a binding built, `from_inventory_json` / `from_inventory` for
//! the inventory documents, `from_records` for a binding's own record objects), and every
//! one of them takes `&Options`: the document limits, the address semantics of the
//! inventory readers (§10.2) and the owner resolver. A reader uses what applies to it and
//! ignores the rest (a placement has no address semantics).
//!
//! ```
//! use weight_manifest::{AddressSemantics, Limits, Options, Placement};
//!
//! let text = r#"{"fragments":[],"model_id":"m","placement_id":null,"revision":"r","tensors":[]}"#;
//! let placement = Placement::from_json(text, &Options::default())?;
//! assert_eq!(placement.fragments().len(), 0);
//!
//! let strict = Options::default().with_limits(Limits { max_string_bytes: 0, ..Limits::default() });
//! assert!(Placement::from_json(text, &strict).is_err());
//! assert_eq!(Options::view().address_semantics, AddressSemantics::View);
//! # Ok::<(), weight_manifest::Error>(())
//! ```

use crate::error::{Code, Error, Result};
use crate::limits::Limits;
use crate::model::Owner;
use crate::value::Value;

/// Resolves an inventory record to the owner of its fragment's memory (any value the
/// caller wants carried beside the fragment; never compared, hashed or serialised).
pub type OwnerResolver<'o> = dyn Fn(&Value<'_>) -> Option<Owner> + 'o;

/// What the addresses of a runtime or binding inventory mean (§10.2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum AddressSemantics {
    /// The option not given: every record's storage_offset and byte_offset must be 0
    /// (else `offsets_require_view_semantics`).
    #[default]
    Unspecified,
    /// `"view"`: each address already points at the first byte of the view, after the
    /// framework's storage_offset and byte_offset; addresses are never adjusted.
    View,
}

impl AddressSemantics {
    /// The option as a dynamically typed caller (a conformance fixture, Python) gives it:
    /// absent or `null` is [`AddressSemantics::Unspecified`], exactly `"view"` is
    /// [`AddressSemantics::View`], anything else is `address_semantics_invalid`.
    ///
    /// §10.2 checks the option right after the document's top-level object check, so a
    /// caller holding a raw option calls this only once its document is known to be an
    /// object (a document that is not one is rejected first, as `not_an_object`).
    pub fn from_value(given: Option<&Value<'_>>) -> Result<AddressSemantics> {
        match given {
            None | Some(Value::Null) => Ok(AddressSemantics::Unspecified),
            Some(Value::Str(s)) if s == "view" => Ok(AddressSemantics::View),
            Some(_) => Err(Error::new(
                Code::AddressSemanticsInvalid,
                "address_semantics must be 'view'",
            )),
        }
    }

    /// The option as given, for an inventory `document` already read: §10.2 checks it
    /// right after the top-level object check, so for a document that is not an object
    /// this is `Unspecified` (the inventory reader then rejects the document as
    /// `not_an_object`), and otherwise [`AddressSemantics::from_value`].
    pub fn for_document(
        document: &Value<'_>,
        given: Option<&Value<'_>>,
    ) -> Result<AddressSemantics> {
        match document {
            Value::Object(_) => AddressSemantics::from_value(given),
            _ => Ok(AddressSemantics::Unspecified),
        }
    }

    /// The option as given, for an inventory `text` not yet read (`label`: the inventory's
    /// label, e.g. [`RUNTIME_INVENTORY_LABEL`](crate::inventory::RUNTIME_INVENTORY_LABEL)):
    /// a valid option is returned as it is; for an invalid one the text is read first, so
    /// that a reader error or `not_an_object` is reported before it, as §10.2 orders them
    /// (a reader error is returned here).
    pub fn for_text(
        text: &[u8],
        given: Option<&Value<'_>>,
        label: &str,
        limits: &Limits,
    ) -> Result<AddressSemantics> {
        if let Ok(semantics) = AddressSemantics::from_value(given) {
            return Ok(semantics);
        }
        let document = crate::reader::read(text, label, limits)?;
        AddressSemantics::for_document(&document, given)
    }

    /// Whether `view` semantics are declared.
    pub fn is_view(self) -> bool {
        self == AddressSemantics::View
    }
}

/// The options of every document constructor. Each document type has one constructor per
/// input kind (`from_json`, `from_value`, `from_inventory_json`, `from_inventory`,
/// `from_records`), each taking `&Options`; a reader uses what applies to it (a placement
/// has no address semantics) and ignores the rest.
#[derive(Clone, Copy, Default)]
pub struct Options<'o> {
    /// The document limits (SECURITY.md); [`Limits::default()`] unless set.
    pub limits: Limits,
    /// The inventory readers' `address_semantics` option (§10.2).
    pub address_semantics: AddressSemantics,
    /// Called with each inventory record; its result becomes that fragment's owner.
    pub owners: Option<&'o OwnerResolver<'o>>,
}

impl std::fmt::Debug for Options<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("limits", &self.limits)
            .field("address_semantics", &self.address_semantics)
            .field("owners", &self.owners.map(|_| "<resolver>"))
            .finish()
    }
}

impl<'o> Options<'o> {
    /// The default options with `address_semantics` set to `view`.
    pub fn view() -> Options<'static> {
        Options {
            address_semantics: AddressSemantics::View,
            ..Options::default()
        }
    }

    /// These options with `limits`.
    #[must_use]
    pub fn with_limits(self, limits: Limits) -> Options<'o> {
        Options { limits, ..self }
    }

    /// These options with `address_semantics`.
    #[must_use]
    pub fn with_address_semantics(self, address_semantics: AddressSemantics) -> Options<'o> {
        Options {
            address_semantics,
            ..self
        }
    }

    /// These options with an owner resolver.
    #[must_use]
    pub fn with_owners<'p>(self, owners: &'p OwnerResolver<'p>) -> Options<'p>
    where
        'o: 'p,
    {
        Options {
            limits: self.limits,
            address_semantics: self.address_semantics,
            owners: Some(owners),
        }
    }
}
