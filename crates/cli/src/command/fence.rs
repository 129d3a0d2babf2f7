//! The `fence` command: does what a worker, or a side's whole runtime binding, holds now
//! still match the bound plan's fence for its side (contract §17.7)? The rule is the
//! core's `fence::check`, the one the Python binding and the C ABI call.

use std::process::ExitCode;

use clap::Args;
use serde_json::json;

use weight_manifest::fence::{self, Held, Side};
use weight_manifest::{Binding, BoundPlan, Limits, Options, Result};

use crate::input::read_input;
use crate::options::{Format, FormatArg};
use crate::progress::Progress;
use crate::render::{json_success, rejection};

#[derive(Args)]
pub(crate) struct FenceArgs {
    /// Bound plan JSON file (the output of `weight-manifest plan-bind`).
    pub bound_plan: String,
    /// The side the holder is on: `source` or `target`.
    #[arg(long, value_parser = ["source", "target"])]
    pub side: String,
    /// What is held now: a held fence document (`schema/fence.schema.json`: a worker's
    /// instance_id, lease_id and generation), or with `--binding` a runtime binding
    /// manifest (§9.2) of the whole side.
    pub held: String,
    /// Read HELD as a runtime binding manifest instead of a held fence document.
    #[arg(long)]
    pub binding: bool,
    #[command(flatten)]
    pub format: FormatArg,
}

fn check(bound: &BoundPlan, side: Side, held: &[u8], binding: bool, limits: &Limits) -> Result<()> {
    let options = Options::default().with_limits(*limits);
    if binding {
        let binding = Binding::from_json(held, &options)?;
        fence::check(bound, side, &Held::of_binding(&binding))
    } else {
        let document = fence::read_held(held, &options)?;
        fence::check(bound, side, &Held::of_document(&document))
    }
}

pub(crate) fn run(
    args: &FenceArgs,
    limits: &Limits,
    progress: &Progress,
) -> std::result::Result<ExitCode, String> {
    const BOUND: &str = "bound plan";
    let held_label = if args.binding {
        "runtime binding"
    } else {
        "held fence"
    };
    let max = limits.max_document_bytes;
    let bound_text = read_input(&args.bound_plan, max, progress, BOUND)?;
    let held_text = read_input(&args.held, max, progress, held_label)?;
    let side = Side::parse(&args.side).ok_or_else(|| format!("unknown side {}", args.side))?;
    let format = args.format.format;
    let result = progress
        .reading(BOUND, bound_text.len(), || {
            BoundPlan::from_json(&bound_text, &Options::default().with_limits(*limits))
        })
        .and_then(|bound| {
            progress.reading(held_label, held_text.len(), || {
                check(&bound, side, &held_text, args.binding, limits)
            })
        });
    if let Err(e) = result {
        return Ok(rejection(&e, format));
    }
    match format {
        Format::Json => json_success(json!({ "side": side.as_str() })),
        Format::Text => println!("the {} fence holds", side.as_str()),
    }
    Ok(ExitCode::SUCCESS)
}
