//! Assignments that look at all tensors at once: the pipeline stage of every tensor (from
//! its layer through `pp`, or from its rule's `stage`) and the number of experts (given, or
//! the largest expert value plus one), each checked against the grid.

use super::rules::{Action, Pipeline, Rules, Stage};
use crate::errors::{error_at, rule_pointer};
use crate::options::Grid;
use crate::tensor_layout::TensorLayout;
use weight_manifest::error::{Code, Result};

/// The stage of every laid-out tensor.
pub(crate) fn stages(rules: &Rules, grid: Grid, laid: &[TensorLayout<'_>]) -> Result<Vec<u64>> {
    let pp_pointer = if rules.as_wire().pp.is_some() {
        "/pp"
    } else {
        ""
    };
    let first_layered = laid.iter().find(|l| l.layer.is_some());
    let even_layers = match (rules.pipeline(), first_layered) {
        (Pipeline::Even { layers }, Some(first)) => {
            let count = match layers {
                Some(n) => *n,
                None => laid
                    .iter()
                    .filter_map(|l| l.layer)
                    .max()
                    .and_then(|m| m.checked_add(1))
                    .ok_or_else(|| {
                        error_at(
                            Code::AdaptRulesInvalid,
                            "layer 2^64-1 leaves no layer count",
                            pp_pointer,
                        )
                    })?,
            };
            if !count.is_multiple_of(grid.pp) {
                return Err(error_at(
                    Code::AdaptUnevenSplit,
                    format!(
                        "{count} layers do not split evenly over pp {} (tensor {} has layer {}); give explicit stages",
                        grid.pp,
                        first.tensor.name,
                        first.layer.unwrap_or_default()
                    ),
                    pp_pointer,
                ));
            }
            Some(count)
        }
        _ => None,
    };
    if let Pipeline::Stages(ranges) = rules.pipeline() {
        if ranges.len() as u64 != grid.pp {
            return Err(error_at(
                Code::AdaptRulesInvalid,
                format!("pp lists {} stages but pp is {}", ranges.len(), grid.pp),
                "/pp/stages",
            ));
        }
    }
    laid.iter()
        .map(|l| {
            let Some(layer) = l.layer else {
                return Ok(match rules.rules()[l.rule].stage {
                    Stage::First => 0,
                    Stage::Last => grid.pp - 1,
                    Stage::Index(n) => n,
                });
            };
            match (rules.pipeline(), even_layers) {
                (Pipeline::Even { .. }, Some(count)) if layer < count => {
                    Ok(layer / (count / grid.pp))
                }
                (Pipeline::Even { .. }, Some(count)) => Err(error_at(
                    Code::AdaptRulesInvalid,
                    format!(
                        "tensor {}: layer {layer} is not below layers {count}",
                        l.tensor.name
                    ),
                    "/pp/layers",
                )),
                (Pipeline::Stages(ranges), _) => ranges
                    .iter()
                    .position(|&(first, last)| first <= layer && layer <= last)
                    .map(|p| p as u64)
                    .ok_or_else(|| {
                        error_at(
                            Code::AdaptRulesInvalid,
                            format!(
                                "tensor {}: layer {layer} is in no stage range",
                                l.tensor.name
                            ),
                            "/pp/stages",
                        )
                    }),
                (Pipeline::Even { .. }, None) => Ok(0),
            }
        })
        .collect()
}

/// The number of experts, checked against ep and every expert value.
pub(crate) fn experts(rules: &Rules, grid: Grid, laid: &[TensorLayout<'_>]) -> Result<u64> {
    let owned: Vec<&TensorLayout<'_>> = laid
        .iter()
        .filter(|l| matches!(rules.rules()[l.rule].action, Action::OwnByExpert { .. }))
        .collect();
    let Some(first) = owned.first() else {
        return Ok(1);
    };
    for l in &owned {
        if l.expert.is_none() {
            return Err(error_at(
                Code::AdaptRulesInvalid,
                format!(
                    "tensor {}: own_by_expert needs the expert group to take part in the match",
                    l.tensor.name
                ),
                rule_pointer(l.rule, "/match"),
            ));
        }
    }
    let max = owned.iter().filter_map(|l| l.expert).max().unwrap_or(0);
    let count = match rules.experts() {
        Some(count) => {
            if let Some(l) = owned.iter().find(|l| l.expert.is_some_and(|e| e >= count)) {
                return Err(error_at(
                    Code::AdaptRulesInvalid,
                    format!(
                        "tensor {}: expert {} is not below experts {count}",
                        l.tensor.name,
                        l.expert.unwrap_or_default()
                    ),
                    "/experts",
                ));
            }
            count
        }
        None => max.checked_add(1).ok_or_else(|| {
            error_at(
                Code::AdaptRulesInvalid,
                "expert 2^64-1 leaves no expert count",
                rule_pointer(first.rule, "/match"),
            )
        })?,
    };
    if !count.is_multiple_of(grid.ep) {
        return Err(error_at(
            Code::AdaptUnevenSplit,
            format!(
                "tensor {}: {count} experts do not split evenly over ep {}",
                first.tensor.name, grid.ep
            ),
            if rules.experts().is_some() {
                "/experts".to_owned()
            } else {
                rule_pointer(first.rule, "/action")
            },
        ));
    }
    Ok(count)
}
