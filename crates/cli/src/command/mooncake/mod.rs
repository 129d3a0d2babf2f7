//! `weight-manifest mooncake`: Mooncake's released formats (`mooncake.reshard` 0.3.13):
//! export our placement as Mooncake's, import Mooncake's as ours, validate either of
//! Mooncake's documents (a placement or a Store manifest).

mod binding;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use serde_json::json;
use weight_manifest::{reader, Limits, Options, Placement};
use weight_manifest_mooncake::{
    export, generated_fragment_id, import, import_storage, AxisKind, ExportOptions,
    MooncakePlacement, MooncakeStorageManifest,
};

use crate::input::read_input;
use crate::options::{Format, FormatArg, Out};
use crate::output::{emit, leave_to_exit};
use crate::progress::Progress;
use crate::render::{json_success, rejection};

#[derive(Subcommand)]
pub(crate) enum MooncakeCommand {
    /// Write a placement of this project as a Mooncake WeightPlacementManifest
    /// (`weight_placement_from_json` reads it), inferring topology, participants and axes.
    Export(ExportArgs),
    /// Read a Mooncake WeightPlacementManifest (or a Store WeightManifest, every fragment on
    /// rank 0) as this project's canonical placement; what it has no place for is listed on
    /// standard error.
    Import {
        #[command(flatten)]
        input: crate::options::Input,
        #[command(flatten)]
        out: Out,
    },
    /// Validate a Mooncake document: a WeightPlacementManifest or a Store WeightManifest.
    Validate(crate::options::Input),
    /// Write this project's runtime binding of a Mooncake placement as Mooncake's
    /// per-participant bindings (this project's JSON form of them: upstream has none).
    ExportBinding(binding::BindingArgs),
    /// Read Mooncake's per-participant bindings (a JSON array) as this project's runtime
    /// binding; what it has no place for is listed on standard error.
    ImportBinding(binding::BindingArgs),
}

#[derive(Args)]
pub(crate) struct ExportArgs {
    /// This project's placement manifest (`-` for standard input).
    pub placement: String,
    /// The weight generation (default 0).
    #[arg(long)]
    pub weight_generation: Option<u64>,
    /// The placement set id (default: the placement's placement_id).
    #[arg(long)]
    pub placement_set_id: Option<String>,
    /// Axis sizes, `tp=8` (default: one more than the largest coordinate); repeatable.
    #[arg(long = "size", value_name = "AXIS=N")]
    pub sizes: Vec<String>,
    /// A JSON file of overrides: weight_generation, placement_set_id, sizes,
    /// participants (a list of `{participant_id, rank}`) and parallel_axes (`{tensor_id: axes}`).
    #[arg(long)]
    pub overrides: Option<PathBuf>,
    #[command(flatten)]
    pub out: Out,
    #[command(flatten)]
    pub format: FormatArg,
}

impl MooncakeCommand {
    /// The `--format` given.
    pub(crate) fn format(&self) -> &FormatArg {
        match self {
            MooncakeCommand::Export(args) => &args.format,
            MooncakeCommand::Import { input, .. } | MooncakeCommand::Validate(input) => {
                &input.format
            }
            MooncakeCommand::ExportBinding(args) | MooncakeCommand::ImportBinding(args) => {
                &args.format
            }
        }
    }
}

type Outcome = Result<ExitCode, String>;

fn write(path: Option<&std::path::Path>, text: &str) -> Result<(), String> {
    emit(path, text.as_bytes()).map_err(|e| format!("cannot write output: {e}"))
}

