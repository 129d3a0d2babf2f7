//! `weight-manifest conformance testee|run`: the NDJSON testee of this implementation, and
//! the runner of the fixture corpus against any testee.

use std::process::ExitCode;

use clap::Subcommand;
use std::path::PathBuf;
use weight_manifest_conformance::{self as conformance, RunOptions};

use crate::reading::Outcome;

#[derive(Subcommand)]
pub(crate) enum ConformanceCommand {
    /// Serve the NDJSON testee protocol on standard input/output.
    Testee,
    /// Run the fixtures against a testee.
    Run {
        /// The corpus root.
        #[arg(long, default_value = "tests/conformance")]
        dir: PathBuf,
        /// The testee command (run with `sh -c`); default: this program's own testee.
        #[arg(long)]
        testee: Option<String>,
        /// Only fixtures whose id matches this glob (`*`, `?`).
        #[arg(long)]
        filter: Option<String>,
        /// Known failures, one `fixture-id: reason` per line.
        #[arg(long)]
        known_failures: Option<PathBuf>,
        /// Seconds to wait for one response before the testee counts as hung.
        #[arg(long, default_value_t = 60)]
        timeout: u64,
    },
}

/// Runs `command`.
pub(crate) fn run(command: ConformanceCommand) -> Outcome {
    match command {
        ConformanceCommand::Testee => {
            conformance::serve(std::io::stdin().lock(), std::io::stdout().lock())
                .map_err(|e| format!("testee I/O: {e}"))?;
            Ok(ExitCode::SUCCESS)
        }
        ConformanceCommand::Run {
            dir,
            testee,
            filter,
            known_failures,
            timeout,
        } => {
            let options = RunOptions {
                dir,
                testee,
                filter,
                known_failures,
                timeout: std::time::Duration::from_secs(timeout),
            };
            let summary = conformance::run(&options, &mut std::io::stdout().lock())
                .map_err(|e| format!("conformance run: {e}"))?;
            // A skipped case is a testee that does not know an operation of the corpus:
            // a failure unless skipping is asked for.
            let skips_allowed = std::env::var_os(ALLOW_SKIP).is_some();
            if summary.skipped > 0 && !skips_allowed {
                eprintln!(
                    "{} case(s) skipped: the testee does not know their operation (set \
                     {ALLOW_SKIP}=1 to accept skips)",
                    summary.skipped
                );
            }
            Ok(
                if summary.failed == 0 && (summary.skipped == 0 || skips_allowed) {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::from(1)
                },
            )
        }
    }
}

/// The environment variable that lets a conformance run pass with skipped cases (and the
/// test suite skip a comparison whose oracle is missing).
const ALLOW_SKIP: &str = "WEIGHT_MANIFEST_ALLOW_SKIP";
