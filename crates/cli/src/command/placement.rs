//! `weight-manifest placement`: validate a placement manifest (§6), print its id or its
//! canonical text, or read a placement inventory (§10.5).

use std::process::ExitCode;

use clap::Subcommand;
use serde_json::json;
use weight_manifest::inventory::PLACEMENT_INVENTORY_LABEL;
use weight_manifest::{Limits, Options, Placement};

use crate::input::read_input;
use crate::options::{Format, Input, Out};
use crate::output::leave_to_exit;
use crate::progress::Progress;
use crate::reading::{write_out, Outcome};
use crate::render::{json_success, rejection};

#[derive(Subcommand)]
pub(crate) enum PlacementCommand {
    /// Validate a placement; print its placement_id and digest.
    Validate(Input),
    /// Print the canonical wire JSON.
    Canonicalize {
        #[command(flatten)]
        input: Input,
        #[command(flatten)]
        out: Out,
    },
    /// Print the placement_id only.
    Id(Input),
    /// Read a placement inventory (§10.5) and print the canonical placement.
    FromInventory {
        #[command(flatten)]
        input: Input,
        #[command(flatten)]
        out: Out,
    },
}

impl PlacementCommand {
    /// The `--format` given.
    pub(crate) fn format(&self) -> Format {
        match self {
            PlacementCommand::Validate(input)
            | PlacementCommand::Id(input)
            | PlacementCommand::Canonicalize { input, .. }
            | PlacementCommand::FromInventory { input, .. } => input.format.format,
        }
    }
}

/// The JSON report of a valid placement.
pub(crate) fn placement_fields(p: &Placement) -> serde_json::Value {
    json!({
        "canonical": p.to_json(),
        "placement_id": p.placement_id(),
        "digest": p.digest(),
        "tensors": p.tensors().len(),
        "fragments": p.fragments().len(),
    })
}

/// Runs `command` under `limits`.
pub(crate) fn run(command: &PlacementCommand, limits: &Limits, progress: &Progress) -> Outcome {
    let (input, out, inventory) = match command {
        PlacementCommand::Validate(input) | PlacementCommand::Id(input) => (input, None, false),
        PlacementCommand::Canonicalize { input, out } => (input, out.output.as_deref(), false),
        PlacementCommand::FromInventory { input, out } => (input, out.output.as_deref(), true),
    };
    let label = if inventory {
        PLACEMENT_INVENTORY_LABEL
    } else {
        "placement manifest"
    };
    let text = read_input(&input.file, limits.max_document_bytes, progress, label)?;
    let result = progress.reading(label, text.len(), || {
        let options = Options::default().with_limits(*limits);
        if inventory {
            Placement::from_inventory_json(&text, &options)
        } else {
            Placement::from_json(&text, &options)
        }
    });
    let format = input.format.format;
    let placement = match result {
        Err(e) => return Ok(rejection(&e, format)),
        Ok(p) => p,
    };
    match (command, format) {
        (PlacementCommand::Id(_), Format::Text) => println!("{}", placement.placement_id()),
        (PlacementCommand::Id(_), Format::Json) => {
            json_success(json!({ "placement_id": placement.placement_id() }));
        }
        (PlacementCommand::Validate(_), Format::Text) => {
            println!("placement_id: {}", placement.placement_id());
            println!("digest: {}", placement.digest());
            println!(
                "tensors: {}, fragments: {}",
                placement.tensors().len(),
                placement.fragments().len()
            );
        }
        (_, Format::Json) => json_success(placement_fields(&placement)),
        (_, Format::Text) => {
            write_out(out, &placement.to_json())?;
        }
    }
    leave_to_exit(placement);
    Ok(ExitCode::SUCCESS)
}
