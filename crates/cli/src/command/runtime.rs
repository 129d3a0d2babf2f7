//! `weight-manifest runtime validate`: a runtime manifest (§9.1) or, with `--inventory`, a
//! runtime inventory (§10.3).

use std::process::ExitCode;

use clap::Subcommand;
use serde_json::json;
use weight_manifest::inventory::{
    validate_runtime_inventory, RuntimeSummary, RUNTIME_INVENTORY_LABEL,
};
use weight_manifest::{Limits, Options, Runtime};

use crate::options::{inventory_options, Format, Input, Semantics};
use crate::progress::Progress;
use crate::reading::{checked, validate, Outcome};
use crate::render::rejection;

#[derive(Subcommand)]
pub(crate) enum RuntimeCommand {
    /// Validate a runtime manifest (or, with --inventory, a runtime inventory).
    Validate {
        #[command(flatten)]
        input: Input,
        /// The file is a runtime inventory (§10.3), not a runtime manifest.
        #[arg(long)]
        inventory: bool,
        #[command(flatten)]
        semantics: Semantics,
    },
}

impl RuntimeCommand {
    /// The `--format` given.
    pub(crate) fn format(&self) -> Format {
        let RuntimeCommand::Validate { input, .. } = self;
        input.format.format
    }
}

/// Runs `command` under `limits`.
pub(crate) fn run(command: &RuntimeCommand, limits: &Limits, progress: &Progress) -> Outcome {
    let RuntimeCommand::Validate {
        input,
        inventory,
        semantics,
    } = command;
    let inventory = *inventory;
    {
        let address_semantics = semantics.address_semantics.as_ref();
        if inventory && input.format.format == Format::Text {
            return inventory_counts(input, limits, address_semantics, progress);
        }
        let label = if inventory {
            RUNTIME_INVENTORY_LABEL
        } else {
            "runtime manifest"
        };
        validate(
            input,
            limits,
            (address_semantics, progress, label),
            |text, given| {
                if inventory {
                    inventory_options(text, RUNTIME_INVENTORY_LABEL, given, limits)
                        .and_then(|options| Runtime::from_inventory_json(text, &options))
                } else {
                    Runtime::from_json(text, &Options::default().with_limits(*limits))
                }
            },
            |runtime| json!({ "runtime": runtime.to_json(), "generation": runtime.generation() }),
            |runtime| runtime_line(&RuntimeSummary::from(runtime)),
        )
    }
}

/// `runtime validate --inventory` with the text report, which needs only the counts: the
/// inventory is validated without keeping its manifest (same accept/reject and errors, a
/// fraction of the memory).
fn inventory_counts(
    input: &Input,
    limits: &Limits,
    semantics: Option<&String>,
    progress: &Progress,
) -> Outcome {
    let check = |text: &[u8], given: Option<&String>| {
        inventory_options(text, RUNTIME_INVENTORY_LABEL, given, limits)
            .and_then(|options| validate_runtime_inventory(text, &options))
    };
    let reading = (semantics, progress, RUNTIME_INVENTORY_LABEL);
    Ok(match checked(input, limits, reading, check)? {
        Err(e) => rejection(&e, Format::Text),
        Ok(summary) => {
            println!("{}", runtime_line(&summary));
            ExitCode::SUCCESS
        }
    })
}

/// The text report of a valid runtime manifest or inventory.
pub(crate) fn runtime_line(summary: &RuntimeSummary) -> String {
    let generation = summary
        .generation
        .map_or("none".to_owned(), |g| g.to_string());
    format!(
        "ok: {} tensors, {} fragments, generation {generation}",
        summary.tensors, summary.fragments
    )
}
