//! A rules file as a compiled value: regexes built, actions, stages and the pipeline
//! checked. The schema is `schema/adapter-rules.schema.json` (wire type
//! [`AdapterRules`]); every rejection carries the JSON pointer of the member at fault.

use regex::Regex;

use crate::errors::{error_at, rule_pointer};
use crate::fuse::FusedRule;
pub use crate::options::Axis;
use crate::rules_parse;
use weight_manifest::error::{Code, Result};
use weight_manifest::wire::{
    AdapterAction, AdapterActionString, AdapterPipeline, AdapterRules, AdapterSplitOver,
    AdapterStage, AdapterStageString,
};
use weight_manifest::Options;

/// The named groups a rule regex may have.
pub const GROUPS: [&str; 2] = ["layer", "expert"];

/// What a rule does with the tensors it matches (see the schema's `AdapterAction`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// The whole tensor on every tp and ep rank of its stage.
    Replicate,
    /// Sliced on `dim` over the ranks of `over`, repeated over the other axis.
    Split {
        /// The sliced dimension.
        dim: u64,
        /// The axis.
        over: Axis,
        /// The model dimension that counts the dim's uncuttable pieces, if any.
        pieces: Option<String>,
        /// What the dim's size must be a multiple of, if anything.
        multiple_of: Option<u64>,
        /// What the engine pads the dim to a multiple of before it splits it, if anything.
        pad_to: Option<u64>,
    },
    /// On the ep rank that owns the tensor's expert; sliced on `split_dim` over its tp
    /// ranks when given, else whole on each.
    OwnByExpert {
        /// The dim sliced over tp, if any.
        split_dim: Option<u64>,
    },
}

/// The stage of a tensor without a `layer` value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Stage 0.
    First,
    /// Stage pp − 1.
    Last,
    /// This stage index.
    Index(u64),
}

/// How layers map to stages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pipeline {
    /// layers/pp consecutive layers per stage; `layers` defaults to the largest layer + 1.
    Even {
        /// The number of layers, if given.
        layers: Option<u64>,
    },
    /// One inclusive [first, last] range per stage.
    Stages(Vec<(u64, u64)>),
}

/// One compiled rule.
#[derive(Clone, Debug)]
pub struct Rule {
    /// The regex, anchored at both ends.
    pub regex: Regex,
    /// The action.
    pub action: Action,
    /// The stage of tensors without a layer.
    pub stage: Stage,
    /// The rule's own layout_fingerprint, if any.
    pub layout_fingerprint: Option<String>,
}

/// A validated rules file.
#[derive(Clone, Debug)]
pub struct Rules {
    wire: AdapterRules,
    compiled: Vec<Rule>,
    pipeline: Pipeline,
    fused: Vec<FusedRule>,
}

impl Rules {
    /// Reads a rules file: the strict JSON reader (contract §4, label `adapter rules`),
    /// the structural checks, then [`Rules::from_wire`].
    ///
    /// # Errors
    ///
    /// The reader's `invalid_json`, `duplicate_key` or `non_finite_number`; then
    /// `adapt_rules_invalid` (shape), `adapt_unknown_action`, `adapt_regex_invalid`,
    /// `adapt_fused_invalid` (a `fused` template), each with the pointer of the member at
    /// fault; `limit_exceeded` under `options.limits`
    /// (size, depth, string length).
    pub fn from_json(text: impl AsRef<[u8]>, options: &Options<'_>) -> Result<Rules> {
        let document =
            weight_manifest::reader::read(text.as_ref(), rules_parse::LABEL, &options.limits)?;
        Rules::from_wire(&rules_parse::rules(&document)?)
    }

    /// Compiles a typed rules value: builds every regex (only the named groups `layer` and
    /// `expert`), checks fingerprints and the pipeline ranges, and compiles the `fused`
    /// templates ([`FusedRule::compile`]).
    pub fn from_wire(wire: &AdapterRules) -> Result<Rules> {
        if wire.layout_fingerprint.is_empty() {
            return Err(error_at(
                Code::AdaptRulesInvalid,
                "layout_fingerprint must be a non-empty string",
                "/layout_fingerprint",
            ));
        }
        if wire.experts == Some(0) {
            return Err(error_at(
                Code::AdaptRulesInvalid,
                "experts must be at least 1",
                "/experts",
            ));
        }
        let compiled = wire
            .rules
            .iter()
            .enumerate()
            .map(|(index, rule)| compile(index, rule))
            .collect::<Result<Vec<_>>>()?;
        let pipeline = match &wire.pp {
            None => Pipeline::Even { layers: None },
            Some(AdapterPipeline::EvenPipeline(even)) => {
                if even.layers == Some(0) {
                    return Err(error_at(
                        Code::AdaptRulesInvalid,
                        "layers must be at least 1",
                        "/pp/layers",
                    ));
                }
                Pipeline::Even {
                    layers: even.layers,
                }
            }
            Some(AdapterPipeline::StagePipeline(stages)) => {
                Pipeline::Stages(ranges(&stages.stages)?)
            }
        };
        let fused = wire
            .fused
            .iter()
            .enumerate()
            .map(|(index, entry)| FusedRule::compile(index, entry))
            .collect::<Result<Vec<_>>>()?;
        Ok(Rules {
            wire: wire.clone(),
            compiled,
            pipeline,
            fused,
        })
    }

