//! `weight-manifest project placement|binding`: a runtime inventory's placement (§11.1)
//! or binding (§11.2).

use std::process::ExitCode;

use clap::{Args, Subcommand};
use serde_json::json;
use weight_manifest::inventory::RUNTIME_INVENTORY_LABEL;
use weight_manifest::{project_binding, project_placement, Limits, Runtime};

use crate::input::read_input;
use crate::options::{inventory_options, Format, FormatArg, Out, Semantics};
use crate::progress::Progress;
use crate::reading::{write_out, Outcome};
use crate::render::{document, json_success, rejection};

#[derive(Subcommand)]
pub(crate) enum ProjectCommand {
    /// Runtime inventory -> canonical placement (§11.1).
    Placement(ProjectArgs),
    /// Runtime inventory -> binding manifest (§11.2).
    Binding(ProjectArgs),
}

#[derive(Args)]
pub(crate) struct ProjectArgs {
    /// Runtime inventory JSON file (`-` for standard input).
    pub inventory: String,
    /// The expected placement_id; only the canonical id is accepted.
    #[arg(long)]
    pub placement_id: Option<String>,
    #[command(flatten)]
    pub semantics: Semantics,
    #[command(flatten)]
    pub out: Out,
    #[command(flatten)]
    pub format: FormatArg,
}

impl ProjectCommand {
    /// The `--format` given.
    pub(crate) fn format(&self) -> Format {
        match self {
            ProjectCommand::Placement(args) | ProjectCommand::Binding(args) => args.format.format,
        }
    }
}

/// Runs `command` under `limits`.
pub(crate) fn run(command: &ProjectCommand, limits: &Limits, progress: &Progress) -> Outcome {
    let (args, to_binding) = match command {
        ProjectCommand::Placement(args) => (args, false),
        ProjectCommand::Binding(args) => (args, true),
    };
    let label = RUNTIME_INVENTORY_LABEL;
    let text = read_input(&args.inventory, limits.max_document_bytes, progress, label)?;
    let given = args.semantics.address_semantics.as_ref();
    let format = args.format.format;
    let runtime = match progress.reading(label, text.len(), || {
        inventory_options(&text, label, given, limits)
            .and_then(|options| Runtime::from_inventory_json(&text, &options))
    }) {
        Err(e) => return Ok(rejection(&e, format)),
        Ok(r) => r,
    };
    let id = args.placement_id.as_deref();
    if to_binding {
        match progress.phase("projecting the binding", || project_binding(&runtime, id)) {
            Err(e) => Ok(rejection(&e, format)),
            Ok(b) if format == Format::Json => {
                let output = args.out.output.as_deref();
                document(Format::Json, output, json!({}), "binding", b.to_json())?;
                Ok(ExitCode::SUCCESS)
            }
            Ok(b) => write_out(args.out.output.as_deref(), &b.to_json()),
        }
    } else {
        match progress.phase("projecting the placement", || {
            project_placement(&runtime, id)
        }) {
            Err(e) => Ok(rejection(&e, format)),
            Ok(p) if format == Format::Json => {
                if let Some(path) = args.out.output.as_deref() {
                    write_out(Some(path), &p.to_json())?;
                }
                json_success(super::placement::placement_fields(&p));
                Ok(ExitCode::SUCCESS)
            }
            Ok(p) => write_out(args.out.output.as_deref(), &p.to_json()),
        }
    }
}
