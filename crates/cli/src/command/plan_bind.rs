//! The `plan-bind` command: a reshard plan bound to the runtime bindings of its source
//! and target placements, as the copy list a transfer engine executes.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use serde_json::json;

use weight_manifest::{bind_plan, Binding, Fences, Limits, Result};

use crate::input::read_input;
use crate::options::FormatArg;
use crate::progress::Progress;
use crate::render::{document, rejection};
use weight_manifest::{Options, Plan};

#[derive(Args)]
pub(crate) struct PlanBindArgs {
    /// Reshard plan JSON file (the output of `weight-manifest plan`).
    pub plan: String,
    /// Runtime binding manifest JSON file (§9.2) locating the plan's source placement.
    pub source_binding: String,
    /// Runtime binding manifest JSON file (§9.2) locating the plan's target placement.
    pub target_binding: String,
    /// Read both bindings as binding inventories (§10.4) instead of manifests.
    #[arg(long)]
    pub inventory: bool,
    /// Reject the source binding as stale unless its generation is this.
    #[arg(long)]
    pub source_generation: Option<u64>,
    /// Reject the target binding as stale unless its generation is this.
    #[arg(long)]
    pub target_generation: Option<u64>,
    /// Write the bound plan (canonical JSON) to this file (atomically) instead of
    /// standard output.
    #[arg(short = 'o', long = "output")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub format: FormatArg,
}

fn binding(text: &[u8], inventory: bool, limits: &Limits) -> Result<Binding> {
    if inventory {
        Binding::from_inventory_json(text, &Options::default().with_limits(*limits))
    } else {
        Binding::from_json(text, &Options::default().with_limits(*limits))
    }
}

pub(crate) fn run(
    args: &PlanBindArgs,
    limits: &Limits,
    progress: &Progress,
) -> std::result::Result<ExitCode, String> {
    const PLAN: &str = "reshard plan";
    let (source_label, target_label) = if args.inventory {
        ("source binding inventory", "target binding inventory")
    } else {
        ("source binding", "target binding")
    };
    let max = limits.max_document_bytes;
    let plan_text = read_input(&args.plan, max, progress, PLAN)?;
    let source_text = read_input(&args.source_binding, max, progress, source_label)?;
    let target_text = read_input(&args.target_binding, max, progress, target_label)?;
    let format = args.format.format;
    let fences = Fences {
        source_generation: args.source_generation,
        target_generation: args.target_generation,
    };
    let result = progress
        .reading(PLAN, plan_text.len(), || {
            Plan::from_json(&plan_text, &Options::default().with_limits(*limits))
        })
        .and_then(|plan| {
            let source = progress.reading(source_label, source_text.len(), || {
                binding(&source_text, args.inventory, limits)
            })?;
            let target = progress.reading(target_label, target_text.len(), || {
                binding(&target_text, args.inventory, limits)
            })?;
            progress.phase("binding the plan", || {
                bind_plan(&plan, &source, &target, &fences)
            })
        });
    let bound = match result {
        Err(e) => return Ok(rejection(&e, format)),
        Ok(b) => b,
    };
    let id = bound.bound_plan_id().to_owned();
    let fields = json!({ "bound_plan_id": id });
    document(
        format,
        args.output.as_deref(),
        fields,
        "bound_plan",
        bound.into_json(),
    )?;
    Ok(ExitCode::SUCCESS)
}
