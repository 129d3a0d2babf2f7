//! What the layout gives each tensor ([`TensorLayout`]): its rule, stage and how its boxes
//! are cut, and the boxes themselves ([`Piece`]); the values the layout and the stage and
//! expert assignments share.

use crate::header::HeaderTensor;
use crate::options::{Axis, Grid};

/// How the boxes of one tensor are cut within its stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    /// The whole tensor on every tp and ep rank.
    Replicate,
    /// Slices of `chunk` on `dim`: rank r of `over` holds slice r / `share` (the last ones
    /// clipped at the dim's size when the engine pads it).
    Split {
        /// The sliced dimension.
        dim: usize,
        /// The axis.
        over: Axis,
        /// The slice length.
        chunk: u64,
        /// How many consecutive ranks hold the same slice (1 but for pieces below n).
        share: u64,
    },
    /// On ep rank `owner` only, whole or in `(dim, chunk)` slices over tp.
    Expert {
        /// The owning ep rank.
        owner: u64,
        /// The tp split, if any.
        split: Option<(usize, u64)>,
    },
}

/// One box on one (tp, ep) rank of the tensor's stage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Piece {
    /// The tp coordinate.
    pub tp: u64,
    /// The ep coordinate.
    pub ep: u64,
    /// The box's global_offset.
    pub offset: Vec<u64>,
    /// The box's local_shape.
    pub shape: Vec<u64>,
}

/// The layout of one tensor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorLayout<'c> {
    /// The tensor.
    pub tensor: &'c HeaderTensor,
    /// The index of the rule that placed it.
    pub rule: usize,
    /// Its `layer` value.
    pub layer: Option<u64>,
    /// Its `expert` value.
    pub expert: Option<u64>,
    /// Its pipeline stage.
    pub stage: u64,
    /// How its boxes are cut.
    pub cut: Cut,
}

impl TensorLayout<'_> {
    /// The descriptor's partition_dim: the split dim, if any.
    pub fn partition_dim(&self) -> Option<u64> {
        match self.cut {
            Cut::Replicate | Cut::Expert { split: None, .. } => None,
            Cut::Split { dim, .. }
            | Cut::Expert {
                split: Some((dim, _)),
                ..
            } => Some(dim as u64),
        }
    }

    /// The number of pieces on one dp replica.
    pub(crate) fn piece_count(&self, grid: Grid) -> Option<u64> {
        match self.cut {
            Cut::Expert { .. } => Some(grid.tp),
            _ => grid.tp.checked_mul(grid.ep),
        }
    }

    /// The boxes, tp-major then ep.
    pub fn pieces(&self, grid: Grid) -> impl Iterator<Item = Piece> + '_ {
        let eps = match self.cut {
            Cut::Expert { owner, .. } => owner..owner.saturating_add(1),
            _ => 0..grid.ep,
        };
        (0..grid.tp).flat_map(move |tp| {
            eps.clone().map(move |ep| {
                let mut offset = vec![0; self.tensor.shape.len()];
                let mut shape = self.tensor.shape.clone();
                let slice = match self.cut {
                    Cut::Replicate | Cut::Expert { split: None, .. } => None,
                    Cut::Split {
                        dim,
                        over,
                        chunk,
                        share,
                    } => Some((dim, chunk, (if over == Axis::Tp { tp } else { ep }) / share)),
                    Cut::Expert {
                        split: Some((dim, chunk)),
                        ..
                    } => Some((dim, chunk, tp)),
                };
                if let Some((dim, chunk, index)) = slice {
                    // index < n and chunk · n is the (padded) extent, so the product cannot
                    // overflow; a padded split's last slices end at the extent.
                    offset[dim] = index.saturating_mul(chunk);
                    shape[dim] = chunk.min(self.tensor.shape[dim].saturating_sub(offset[dim]));
                }
                Piece {
                    tp,
                    ep,
                    offset,
                    shape,
                }
            })
        })
    }
}
