//! Validated domain values: a value of these types exists only in validated form.

/// The logical view (§8.2) of a placement or runtime fragment, `$id` naming its id member.
macro_rules! logical_fragment {
    ($fragment:expr, $id:ident) => {{
        let fragment = $fragment;
        $crate::rules::logical::LogicalFragment {
            id: &fragment.$id,
            id_key: stringify!($id),
            tensor_id: &fragment.tensor_id,
            rank: &fragment.rank,
            global_offset: &fragment.global_offset,
            local_shape: &fragment.local_shape,
            nbytes: fragment.nbytes,
        }
    }};
}

pub(crate) mod binding;
mod owner;
pub(crate) mod placement;
pub(crate) mod runtime;

pub use binding::Binding;
pub use owner::Owner;
pub use placement::Placement;
pub use runtime::Runtime;

pub(crate) use binding::construct_binding;
pub(crate) use placement::construct_placement;
pub(crate) use runtime::construct_runtime;
