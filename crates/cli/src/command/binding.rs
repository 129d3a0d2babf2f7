//! `weight-manifest binding validate`: a runtime binding manifest (§9.2) or, with
//! `--inventory`, a binding inventory (§10.4).

use clap::Subcommand;
use serde_json::json;
use weight_manifest::inventory::BINDING_INVENTORY_LABEL;
use weight_manifest::{Binding, Limits, Options};

use crate::options::{inventory_options, Format, Input, Semantics};
use crate::progress::Progress;
use crate::reading::{validate, Outcome};

#[derive(Subcommand)]
pub(crate) enum BindingCommand {
    /// Validate a binding manifest (or, with --inventory, a binding inventory).
    Validate {
        #[command(flatten)]
        input: Input,
        /// The file is a binding inventory (§10.4), not a binding manifest.
        #[arg(long)]
        inventory: bool,
        #[command(flatten)]
        semantics: Semantics,
    },
}

impl BindingCommand {
    /// The `--format` given.
    pub(crate) fn format(&self) -> Format {
        let BindingCommand::Validate { input, .. } = self;
        input.format.format
    }
}

/// Runs `command` under `limits`.
pub(crate) fn run(command: &BindingCommand, limits: &Limits, progress: &Progress) -> Outcome {
    let BindingCommand::Validate {
        input,
        inventory,
        semantics,
    } = command;
    let inventory = *inventory;
    validate(
        input,
        limits,
        (
            semantics.address_semantics.as_ref(),
            progress,
            if inventory {
                BINDING_INVENTORY_LABEL
            } else {
                "binding manifest"
            },
        ),
        |text, given| {
            if inventory {
                inventory_options(text, BINDING_INVENTORY_LABEL, given, limits)
                    .and_then(|options| Binding::from_inventory_json(text, &options))
            } else {
                Binding::from_json(text, &Options::default().with_limits(*limits))
            }
        },
        |binding| json!({ "binding": binding.to_json() }),
        |binding| {
            let wire = binding.as_wire();
            format!(
                "ok: {} fragments bound to {} at generation {}",
                wire.fragments.len(),
                wire.placement_id,
                wire.generation
            )
        },
    )
}
