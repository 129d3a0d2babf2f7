//! `weight-manifest content`: layout-independent content digests (contract §19): of a
//! checkpoint's tensors (`checkpoint`, in `content_checkpoint.rs`) and the comparison of
//! two content manifests (`compare`).

mod checkpoint;

use checkpoint::CheckpointArgs;

use std::process::ExitCode;

use clap::{Args, Subcommand};
use serde_json::json;
use weight_manifest::Limits;
use weight_manifest_content::manifest::{self, Difference};

use crate::input::read_input;
use crate::options::{Format, FormatArg};
use crate::progress::Progress;
use crate::render::{json_success, rejection};

#[derive(Subcommand)]
pub(crate) enum ContentCommand {
    /// The content manifest of a safetensors checkpoint (data mapped, never copied whole).
    Checkpoint(CheckpointArgs),
    /// Compare two content manifests: exit 0 when equal, 1 naming each tensor that differs.
    Compare(CompareArgs),
}

impl ContentCommand {
    /// The command's `--format`.
    pub(crate) fn format(&self) -> &FormatArg {
        match self {
            ContentCommand::Checkpoint(args) => &args.format,
            ContentCommand::Compare(args) => &args.format,
        }
    }
}

#[derive(Args)]
pub(crate) struct CompareArgs {
    /// The first content manifest.
    pub a: String,
    /// The second content manifest.
    pub b: String,
    #[command(flatten)]
    pub format: FormatArg,
}

pub(crate) fn run(
    command: ContentCommand,
    limits: &Limits,
    progress: &Progress,
) -> Result<ExitCode, String> {
    match command {
        ContentCommand::Checkpoint(args) => checkpoint::run(&args, limits, progress),
        ContentCommand::Compare(args) => compare(&args, limits, progress),
    }
}

/// Exit 0 when the manifests agree, 1 listing the differing tensors, 2 on bad input (a
/// manifest that does not read, or manifests of different block sizes).
fn compare(args: &CompareArgs, limits: &Limits, progress: &Progress) -> Result<ExitCode, String> {
    let format = args.format.format;
    let mut read = Vec::new();
    for path in [&args.a, &args.b] {
        let text = read_input(path, limits.max_document_bytes, progress, manifest::LABEL)?;
        match progress.reading(manifest::LABEL, text.len(), || {
            manifest::read(&text, limits)
        }) {
            Ok(m) => read.push(m),
            Err(e) => {
                rejection(&e, format);
                return Ok(ExitCode::from(2));
            }
        }
    }
    let differences = match manifest::compare(&read[0], &read[1]) {
        Ok(d) => d,
        Err(e) => {
            rejection(&e, format);
            return Ok(ExitCode::from(2));
        }
    };
    let line = |d: &Difference| match d {
        Difference::Differs(t) => format!("differs: {t}"),
        Difference::OnlyInFirst(t) => format!("only in A: {t}"),
        Difference::OnlyInSecond(t) => format!("only in B: {t}"),
    };
    if format == Format::Json {
        let listed: Vec<_> = differences
            .iter()
            .map(|d| {
                let kind = match d {
                    Difference::Differs(_) => "differs",
                    Difference::OnlyInFirst(_) => "only_in_a",
                    Difference::OnlyInSecond(_) => "only_in_b",
                };
                json!({"tensor_id": d.tensor_id(), "kind": kind})
            })
            .collect();
        json_success(json!({
            "equal": differences.is_empty(),
            "tensors": read[0].tensors.len().max(read[1].tensors.len()),
            "differences": listed,
        }));
    } else if differences.is_empty() {
        println!("equal: {} tensors", read[0].tensors.len());
    } else {
        for d in &differences {
            println!("{}", line(d));
        }
    }
    Ok(if differences.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
