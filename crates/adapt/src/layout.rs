//! The layout: which rule places each tensor, its pipeline stage, and the boxes its stage's
//! tp and ep ranks hold.
//!
//! The rank grid is dp × pp × tp × ep. A tensor lives on one stage: from its `layer` value
//! through the pipeline, else from its rule's `stage`. Within the stage:
//! - replicate: the whole tensor on every (tp, ep);
//! - split dim d over an axis of n ranks: rank r of that axis holds [r·s/n, (r+1)·s/n) on
//!   d (s the extent), repeated over every rank of the other axis; with `pieces` P (a model
//!   dimension given in the options), pieces are never cut: for P ≥ n the same slices (each
//!   P/n whole pieces), for P < n rank r holds piece r / (n/P), shared by n/P ranks;
//! - own_by_expert: expert e of E experts is owned by ep rank e / (E / ep); each tp rank of
//!   that ep rank holds the whole tensor, or its tp slice on `split_dim`.
//!
//! Every data-parallel replica repeats the layout (the builder's job). All arithmetic on
//! header and rule values is checked.

use super::assign;
use super::checkpoint::Checkpoint;
use super::rules::{Action, Axis, Rules, Stage};
use crate::errors::{error_at, rule_pointer};
use crate::options::{AdaptOptions, MAX_FRAGMENTS};
use weight_manifest::error::{Code, Error, Result};

pub use crate::tensor_layout::{Cut, Piece, TensorLayout};

/// Parses a `layer` or `expert` capture: decimal digits that fit in 64 bits.
fn id(text: Option<&str>, group: &str, tensor: &str, rule: usize) -> Result<Option<u64>> {
    let Some(text) = text else { return Ok(None) };
    match text.parse::<u64>() {
        Ok(value) if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) => {
            Ok(Some(value))
        }
        _ => Err(error_at(
            Code::AdaptRulesInvalid,
            format!(
                "tensor {tensor}: group {group} captured {text}, not a decimal integer below 2^64"
            ),
            rule_pointer(rule, "/match"),
        )),
    }
}

/// Lays out every tensor of `checkpoint` by `rules` on the options' grid (with their model
/// dimensions for `pieces`).
///
/// # Errors
///
/// `adapt_dimension_missing` (a split's `pieces` names a dimension the options lack, or
/// give as 0; pointer `/rules/{i}/action/split/pieces`),
/// `adapt_grid_invalid` (a size of 0, or more than [`MAX_FRAGMENTS`] fragments),
/// `adapt_unmatched_tensor` (pointer `/rules`), `adapt_uneven_split` (pointer of the rule's
/// action, or `/pp`, `/experts`), `adapt_rules_invalid` (a stage, dim, layer or expert out
/// of range, with the pointer of the member at fault).
pub fn lay_out<'c>(
    checkpoint: &'c Checkpoint,
    rules: &Rules,
    options: &AdaptOptions,
) -> Result<Vec<TensorLayout<'c>>> {
    let grid = options.grid;
    grid.check()?;
    for (index, rule) in rules.rules().iter().enumerate() {
        if let Stage::Index(stage) = rule.stage {
            if stage >= grid.pp {
                return Err(error_at(
                    Code::AdaptRulesInvalid,
                    format!("rule {index}: stage {stage} is not below pp {}", grid.pp),
                    rule_pointer(index, "/stage"),
                ));
            }
        }
    }
    let mut laid = Vec::with_capacity(checkpoint.tensors().len());
    for tensor in checkpoint.tensors() {
        let Some((rule, layer, expert)) = rules.first_match(&tensor.name) else {
            return Err(error_at(
                Code::AdaptUnmatchedTensor,
                format!("no rule matches tensor {}", tensor.name),
                "/rules",
            ));
        };
        laid.push(TensorLayout {
            tensor,
            rule,
            layer: id(layer, "layer", &tensor.name, rule)?,
            expert: id(expert, "expert", &tensor.name, rule)?,
            stage: 0,
            cut: Cut::Replicate,
        });
    }
    let stage_of = assign::stages(rules, grid, &laid)?;
    let experts = assign::experts(rules, grid, &laid)?;
    let mut fragments: u64 = 0;
    for (layout, stage) in laid.iter_mut().zip(stage_of) {
        layout.stage = stage;
        layout.cut = cut(layout, rules, options, experts)?;
        fragments = layout
            .piece_count(grid)
            .and_then(|n| n.checked_mul(grid.dp))
            .and_then(|n| n.checked_add(fragments))
            .filter(|&n| n <= MAX_FRAGMENTS)
            .ok_or_else(|| {
                Error::new(
                    Code::AdaptGridInvalid,
                    format!("the placement would have more than {MAX_FRAGMENTS} fragments"),
                )
            })?;
    }
    Ok(laid)
}

/// Checks that `dim` exists and its extent splits evenly over `n` ranks; the slice length.
fn even_chunk(
    l: &TensorLayout<'_>,
    dim: u64,
    dim_tail: &str,
    axis: &str,
    n: u64,
) -> Result<(usize, u64)> {
    let shape = &l.tensor.shape;
    let index = usize::try_from(dim)
        .ok()
        .filter(|&d| d < shape.len())
        .ok_or_else(|| {
            error_at(
                Code::AdaptRulesInvalid,
                format!(
                    "tensor {}: dim {dim} is out of range for shape {shape:?}",
                    l.tensor.name
                ),
                rule_pointer(l.rule, dim_tail),
            )
        })?;
    let extent = shape[index];
    if !extent.is_multiple_of(n) {
        return Err(error_at(
            Code::AdaptUnevenSplit,
            format!(
                "tensor {}: dim {dim} of size {extent} does not split evenly over {axis} {n}",
                l.tensor.name
            ),
            rule_pointer(l.rule, "/action"),
        ));
    }
    Ok((index, extent / n))
}

