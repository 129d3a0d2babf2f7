//! `weight-manifest adapt`: a placement from a checkpoint's headers and a rules file.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use serde_json::json;
use weight_manifest::Limits;
use weight_manifest_adapt::{self as adapt, AdaptOptions, Grid, ReadError, Rules};

use crate::input::read_input;
use crate::options::{Format, FormatArg, Out};
use crate::output::{emit, write_atomic};
use crate::progress::Progress;
use crate::render::{json_success, rejection};
use weight_manifest::Options;

#[derive(Subcommand)]
pub(crate) enum AdaptCommand {
    /// Place the tensors of a safetensors checkpoint by a rules file (headers only).
    Safetensors(SafetensorsArgs),
}

#[derive(Args)]
pub(crate) struct SafetensorsArgs {
    /// `model.safetensors`, `model.safetensors.index.json`, or a folder holding one.
    pub path: PathBuf,
    /// The rules file (schema: adapter-rules.schema.json; presets in examples/rules/).
    #[arg(long)]
    pub rules: String,
    /// Tensor-parallel ranks per stage.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub tp: u64,
    /// Pipeline stages.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub pp: u64,
    /// Expert-parallel ranks per stage.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub ep: u64,
    /// Data-parallel replicas.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub dp: u64,
    /// A model dimension a rule's `pieces` counts, as NAME=N (repeatable): `--dim kv_heads=8`.
    #[arg(long = "dim", value_name = "NAME=N", value_parser = parse_dim)]
    pub dims: Vec<(String, u64)>,
    /// The placement's model_id.
    #[arg(long)]
    pub model_id: String,
    /// The placement's revision.
    #[arg(long)]
    pub revision: String,
    /// Also write a runtime inventory template (placeholder workers and addresses) here.
    #[arg(long, value_name = "FILE")]
    pub inventory: Option<PathBuf>,
    #[command(flatten)]
    pub out: Out,
    #[command(flatten)]
    pub format: FormatArg,
}

fn parse_dim(text: &str) -> Result<(String, u64), String> {
    let (name, value) = text
        .split_once('=')
        .ok_or_else(|| format!("{text}: give a dimension as NAME=N"))?;
    let value = value
        .parse::<u64>()
        .map_err(|e| format!("{text}: {value} is not a non-negative integer ({e})"))?;
    if name.is_empty() {
        return Err(format!("{text}: the dimension has no name"));
    }
    Ok((name.to_owned(), value))
}

pub(crate) fn run(
    command: AdaptCommand,
    limits: &Limits,
    progress: &Progress,
) -> Result<ExitCode, String> {
    let AdaptCommand::Safetensors(args) = command;
    let format = args.format.format;
    let rules_text = read_input(
        &args.rules,
        limits.max_document_bytes,
        progress,
        "rules file",
    )?;
    let rules = match Rules::from_json(&rules_text, &Options::default().with_limits(*limits)) {
        Ok(rules) => rules,
        Err(e) => return Ok(rejection(&e, format)),
    };
    let reading = format!("reading the checkpoint headers of {}", args.path.display());
    let checkpoint = match progress.phase(reading, || adapt::read_checkpoint(&args.path)) {
        Ok(checkpoint) => checkpoint,
        Err(ReadError::Invalid(e)) => return Ok(rejection(&e, format)),
        Err(io) => return Err(io.to_string()),
    };
    let grid = Grid {
        dp: args.dp,
        pp: args.pp,
        tp: args.tp,
        ep: args.ep,
    };
    let options = args.dims.into_iter().fold(
        AdaptOptions::new(args.model_id, args.revision, grid),
        |o, (n, v)| o.with_dim(n, v),
    );
    let adapted = match progress.phase("placing the tensors", || {
        adapt::adapt(&checkpoint, &rules, &options)
    }) {
        Ok(adapted) => adapted,
        Err(e) => return Ok(rejection(&e, format)),
    };
    let placement = &adapted.placement;
    if let Some(path) = &args.inventory {
        let inventory = match adapt::runtime_inventory_template_fused(placement, &adapted.fusion) {
            Ok(inventory) => inventory,
            Err(e) => return Ok(rejection(&e, format)),
        };
        let mut text = serde_json::to_string_pretty(&inventory)
            .map_err(|e| format!("cannot encode the inventory: {e}"))?;
        text.push('\n');
        write_atomic(path, text.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    if let Some(path) = args.out.output.as_deref() {
        write_atomic(path, placement.to_json().as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    if format == Format::Json {
        json_success(json!({
            "canonical": placement.to_json(),
            "placement_id": placement.placement_id(),
            "digest": placement.digest(),
            "tensors": placement.tensors().len(),
            "fragments": placement.fragments().len(),
        }));
    } else if args.out.output.is_some() {
        eprintln!(
            "adapted {} tensors into {} fragments: {}",
            placement.tensors().len(),
            placement.fragments().len(),
            placement.placement_id()
        );
    } else {
        emit(None, placement.to_json().as_bytes())
            .map_err(|e| format!("cannot write output: {e}"))?;
    }
    Ok(ExitCode::SUCCESS)
}
