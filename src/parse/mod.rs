//! Strict parsers of the three wire forms: placement (§6.2), runtime manifest (§9.1) and
//! runtime binding manifest (§9.2). Exact key sets at every level.

/// The three constructors every manifest kind has (the graded API): `from_json` (text),
/// `from_value` (a tree a binding built) and `from_wire` (a typed value), each under
/// its options, all through the kind's one reader `$read` / `$from_value`.
macro_rules! manifest_constructors {
    ($kind:ident, $wire:ident, $read:ident, $from_value:ident, $label:literal, $clause:literal, $(#[$json_doc:meta])*) => {
        impl $kind {
            #[doc = concat!(
                "Parses ", $label, " JSON strictly (contract ", $clause, "), under `options.limits`."
            )]
            $(#[$json_doc])*
            pub fn from_json(text: impl AsRef<[u8]>, options: &Options<'_>) -> Result<$kind> {
                options.apply(|| $read(text.as_ref(), &options.limits))
            }

            /// Parses a document already read into a [`Value`] (for bindings that build
            /// the tree from their own objects): the count and dimension limits of
            /// `options.limits` apply here, the reader's when the tree was read.
            pub fn from_value(document: &Value<'_>, options: &Options<'_>) -> Result<$kind> {
                options.apply(|| $from_value(document, &options.limits))
            }

            /// Validates a typed manifest exactly as if it were its JSON document (default
            /// limits); error paths point into that document.
            pub fn from_wire(manifest: &$wire) -> Result<$kind> {
                $read(&super::encode_wire(manifest), &Limits::default())
            }
        }
    };
}

mod binding;
pub(crate) mod fast;
mod kind;
mod members;
mod placement;
mod runtime;

#[cfg(test)]
pub(crate) use fast::placement as fast_placement;
pub(crate) use fast::placement_from_manifest;
pub(crate) use fast::runtime_inventory as fast_runtime_inventory;
pub(crate) use fast::runtime_inventory_summary as fast_runtime_inventory_summary;
pub(crate) use members::top_object as top_object_of;

use serde::Serialize;

use crate::canonical;

/// The canonical JSON of a generated wire value, which the typed constructors parse so
/// that typed and textual input run exactly the same checks.
pub(crate) fn encode_wire<T: Serialize>(value: &T) -> Vec<u8> {
    canonical::to_vec(value)
        .unwrap_or_else(|e| unreachable!("wire types are always encodable: {e}"))
}
