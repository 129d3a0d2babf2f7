//! The structural parse of a rules file: the strict reader's value tree to the wire type
//! [`AdapterRules`], every rejection located by a JSON pointer.
//!
//! Only shapes are checked here (members, types, enums); what the values mean (regexes,
//! stage ranges) is checked by [`super::rules`] on the wire value, so typed and textual
//! input run the same semantic checks.

use weight_manifest::error::{Code, Error, Result};
use weight_manifest::path::Path;
use weight_manifest::value::{Object, Value};
use weight_manifest::wire::{
    AdapterAction, AdapterActionString, AdapterEvenPipeline, AdapterEvenPipelineSplit,
    AdapterExpertAction, AdapterExpertOptions, AdapterFused, AdapterFusedStack, AdapterLayerRange,
    AdapterPipeline, AdapterRule, AdapterRules, AdapterSplit, AdapterSplitAction, AdapterSplitOver,
    AdapterStage, AdapterStagePipeline, AdapterStageString,
};

/// The label of a rules file in reader messages.
pub(crate) const LABEL: &str = "adapter rules";

fn invalid(message: impl Into<String>, path: &Path<'_>) -> Error {
    Error::at(Code::AdaptRulesInvalid, message, path)
}

/// Rejects members of `object` not in `allowed`, naming the first one.
fn known_members(object: &Object<'_>, allowed: &[&str], what: &str, path: &Path<'_>) -> Result<()> {
    for (key, _) in object.iter() {
        if !allowed.contains(&key) {
            return Err(invalid(
                format!(
                    "{what} has an unknown member {key} (allowed: {})",
                    allowed.join(", ")
                ),
                &path.key(key),
            ));
        }
    }
    Ok(())
}

fn object<'v, 'a>(value: &'v Value<'a>, what: &str, path: &Path<'_>) -> Result<&'v Object<'a>> {
    value
        .as_object()
        .ok_or_else(|| invalid(format!("{what} must be an object"), path))
}

fn required<'v, 'a>(
    object: &'v Object<'a>,
    key: &str,
    what: &str,
    path: &Path<'_>,
) -> Result<&'v Value<'a>> {
    object
        .get(key)
        .ok_or_else(|| invalid(format!("{what} lacks the required member {key}"), path))
}

fn string(value: &Value<'_>, field: &str, path: &Path<'_>) -> Result<String> {
    match value {
        Value::Str(s) => Ok(s.to_string()),
        _ => Err(invalid(format!("{field} must be a string"), path)),
    }
}

fn non_empty(value: &Value<'_>, field: &str, path: &Path<'_>) -> Result<String> {
    match value {
        Value::Str(s) if !s.is_empty() => Ok(s.to_string()),
        _ => Err(invalid(format!("{field} must be a non-empty string"), path)),
    }
}

fn uint(value: &Value<'_>, field: &str, min: u64, path: &Path<'_>) -> Result<u64> {
    match value {
        Value::UInt(n) if *n >= min => Ok(*n),
        _ => Err(invalid(
            format!("{field} must be an integer of at least {min} that fits in 64 bits"),
            path,
        )),
    }
}

fn optional<T>(
    object: &Object<'_>,
    key: &str,
    path: &Path<'_>,
    parse: impl FnOnce(&Value<'_>, &Path<'_>) -> Result<T>,
) -> Result<Option<T>> {
    object
        .get(key)
        .map(|value| parse(value, &path.key(key)))
        .transpose()
}

/// Parses a rules document read by the strict reader.
pub(crate) fn rules(document: &Value<'_>) -> Result<AdapterRules> {
    let root = Path::Root;
    let top = object(document, LABEL, &root)?;
    known_members(
        top,
        &[
            "$schema",
            "description",
            "experts",
            "fused",
            "layout_fingerprint",
            "pp",
            "rules",
        ],
        LABEL,
        &root,
    )?;
    let layout_fingerprint = non_empty(
        required(top, "layout_fingerprint", LABEL, &root)?,
        "layout_fingerprint",
        &root.key("layout_fingerprint"),
    )?;
    let rules_path = root.key("rules");
    let Value::Array(items) = required(top, "rules", LABEL, &root)? else {
        return Err(invalid("rules must be an array", &rules_path));
    };
    let mut rules = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        rules.push(rule(item, &rules_path.index(index))?);
    }
    Ok(AdapterRules {
        description: optional(top, "description", &root, |v, p| {
            string(v, "description", p)
        })?,
        experts: optional(top, "experts", &root, |v, p| uint(v, "experts", 1, p))?,
        fused: optional(top, "fused", &root, fused_list)?.unwrap_or_default(),
        layout_fingerprint,
        pp: optional(top, "pp", &root, pipeline)?,
        rules,
        schema: optional(top, "$schema", &root, |v, p| string(v, "$schema", p))?,
    })
}