    /// The wire value.
    pub fn as_wire(&self) -> &AdapterRules {
        &self.wire
    }

    /// The compiled rules, in priority order.
    pub fn rules(&self) -> &[Rule] {
        &self.compiled
    }

    /// The compiled `fused` entries, in file order.
    pub fn fused(&self) -> &[FusedRule] {
        &self.fused
    }

    /// The pipeline.
    pub fn pipeline(&self) -> &Pipeline {
        &self.pipeline
    }

    /// The file's layout_fingerprint.
    pub fn layout_fingerprint(&self) -> &str {
        &self.wire.layout_fingerprint
    }

    /// The number of experts, when the file gives it.
    pub fn experts(&self) -> Option<u64> {
        self.wire.experts
    }

    /// The index of the first rule matching `name`, with its `layer` and `expert` texts.
    pub fn first_match<'n>(
        &self,
        name: &'n str,
    ) -> Option<(usize, Option<&'n str>, Option<&'n str>)> {
        self.compiled.iter().enumerate().find_map(|(index, rule)| {
            rule.regex.captures(name).map(|captures| {
                let group = |g| captures.name(g).map(|m| m.as_str());
                (index, group("layer"), group("expert"))
            })
        })
    }
}

fn compile(index: usize, rule: &weight_manifest::wire::AdapterRule) -> Result<Rule> {
    let pointer = rule_pointer(index, "/match");
    let regex = Regex::new(&format!("^(?:{})$", rule.match_)).map_err(|e| {
        error_at(
            Code::AdaptRegexInvalid,
            format!("rule {index}: invalid regex {}: {e}", rule.match_),
            pointer.clone(),
        )
    })?;
    if let Some(other) = regex
        .capture_names()
        .flatten()
        .find(|name| !GROUPS.contains(name))
    {
        return Err(error_at(
            Code::AdaptRegexInvalid,
            format!("rule {index}: named group {other} is neither layer nor expert"),
            pointer,
        ));
    }
    let action = match &rule.action {
        AdapterAction::String(AdapterActionString::Replicate) => Action::Replicate,
        AdapterAction::String(AdapterActionString::OwnByExpert) => {
            Action::OwnByExpert { split_dim: None }
        }
        AdapterAction::AdapterSplitAction(split) => Action::Split {
            dim: split.split.dim,
            over: match split.split.over {
                AdapterSplitOver::Tp => Axis::Tp,
                AdapterSplitOver::Ep => Axis::Ep,
            },
            pieces: split.split.pieces.clone(),
            multiple_of: split.split.multiple_of,
            pad_to: split.split.pad_to,
        },
        AdapterAction::AdapterExpertAction(expert) => Action::OwnByExpert {
            split_dim: expert.own_by_expert.split_dim,
        },
    };
    if matches!(action, Action::OwnByExpert { .. })
        && !regex.capture_names().flatten().any(|name| name == "expert")
    {
        return Err(error_at(
            Code::AdaptRulesInvalid,
            format!("rule {index}: own_by_expert needs an expert group in match"),
            pointer,
        ));
    }
    if rule.layout_fingerprint.as_deref() == Some("") {
        return Err(error_at(
            Code::AdaptRulesInvalid,
            "layout_fingerprint must be a non-empty string",
            rule_pointer(index, "/layout_fingerprint"),
        ));
    }
    let stage = match rule.stage {
        None | Some(AdapterStage::String(AdapterStageString::First)) => Stage::First,
        Some(AdapterStage::String(AdapterStageString::Last)) => Stage::Last,
        Some(AdapterStage::Uint64(n)) => Stage::Index(n),
    };
    Ok(Rule {
        regex,
        action,
        stage,
        layout_fingerprint: rule.layout_fingerprint.clone(),
    })
}

fn ranges(stages: &[weight_manifest::wire::AdapterLayerRange]) -> Result<Vec<(u64, u64)>> {
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(stages.len());
    for (index, range) in stages.iter().enumerate() {
        let [first, last] = range.0;
        let pointer = format!("/pp/stages/{index}");
        if first > last {
            return Err(error_at(
                Code::AdaptRulesInvalid,
                format!("stage {index}: first layer {first} is after last layer {last}"),
                pointer,
            ));
        }
        if let Some(&(_, previous)) = out.last() {
            if first <= previous {
                return Err(error_at(
                    Code::AdaptRulesInvalid,
                    format!("stage {index}: layers from {first} overlap or precede the previous stage, which ends at {previous}"),
                    pointer,
                ));
            }
        }
        out.push((first, last));
    }
    Ok(out)
}
