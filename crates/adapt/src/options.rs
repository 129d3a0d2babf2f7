//! What an adaptation is for: the parallel axes and the rank grid, the model's id and
//! revision, the model dimensions pieces are counted in, and the bound on the fragments it
//! may produce.

use std::collections::BTreeMap;

use weight_manifest::error::{Code, Error};

/// The parallel axis a split runs over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Axis {
    /// Tensor parallelism.
    Tp,
    /// Expert parallelism.
    Ep,
}

impl Axis {
    /// `tp` or `ep`.
    pub fn name(self) -> &'static str {
        match self {
            Axis::Tp => "tp",
            Axis::Ep => "ep",
        }
    }
}

/// The rank grid: every placement fragment sits on one (dp, pp, tp, ep) coordinate with
/// each coordinate below its size here. Every size must be at least 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grid {
    /// Data-parallel replicas; each repeats the whole layout.
    pub dp: u64,
    /// Pipeline stages.
    pub pp: u64,
    /// Tensor-parallel ranks per stage.
    pub tp: u64,
    /// Expert-parallel ranks per stage.
    pub ep: u64,
}

impl Default for Grid {
    fn default() -> Self {
        Grid {
            dp: 1,
            pp: 1,
            tp: 1,
            ep: 1,
        }
    }
}

impl Grid {
    /// Checks that every size is at least 1 (`adapt_grid_invalid`).
    pub fn check(&self) -> Result<(), Error> {
        for (name, size) in [
            ("dp", self.dp),
            ("pp", self.pp),
            ("tp", self.tp),
            ("ep", self.ep),
        ] {
            if size == 0 {
                return Err(Error::new(
                    Code::AdaptGridInvalid,
                    format!("{name} must be at least 1"),
                ));
            }
        }
        Ok(())
    }
}

/// What the placement is for: the model's id and revision, the rank grid and the model
/// dimensions the rules count pieces in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdaptOptions {
    /// The placement's model_id.
    pub model_id: String,
    /// The placement's revision.
    pub revision: String,
    /// The rank grid.
    pub grid: Grid,
    /// Model dimensions by name (`heads`, `kv_heads`, ...), for splits with `pieces`.
    pub dims: BTreeMap<String, u64>,
}

impl AdaptOptions {
    /// Options for `model_id` at `revision` on `grid`.
    pub fn new(model_id: impl Into<String>, revision: impl Into<String>, grid: Grid) -> Self {
        AdaptOptions {
            model_id: model_id.into(),
            revision: revision.into(),
            grid,
            dims: BTreeMap::new(),
        }
    }

    /// These options with the model dimension `name` set to `value`.
    #[must_use]
    pub fn with_dim(mut self, name: impl Into<String>, value: u64) -> Self {
        self.dims.insert(name.into(), value);
        self
    }
}

/// The most fragments one adaptation may produce (tensors × pieces × dp). A larger grid is
/// `adapt_grid_invalid` before anything is allocated.
pub const MAX_FRAGMENTS: u64 = 10_000_000;
