//! Boxes and the one structure that finds intersecting ones (a k-d tree,
//! [`BoxIndex`]); shared by validation (the §8.3 sweep), coverage (tiling analysis) and
//! planning (source search), all under a [`Work`] budget.

mod box_index;
mod boxref;
mod corners;
mod split;
mod sweep;
mod tiling;
mod volume;
pub(crate) mod work;

pub(crate) use box_index::BoxIndex;
pub(crate) use boxref::BoxRef;
pub(crate) use sweep::first_intersection;
pub(crate) use tiling::{analyse, Tiling};
pub(crate) use volume::Natural;
pub(crate) use work::{Exhausted, Work};