pub(crate) fn run(command: &MooncakeCommand, limits: &Limits, progress: &Progress) -> Outcome {
    match command {
        MooncakeCommand::Export(args) => run_export(args, limits, progress),
        MooncakeCommand::ExportBinding(args) => binding::run(args, true, limits, progress),
        MooncakeCommand::ImportBinding(args) => binding::run(args, false, limits, progress),
        MooncakeCommand::Import { input, out } => {
            let label = "placement manifest";
            let text = read_input(&input.file, limits.max_document_bytes, progress, label)?;
            let format = input.format.format;
            let result = progress.reading(label, text.len(), || {
                if weight_manifest_mooncake::is_mooncake_store(&text) {
                    MooncakeStorageManifest::from_json(
                        &text,
                        &Options::default().with_limits(*limits),
                    )
                    .and_then(|m| import_storage(&m))
                } else {
                    MooncakePlacement::from_json(&text, &Options::default().with_limits(*limits))
                        .and_then(|m| import(&m))
                }
            });
            let imported = match result {
                Err(e) => return Ok(rejection(&e, format)),
                Ok(i) => i,
            };
            let canonical = imported.placement.to_json();
            if format == Format::Json {
                if let Some(path) = out.output.as_deref() {
                    write(Some(path), &canonical)?;
                }
                json_success(json!({
                    "canonical": canonical,
                    "placement_id": imported.placement.placement_id(),
                    "digest": imported.placement.digest(),
                    "dropped": imported.dropped,
                }));
            } else {
                for line in &imported.dropped {
                    eprintln!("dropped: {line}");
                }
                write(out.output.as_deref(), &canonical)?;
            }
            leave_to_exit(imported);
            Ok(ExitCode::SUCCESS)
        }
        MooncakeCommand::Validate(input) => {
            let label = "placement manifest";
            let text = read_input(&input.file, limits.max_document_bytes, progress, label)?;
            let format = input.format.format;
            // A placement the one-pass reader accepts has parts: it is no Store manifest,
            // and this is the placement the general reader gives (no tree is built).
            let accepted = progress.reading(label, text.len(), || {
                MooncakePlacement::from_json_one_pass(
                    &text,
                    &Options::default().with_limits(*limits),
                )
            });
            // A Store manifest has a namespace; everything else is read as a placement.
            let storage = accepted.is_none()
                && matches!(
                    reader::read(&text, label, limits).ok().as_ref().and_then(|v| v.as_object()),
                    Some(o) if o.get("namespace").is_some() && o.get("parts").is_none()
                );
            if storage {
                return Ok(
                    match MooncakeStorageManifest::from_json(
                        &text,
                        &Options::default().with_limits(*limits),
                    ) {
                        Err(e) => rejection(&e, format),
                        Ok(m) => {
                            let (digest, tensors, fragments) =
                                (m.digest(), m.tensors.len(), m.fragments.len());
                            if format == Format::Json {
                                json_success(
                                    json!({"document": "storage manifest", "manifest_digest": digest, "tensors": tensors, "fragments": fragments}),
                                );
                            } else {
                                println!("storage manifest {}", m.manifest_key);
                                println!("manifest_digest: {digest}");
                                println!("tensors: {tensors}, fragments: {fragments}");
                            }
                            ExitCode::SUCCESS
                        }
                    },
                );
            }
            let result = match accepted {
                Some(m) => Ok(m),
                None => progress.reading(label, text.len(), || {
                    MooncakePlacement::from_json(&text, &Options::default().with_limits(*limits))
                }),
            };
            Ok(match result {
                Err(e) => rejection(&e, format),
                Ok(m) => {
                    let fragments = m.fragments().count();
                    // Readers take any fragment id; say how many are the ones upstream's
                    // constructors generate from the contents.
                    let generated = m
                        .fragments()
                        .filter(|f| generated_fragment_id(f) == f.placement_fragment_id)
                        .count();
                    if format == Format::Json {
                        json_success(json!({
                            "document": "placement",
                            "placement_id": m.placement_id(),
                            "topology_id": m.topology_id(),
                            "digest": m.digest(),
                            "tensors": m.tensors().len(),
                            "fragments": fragments,
                            "participants": m.parts().len(),
                            "generated_fragment_ids": generated,
                        }));
                    } else {
                        println!("placement_id: {}", m.placement_id());
                        println!("topology_id: {}", m.topology_id());
                        println!("digest: {}", m.digest());
                        println!(
                            "tensors: {}, fragments: {}, participants: {}",
                            m.tensors().len(),
                            fragments,
                            m.parts().len()
                        );
                        println!("fragment ids generated from their contents: {generated} of {fragments}");
                    }
                    leave_to_exit(m);
                    ExitCode::SUCCESS
                }
            })
        }
    }
}

fn run_export(args: &ExportArgs, limits: &Limits, progress: &Progress) -> Outcome {
    let format = args.format.format;
    let mut options = match &args.overrides {
        Some(path) => {
            let text =
                std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            match ExportOptions::from_overrides_json(&text, &Options::default()) {
                Ok(o) => o,
                Err(e) => return Ok(rejection(&e, format)),
            }
        }
        None => ExportOptions::default(),
    };
    if let Some(g) = args.weight_generation {
        options.weight_generation = Some(g);
    }
    if let Some(s) = &args.placement_set_id {
        options.placement_set_id = Some(s.clone());
    }
    for setting in &args.sizes {
        let parsed = setting.split_once('=').and_then(|(k, v)| {
            Some((
                AxisKind::parse(k)?,
                v.parse::<u64>().ok().filter(|&n| n >= 1)?,
            ))
        });
        let Some((kind, size)) = parsed else {
            return Err(format!(
                "--size {setting}: expected AXIS=N with AXIS one of dp, pp, ep, tp and N >= 1"
            ));
        };
        options.sizes.insert(kind, size);
    }
    let label = "placement manifest";
    let text = read_input(&args.placement, limits.max_document_bytes, progress, label)?;
    let result = progress.reading(label, text.len(), || {
        Placement::from_json(&text, &Options::default().with_limits(*limits))
            .and_then(|p| export(&p, &options))
    });
    let exported = match result {
        Err(e) => return Ok(rejection(&e, format)),
        Ok(m) => m,
    };
    let wire = exported.to_json();
    if format == Format::Json {
        if let Some(path) = args.out.output.as_deref() {
            write(Some(path), &wire)?;
        }
        json_success(json!({
            "placement_id": exported.placement_id(),
            "topology_id": exported.topology_id(),
            "digest": exported.digest(),
        }));
    } else {
        write(args.out.output.as_deref(), &wire)?;
    }
    leave_to_exit(exported);
    Ok(ExitCode::SUCCESS)
}
