//! `weight-manifest bind`: a placement and a binding inventory into a runtime manifest
//! (§12).

use std::process::ExitCode;

use clap::Args;
use serde_json::json;
use weight_manifest::inventory::BINDING_INVENTORY_LABEL;
use weight_manifest::{bind, Binding, Limits, Options, Placement};

use crate::input::read_input;
use crate::options::{inventory_options, Format, FormatArg, Out, Semantics};
use crate::progress::Progress;
use crate::reading::{write_out, Outcome};
use crate::render::{document, rejection};

#[derive(Args)]
pub(crate) struct BindArgs {
    /// Placement manifest JSON file (`-` for standard input).
    pub placement: String,
    /// Binding inventory JSON file.
    pub binding: String,
    #[command(flatten)]
    pub semantics: Semantics,
    #[command(flatten)]
    pub out: Out,
    #[command(flatten)]
    pub format: FormatArg,
}

/// Runs `bind` under `limits`.
pub(crate) fn run(args: &BindArgs, limits: &Limits, progress: &Progress) -> Outcome {
    let BindArgs {
        placement,
        binding,
        semantics,
        out,
        format,
    } = args;
    let max = limits.max_document_bytes;
    let placement_text = read_input(placement, max, progress, "placement manifest")?;
    let binding_text = read_input(binding, max, progress, BINDING_INVENTORY_LABEL)?;
    let given = semantics.address_semantics.as_ref();
    let result = progress
        .reading("placement manifest", placement_text.len(), || {
            Placement::from_json(&placement_text, &Options::default().with_limits(*limits))
        })
        .and_then(|p| {
            let b = progress.reading(BINDING_INVENTORY_LABEL, binding_text.len(), || {
                let options =
                    inventory_options(&binding_text, BINDING_INVENTORY_LABEL, given, limits)?;
                Binding::from_inventory_json(&binding_text, &options)
            })?;
            progress.phase("binding", || bind(&p, &b))
        });
    match result {
        Err(e) => Ok(rejection(&e, format.format)),
        Ok(runtime) if format.format == Format::Json => {
            let fields = json!({ "generation": runtime.generation() });
            let output = out.output.as_deref();
            document(Format::Json, output, fields, "runtime", runtime.to_json())?;
            Ok(ExitCode::SUCCESS)
        }
        Ok(runtime) => write_out(out.output.as_deref(), &runtime.to_json()),
    }
}
