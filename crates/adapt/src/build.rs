//! The placement: descriptors and fragments from the layout, validated as a contract
//! placement.

use super::checkpoint::Checkpoint;
use super::fuse::{fusion, Fusion};
use super::layout::lay_out;
use super::rules::Rules;
use crate::options::AdaptOptions;
use weight_manifest::error::{Code, Error, Result};
use weight_manifest::wire::{ParallelRank, PlacementFragment, PlacementManifest, TensorDescriptor};
use weight_manifest::Placement;

/// The explicit, stable placement_fragment_id of one box (contract §17): the tensor name and
/// the rank, `{tensor}@dp{d}.pp{p}.tp{t}.ep{e}`. The suffix contains no `@`, so the tensor
/// name is everything before the last `@` and two boxes never share an id.
pub fn fragment_id(tensor: &str, rank: &ParallelRank) -> String {
    format!(
        "{tensor}@dp{}.pp{}.tp{}.ep{}",
        rank.dp, rank.pp, rank.tp, rank.ep
    )
}

/// A placement and the fused buffers its fragments live in.
#[derive(Clone, Debug)]
pub struct Adapted {
    /// The placement.
    pub placement: Placement,
    /// The fused buffers (empty without `fused` rules).
    pub fusion: Fusion,
}

/// The canonical placement of `checkpoint` laid out by `rules` on the options' grid (see
/// [`adapt`], which also returns the fused buffers).
///
/// # Errors
///
/// Those of [`adapt`].
pub fn placement(
    checkpoint: &Checkpoint,
    rules: &Rules,
    options: &AdaptOptions,
) -> Result<Placement> {
    adapt(checkpoint, rules, options).map(|adapted| adapted.placement)
}

/// The canonical placement of `checkpoint` laid out by `rules` on the options' grid, and
/// its fused buffers.
///
/// Descriptors: tensor_id the name, dtype and itemsize from the header, layer_id and
/// expert_id from the rule's named groups, layout_fingerprint from the rule or the file,
/// partition_dim (and shard_dims) the split dim or none. Fragments: one per box per dp
/// replica, ids from [`fragment_id`], aliases the name of the fused buffer a member lives in
/// (none otherwise). The manifest is validated by [`Placement::from_wire`], so every contract
/// rule applies.
///
/// # Errors
///
/// The layout's adapter errors ([`lay_out`]); `adapt_fused_invalid` for fused buffers whose
/// members do not fit together ([`fusion`], [`Fusion::buffers`]); `adapt_header_invalid`
/// when a box's byte size
/// does not fit in 64 bits; a contract code when the result is not a valid placement (for
/// example `empty_string` for an empty model id).
pub fn adapt(checkpoint: &Checkpoint, rules: &Rules, options: &AdaptOptions) -> Result<Adapted> {
    let grid = options.grid;
    let laid = lay_out(checkpoint, rules, options)?;
    let fusion = fusion(rules.fused(), &laid)?;
    let mut tensors = Vec::with_capacity(laid.len());
    let mut fragments = Vec::new();
    for layout in &laid {
        let tensor = layout.tensor;
        let fingerprint = rules.rules()[layout.rule]
            .layout_fingerprint
            .as_deref()
            .unwrap_or(rules.layout_fingerprint());
        let partition_dim = layout.partition_dim();
        tensors.push(TensorDescriptor {
            dtype: tensor.dtype.to_owned(),
            expert_id: layout.expert,
            global_shape: tensor.shape.clone(),
            itemsize: tensor.itemsize,
            layer_id: layout.layer,
            layout_fingerprint: fingerprint.to_owned(),
            partition_dim,
            shard_dims: Some(partition_dim.into_iter().collect()),
            tensor_id: tensor.name.clone(),
        });
        for piece in layout.pieces(grid) {
            let nbytes = piece
                .shape
                .iter()
                .try_fold(tensor.itemsize, |acc, &extent| acc.checked_mul(extent))
                .ok_or_else(|| {
                    Error::new(
                        Code::AdaptHeaderInvalid,
                        format!(
                            "tensor {}: a box's byte size does not fit in 64 bits",
                            tensor.name
                        ),
                    )
                })?;
            for dp in 0..grid.dp {
                let rank = ParallelRank {
                    dp,
                    ep: piece.ep,
                    pp: layout.stage,
                    tp: piece.tp,
                };
                fragments.push(PlacementFragment {
                    aliases: fusion
                        .member(&tensor.name)
                        .map(|m| vec![m.buffer.clone()])
                        .unwrap_or_default(),
                    global_offset: piece.offset.clone(),
                    local_shape: piece.shape.clone(),
                    nbytes,
                    placement_fragment_id: fragment_id(&tensor.name, &rank),
                    rank,
                    tensor_id: tensor.name.clone(),
                });
            }
        }
    }
    fusion.buffers(&fragments)?;
    let placement = Placement::from_wire(&PlacementManifest {
        fragments,
        model_id: options.model_id.clone(),
        placement_id: None,
        revision: options.revision.clone(),
        tensors,
    })?;
    Ok(Adapted { placement, fusion })
}