/// The pieces of a `pieces` split of `extent` over `n` ranks: the slice length and how
/// many ranks share one slice.
fn piece_chunk(
    l: &TensorLayout<'_>,
    name: &str,
    options: &AdaptOptions,
    extent: u64,
    n: u64,
) -> Result<(u64, u64)> {
    let pointer = rule_pointer(l.rule, "/action/split/pieces");
    let pieces = options.dims.get(name).copied().filter(|&p| p > 0).ok_or_else(|| {
        error_at(
            Code::AdaptDimensionMissing,
            format!(
                "tensor {}: the split counts {name} pieces; give the model's {name} (at least 1) with the grid (--dim {name}=N)",
                l.tensor.name
            ),
            pointer.clone(),
        )
    })?;
    let uneven = |why: String| {
        error_at(
            Code::AdaptUnevenSplit,
            format!("tensor {}: {why}", l.tensor.name),
            rule_pointer(l.rule, "/action"),
        )
    };
    if !extent.is_multiple_of(pieces) {
        return Err(uneven(format!(
            "a dim of size {extent} is not {pieces} equal {name} pieces"
        )));
    }
    if pieces >= n {
        if !pieces.is_multiple_of(n) {
            return Err(uneven(format!(
                "{pieces} {name} pieces do not split evenly over {n} ranks"
            )));
        }
        return Ok((extent / n, 1));
    }
    if !n.is_multiple_of(pieces) {
        return Err(uneven(format!(
            "{n} ranks do not share {pieces} {name} pieces evenly"
        )));
    }
    Ok((extent / pieces, n / pieces))
}

/// A split of the dim padded to a multiple of `m` (the engine's padding) over `n` ranks:
/// the padded size's even slices, the last ones clipped at the dim's size
/// ([`TensorLayout::pieces`]); a rank left with padding only is refused.
fn padded_cut(l: &TensorLayout<'_>, dim: u64, over: Axis, m: u64, n: u64) -> Result<Cut> {
    let (index, extent) = even_chunk(l, dim, "/action/split/dim", over.name(), 1)?;
    let uneven = |why: String| {
        error_at(
            Code::AdaptUnevenSplit,
            format!("tensor {}: {why}", l.tensor.name),
            rule_pointer(l.rule, "/action/split/pad_to"),
        )
    };
    let padded = extent.checked_next_multiple_of(m).ok_or_else(|| {
        uneven(format!(
            "dim {dim} of size {extent} padded to a multiple of {m} overflows"
        ))
    })?;
    if !padded.is_multiple_of(n) {
        return Err(uneven(format!(
            "dim {dim} of size {extent}, padded to {padded}, does not split evenly over {} {n}",
            over.name()
        )));
    }
    let chunk = padded / n;
    if (n - 1).saturating_mul(chunk) >= extent {
        return Err(uneven(format!(
            "dim {dim} of size {extent}, padded to {padded} and split over {} {n}, leaves the last rank padding only",
            over.name()
        )));
    }
    Ok(Cut::Split {
        dim: index,
        over,
        chunk,
        share: 1,
    })
}

fn cut(l: &TensorLayout<'_>, rules: &Rules, options: &AdaptOptions, experts: u64) -> Result<Cut> {
    let grid = options.grid;
    Ok(match &rules.rules()[l.rule].action {
        Action::Replicate => Cut::Replicate,
        Action::Split {
            dim,
            over,
            pieces,
            multiple_of,
            pad_to,
        } => {
            let n = if *over == Axis::Tp { grid.tp } else { grid.ep };
            if let Some(m) = pad_to {
                return padded_cut(l, *dim, *over, *m, n);
            }
            if let Some(m) = multiple_of {
                let (index, _) = even_chunk(l, *dim, "/action/split/dim", over.name(), 1)?;
                let extent = l.tensor.shape[index];
                if !extent.is_multiple_of(*m) {
                    return Err(error_at(
                        Code::AdaptUnevenSplit,
                        format!(
                            "tensor {}: dim {dim} of size {extent} is not a multiple of {m}, which the rule requires (an engine would pad it)",
                            l.tensor.name
                        ),
                        rule_pointer(l.rule, "/action/split/multiple_of"),
                    ));
                }
            }
            let (dim, (chunk, share)) = match pieces {
                None => {
                    let (dim, chunk) = even_chunk(l, *dim, "/action/split/dim", over.name(), n)?;
                    (dim, (chunk, 1))
                }
                Some(name) => {
                    let (dim, _) = even_chunk(l, *dim, "/action/split/dim", over.name(), 1)?;
                    (dim, piece_chunk(l, name, options, l.tensor.shape[dim], n)?)
                }
            };
            Cut::Split {
                dim,
                over: *over,
                chunk,
                share,
            }
        }
        Action::OwnByExpert { split_dim } => {
            let per_rank = experts / grid.ep;
            let owner = l.expert.unwrap_or_default() / per_rank;
            let split = split_dim
                .map(|d| even_chunk(l, d, "/action/own_by_expert/split_dim", "tp", grid.tp))
                .transpose()?;
            Cut::Expert { owner, split }
        }
    })
}
