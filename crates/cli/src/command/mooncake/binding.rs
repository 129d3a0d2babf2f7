//! `weight-manifest mooncake export-binding|import-binding`: this project's runtime
//! binding as Mooncake's per-participant bindings and back, through the Mooncake
//! placement (contract §20.10). Mooncake's bindings are written in this project's JSON
//! form of them (upstream has none): an array, one object per participant.

use std::process::ExitCode;

use clap::Args;
use serde_json::json;
use weight_manifest::{Binding, Error, Limits, Options};
use weight_manifest_mooncake::{
    export_binding, import_binding, MooncakeBinding, MooncakePlacement,
};

use crate::input::read_input;
use crate::options::{Format, FormatArg, Out};
use crate::output::emit;
use crate::progress::Progress;
use crate::render::{json_success, rejection};

#[derive(Args)]
pub(crate) struct BindingArgs {
    /// The binding to convert: this project's runtime binding manifest (export-binding) or
    /// a JSON array of Mooncake bindings (import-binding); `-` for standard input.
    pub file: String,
    /// The Mooncake placement (WeightPlacementManifest) the bindings locate.
    #[arg(long)]
    pub placement: String,
    #[command(flatten)]
    pub out: Out,
    #[command(flatten)]
    pub format: FormatArg,
}

type Outcome = Result<ExitCode, String>;

/// Reads the placement and the binding file, converts, writes the result (`-o`
/// atomically), or prints the rejection.
pub(crate) fn run(
    args: &BindingArgs,
    export: bool,
    limits: &Limits,
    progress: &Progress,
) -> Outcome {
    let max = limits.max_document_bytes;
    let placement_text = read_input(&args.placement, max, progress, "Mooncake placement")?;
    let text = read_input(&args.file, max, progress, "runtime binding")?;
    let format = args.format.format;
    let placement = match progress.reading("Mooncake placement", placement_text.len(), || {
        MooncakePlacement::from_json(&placement_text, &Options::default().with_limits(*limits))
    }) {
        Ok(p) => p,
        Err(e) => return Ok(rejection(&e, format)),
    };
    let converted: Result<(String, Vec<String>), Error> = if export {
        Binding::from_json(&text, &Options::default().with_limits(*limits))
            .and_then(|b| export_binding(&b, &placement))
            .map(|list| (MooncakeBinding::list_to_json(&list), Vec::new()))
    } else {
        MooncakeBinding::list_from_json(&text, &Options::default())
            .and_then(|list| import_binding(&list, &placement))
            .map(|i| {
                (
                    weight_manifest::canonical::to_string(&i.binding).unwrap_or_default(),
                    i.dropped,
                )
            })
    };
    let (out, dropped) = match converted {
        Err(e) => return Ok(rejection(&e, format)),
        Ok(c) => c,
    };
    if format == Format::Json {
        if let Some(path) = args.out.output.as_deref() {
            emit(Some(path), out.as_bytes()).map_err(|e| format!("cannot write output: {e}"))?;
        }
        json_success(json!({ "document": out, "dropped": dropped }));
    } else {
        for line in &dropped {
            eprintln!("dropped: {line}");
        }
        emit(args.out.output.as_deref(), out.as_bytes())
            .map_err(|e| format!("cannot write output: {e}"))?;
    }
    Ok(ExitCode::SUCCESS)
}