fn fused_list(value: &Value<'_>, path: &Path<'_>) -> Result<Vec<AdapterFused>> {
    let Value::Array(items) = value else {
        return Err(invalid("fused must be an array", path));
    };
    items
        .iter()
        .enumerate()
        .map(|(index, item)| fused(item, &path.index(index)))
        .collect()
}

fn fused(value: &Value<'_>, path: &Path<'_>) -> Result<AdapterFused> {
    let what = "a fused entry";
    let entry = object(value, what, path)?;
    known_members(
        entry,
        &["description", "dim", "into", "members", "stack"],
        what,
        path,
    )?;
    let members_path = path.key("members");
    let Value::Array(items) = required(entry, "members", what, path)? else {
        return Err(invalid("members must be an array", &members_path));
    };
    if items.is_empty() {
        return Err(invalid("members must not be empty", &members_path));
    }
    let members = items
        .iter()
        .enumerate()
        .map(|(index, item)| non_empty(item, "a member", &members_path.index(index)))
        .collect::<Result<Vec<_>>>()?;
    Ok(AdapterFused {
        description: optional(entry, "description", path, |v, p| {
            string(v, "description", p)
        })?,
        dim: uint(
            required(entry, "dim", what, path)?,
            "dim",
            0,
            &path.key("dim"),
        )?,
        into: non_empty(
            required(entry, "into", what, path)?,
            "into",
            &path.key("into"),
        )?,
        members,
        stack: optional(entry, "stack", path, |v, p| match v {
            Value::Str(s) if s == "expert" => Ok(AdapterFusedStack::Expert),
            _ => Err(invalid("stack must be \"expert\"", p)),
        })?,
    })
}

fn rule(value: &Value<'_>, path: &Path<'_>) -> Result<AdapterRule> {
    let what = "a rule";
    let rule = object(value, what, path)?;
    known_members(
        rule,
        &[
            "action",
            "description",
            "layout_fingerprint",
            "match",
            "stage",
        ],
        what,
        path,
    )?;
    let match_ = string(
        required(rule, "match", what, path)?,
        "match",
        &path.key("match"),
    )?;
    let action = action(required(rule, "action", what, path)?, &path.key("action"))?;
    Ok(AdapterRule {
        action,
        description: optional(rule, "description", path, |v, p| {
            string(v, "description", p)
        })?,
        layout_fingerprint: optional(rule, "layout_fingerprint", path, |v, p| {
            non_empty(v, "layout_fingerprint", p)
        })?,
        match_,
        stage: optional(rule, "stage", path, stage)?,
    })
}

fn unknown_action(message: String, path: &Path<'_>) -> Error {
    Error::at(Code::AdaptUnknownAction, message, path)
}

const ACTIONS: &str =
    "replicate, own_by_expert, {\"split\": {\"dim\": d, \"over\": \"tp\"|\"ep\"}}, {\"own_by_expert\": {\"split_dim\": d}}";

