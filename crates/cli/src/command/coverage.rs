//! The `coverage` command: does a placement hold the whole model?

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use serde_json::json;
use weight_manifest::wire::{CoverageStatus, CoverageTensor};
use weight_manifest::{coverage, Limits, Placement};

use crate::input::read_input;
use crate::options::{Format, FormatArg};
use crate::output::emit;
use crate::progress::Progress;
use crate::render::{json_success, rejection};
use weight_manifest::Options;

/// Incomplete tensors listed in the text summary before it is cut short.
const LISTED: usize = 20;

#[derive(Args)]
pub(crate) struct CoverageArgs {
    /// Placement manifest JSON file (`-` for standard input).
    pub placement: String,
    /// Exit 1 with error code coverage_incomplete when some tensor is not complete.
    #[arg(long)]
    pub require_complete: bool,
    /// Write the report (canonical JSON) to this file (atomically).
    #[arg(short = 'o', long = "output")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub format: FormatArg,
}

pub(crate) fn run(
    args: &CoverageArgs,
    limits: &Limits,
    progress: &Progress,
) -> Result<ExitCode, String> {
    const LABEL: &str = "placement manifest";
    let text = read_input(&args.placement, limits.max_document_bytes, progress, LABEL)?;
    let format = args.format.format;
    let placement = match progress.reading(LABEL, text.len(), || {
        Placement::from_json(&text, &Options::default().with_limits(*limits))
    }) {
        Err(e) => return Ok(rejection(&e, format)),
        Ok(p) => p,
    };
    let message = format!(
        "checking the coverage of {} tensors",
        placement.tensors().len()
    );
    let coverage = match progress.phase(message, || coverage(&placement, limits)) {
        Err(e) => return Ok(rejection(&e, format)),
        Ok(c) => c,
    };
    let verdict = if args.require_complete {
        coverage.require_complete()
    } else {
        Ok(())
    };
    if let Some(path) = &args.output {
        emit(Some(path), coverage.to_json().as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    let report = coverage.report();
    if format == Format::Json {
        if let Err(e) = &verdict {
            return Ok(rejection(e, format));
        }
        let mut fields = json!({
            "tensors": report.tensors.len(),
            "tensors_complete": report.tensors_complete,
            "tensors_with_gaps": report.tensors_with_gaps,
            "tensors_ambiguous": report.tensors_ambiguous,
        });
        if args.output.is_none() {
            fields["report"] = json!(coverage.to_json());
        }
        json_success(fields);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "tensors: {}, complete: {}, with gaps: {}, ambiguous: {}",
        report.tensors.len(),
        report.tensors_complete,
        report.tensors_with_gaps,
        report.tensors_ambiguous
    );
    print_dp_summary(&report.tensors);
    let incomplete: Vec<&CoverageTensor> = report
        .tensors
        .iter()
        .filter(|t| t.status != CoverageStatus::Complete)
        .collect();
    for tensor in incomplete.iter().take(LISTED) {
        println!("  {}", weight_manifest::coverage::describe(tensor));
    }
    if incomplete.len() > LISTED {
        println!("  ... and {} more", incomplete.len() - LISTED);
    }
    Ok(match verdict {
        Err(e) => rejection(&e, format),
        Ok(()) => ExitCode::SUCCESS,
    })
}

/// One line per DP value: for how many tensors that replica alone is complete.
fn print_dp_summary(tensors: &[CoverageTensor]) {
    let mut complete: BTreeMap<u64, usize> = BTreeMap::new();
    for entry in tensors.iter().flat_map(|t| &t.dp) {
        let count = complete.entry(entry.dp).or_default();
        if entry.status == CoverageStatus::Complete {
            *count += 1;
        }
    }
    for (dp, count) in complete {
        println!(
            "dp {dp}: alone complete for {count} of {} tensors",
            tensors.len()
        );
    }
}
