//! `weight-manifest schema export`: the published JSON Schemas into a folder.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;

use crate::output::write_atomic;
use crate::reading::Outcome;

#[derive(Subcommand)]
pub(crate) enum SchemaCommand {
    /// Write every published schema into DIR (created if missing).
    Export {
        /// The target folder.
        dir: PathBuf,
    },
}

/// Runs `command`.
pub(crate) fn run(command: &SchemaCommand) -> Outcome {
    let SchemaCommand::Export { dir } = command;
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    for (name, text) in weight_manifest::schema::PUBLISHED {
        let path = dir.join(name);
        write_atomic(&path, text.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    eprintln!(
        "wrote {} schemas to {}",
        weight_manifest::schema::PUBLISHED.len(),
        dir.display()
    );
    Ok(ExitCode::SUCCESS)
}