fn action(value: &Value<'_>, path: &Path<'_>) -> Result<AdapterAction> {
    match value {
        Value::Str(name) => match name.as_ref() {
            "replicate" => Ok(AdapterAction::String(AdapterActionString::Replicate)),
            "own_by_expert" => Ok(AdapterAction::String(AdapterActionString::OwnByExpert)),
            other => Err(unknown_action(
                format!("unknown action {other} (known: {ACTIONS})"),
                path,
            )),
        },
        Value::Object(members) => {
            let mut iter = members.iter();
            let (Some((key, body)), None) = (iter.next(), iter.next()) else {
                return Err(invalid(
                    "an action object must have exactly one member, the action's name",
                    path,
                ));
            };
            let body_path = path.key(key);
            match key {
                "split" => {
                    let split = object(body, "split", &body_path)?;
                    known_members(
                        split,
                        &["dim", "multiple_of", "over", "pad_to", "pieces"],
                        "split",
                        &body_path,
                    )?;
                    let dim = uint(
                        required(split, "dim", "split", &body_path)?,
                        "dim",
                        0,
                        &body_path.key("dim"),
                    )?;
                    let over_path = body_path.key("over");
                    let over = match required(split, "over", "split", &body_path)? {
                        Value::Str(s) if s == "tp" => AdapterSplitOver::Tp,
                        Value::Str(s) if s == "ep" => AdapterSplitOver::Ep,
                        _ => return Err(invalid("over must be \"tp\" or \"ep\"", &over_path)),
                    };
                    let pieces = optional(split, "pieces", &body_path, |v, p| {
                        non_empty(v, "pieces", p)
                    })?;
                    let multiple_of = optional(split, "multiple_of", &body_path, |v, p| {
                        uint(v, "multiple_of", 1, p)
                    })?;
                    let pad_to =
                        optional(split, "pad_to", &body_path, |v, p| uint(v, "pad_to", 1, p))?;
                    if pad_to.is_some() && (pieces.is_some() || multiple_of.is_some()) {
                        return Err(invalid(
                            "pad_to splits the padded size evenly: it goes with neither pieces nor multiple_of",
                            &body_path.key("pad_to"),
                        ));
                    }
                    Ok(AdapterAction::AdapterSplitAction(AdapterSplitAction {
                        split: AdapterSplit {
                            dim,
                            multiple_of,
                            over,
                            pad_to,
                            pieces,
                        },
                    }))
                }
                "own_by_expert" => {
                    let options = object(body, "own_by_expert", &body_path)?;
                    known_members(options, &["split_dim"], "own_by_expert", &body_path)?;
                    Ok(AdapterAction::AdapterExpertAction(AdapterExpertAction {
                        own_by_expert: AdapterExpertOptions {
                            split_dim: optional(options, "split_dim", &body_path, |v, p| {
                                uint(v, "split_dim", 0, p)
                            })?,
                        },
                    }))
                }
                other => Err(unknown_action(
                    format!("unknown action {other} (known: {ACTIONS})"),
                    path,
                )),
            }
        }
        _ => Err(invalid(
            format!("an action must be a string or an object (known: {ACTIONS})"),
            path,
        )),
    }
}

fn stage(value: &Value<'_>, path: &Path<'_>) -> Result<AdapterStage> {
    match value {
        Value::Str(s) if s == "first" => Ok(AdapterStage::String(AdapterStageString::First)),
        Value::Str(s) if s == "last" => Ok(AdapterStage::String(AdapterStageString::Last)),
        Value::UInt(n) => Ok(AdapterStage::Uint64(*n)),
        _ => Err(invalid(
            "stage must be \"first\", \"last\" or a stage index",
            path,
        )),
    }
}

fn pipeline(value: &Value<'_>, path: &Path<'_>) -> Result<AdapterPipeline> {
    let what = "pp";
    let pp = object(value, what, path)?;
    match (pp.get("split"), pp.get("stages")) {
        (Some(split), None) => {
            known_members(pp, &["layers", "split"], what, path)?;
            if !matches!(split, Value::Str(s) if s == "even") {
                return Err(invalid("split must be \"even\"", &path.key("split")));
            }
            Ok(AdapterPipeline::EvenPipeline(AdapterEvenPipeline {
                layers: optional(pp, "layers", path, |v, p| uint(v, "layers", 1, p))?,
                split: AdapterEvenPipelineSplit::Even,
            }))
        }
        (None, Some(stages)) => {
            known_members(pp, &["stages"], what, path)?;
            let stages_path = path.key("stages");
            let Value::Array(items) = stages else {
                return Err(invalid(
                    "stages must be an array of [first, last] layer ranges",
                    &stages_path,
                ));
            };
            if items.is_empty() {
                return Err(invalid("stages must list at least one range", &stages_path));
            }
            let mut ranges = Vec::with_capacity(items.len());
            for (index, item) in items.iter().enumerate() {
                let item_path = stages_path.index(index);
                let range = match item {
                    Value::Array(pair) if pair.len() == 2 => [
                        uint(&pair[0], "a stage's first layer", 0, &item_path.index(0))?,
                        uint(&pair[1], "a stage's last layer", 0, &item_path.index(1))?,
                    ],
                    _ => {
                        return Err(invalid(
                            "a stage must be a [first, last] layer range",
                            &item_path,
                        ))
                    }
                };
                ranges.push(AdapterLayerRange(range));
            }
            Ok(AdapterPipeline::StagePipeline(AdapterStagePipeline {
                stages: ranges,
            }))
        }
        _ => Err(invalid(
            "pp must have exactly one of split (\"even\") and stages",
            path,
        )),
    }
}
