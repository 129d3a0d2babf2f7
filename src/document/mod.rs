//! The reading pipeline: one path from bytes to a validated value for every document kind,
//! this crate's and those of the crates built on it (the content manifest, Mooncake's
//! formats).
//!
//! [`read`] checks the document's size, then that it is UTF-8, once each; offers the text
//! to the kind's one-pass reader ([`Document::fast`]), which only ever says "valid"
//! (anything it does not read, and every rejection, it leaves to the general path); and
//! otherwise reads the document tree ([`crate::reader`], contract §4) and runs the kind's
//! general rules ([`Document::from_tree`]), which name every rejection with its code,
//! message and pointer. The limits, the geometry budget of the box searches among them,
//! come with the [`Options`](crate::Options) as an argument all the way down.
//!
//! The shape checks every strict reader starts with (the top level is an object, an object
//! has exactly its schema's keys, and which document kind the keys are when they are
//! another's) are [`top_object`], [`manifest_top`] and [`exact`]. A kind read straight
//! into its wire type by serde (a plan, a coverage report, a content manifest) implements
//! [`Typed`] and is a [`Document`] by that.
//!
//! ```
//! use weight_manifest::document::{self, Document};
//! use weight_manifest::value::Value;
//! use weight_manifest::{Options, Result};
//!
//! /// A document kind of one's own: an object with exactly the key "name".
//! struct Named;
//!
//! impl Document for Named {
//!     type Output = String;
//!     const LABEL: &'static str = "named document";
//!
//!     fn from_tree(tree: &Value<'_>, _: &Options<'_>) -> Result<String> {
//!         let top = document::manifest_top(tree, Self::LABEL, &["name"])?;
//!         Ok(weight_manifest::rules::values::string(
//!             document::member(top, "name"),
//!             "name",
//!             &weight_manifest::Path::Root.key("name"),
//!         )?
//!         .to_owned())
//!     }
//! }
//!
//! let options = Options::default();
//! assert_eq!(document::read::<Named>(br#"{"name":"x"}"#, &options)?, "x");
//! let error = document::read::<Named>(b"{\"name\":\xff}", &options).unwrap_err();
//! assert_eq!(error.message(), "named document is not valid JSON");
//! let error = document::read::<Named>(br#"{"nom":"x"}"#, &options).unwrap_err();
//! assert_eq!(error.code().as_str(), "fields_mismatch");
//! # Ok::<(), weight_manifest::Error>(())
//! ```

pub(crate) mod kind;
mod pipeline;
mod shape;
mod typed;

pub use kind::document_kind;
pub use pipeline::{read, Document};
pub use shape::{exact, manifest_top, member, top_object};
pub(crate) use typed::check_id;
pub use typed::Typed;
