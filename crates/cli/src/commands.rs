//! One function per command: read, call the library, render.

use std::borrow::Cow;
use std::process::ExitCode;

use serde_json::json;
use weight_manifest::inventory::{
    validate_runtime_inventory, RuntimeSummary, BINDING_INVENTORY_LABEL, PLACEMENT_INVENTORY_LABEL,
    RUNTIME_INVENTORY_LABEL,
};
use weight_manifest::{
    bind, project_binding, project_placement, AddressSemantics, Binding, Error, Limits, Options,
    Placement, Runtime, Value,
};
use weight_manifest_conformance::{self as conformance, RunOptions};

use super::args::{
    BindingCommand, Command, ConformanceCommand, Format, Input, PlacementCommand, ProjectCommand,
    RuntimeCommand, SchemaCommand,
};
use super::input::read_input;
use super::output::{emit, leave_to_exit, write_atomic};
use super::progress::Progress;
use super::render::{document, json_success, rejection};

type Outcome = Result<ExitCode, String>;

/// The options of an inventory `text` (labelled `label`) under `--limit` and
/// `--address-semantics` as given: any text, an invalid one reported where §10.2 puts it.
fn inventory_options(
    text: &[u8],
    label: &str,
    given: Option<&String>,
    limits: &Limits,
) -> Result<Options<'static>, Error> {
    let given = given.map(|s| Value::Str(Cow::Borrowed(s.as_str())));
    let semantics = AddressSemantics::for_text(text, given.as_ref(), label, limits)?;
    Ok(Options::default()
        .with_limits(*limits)
        .with_address_semantics(semantics))
}

/// Runs `command` under `limits`, showing its long steps on `progress`.
pub(crate) fn run(command: Command, limits: &Limits, progress: Progress) -> Outcome {
    let progress = &progress;
    match command {
        Command::Placement(command) => placement(&command, limits, progress),
        Command::Runtime(RuntimeCommand::Validate {
            input,
            inventory,
            semantics,
        }) => {
            let address_semantics = semantics.address_semantics.as_ref();
            if inventory && input.format.format == Format::Text {
                return inventory_counts(&input, limits, address_semantics, progress);
            }
            let label = if inventory {
                RUNTIME_INVENTORY_LABEL
            } else {
                "runtime manifest"
            };
            validate(
                &input,
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
        Command::Binding(BindingCommand::Validate {
            input,
            inventory,
            semantics,
        }) => validate(
            &input,
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
        ),
        Command::Project(command) => project(command, limits, progress),
        Command::BenchData(args) => super::bench_data::run(&args),
        Command::Bind {
            placement,
            binding,
            semantics,
            out,
            format,
        } => {
            let max = limits.max_document_bytes;
            let placement_text = read_input(&placement, max, progress, "placement manifest")?;
            let binding_text = read_input(&binding, max, progress, BINDING_INVENTORY_LABEL)?;
            let given = semantics.address_semantics.as_ref();
            let result = progress
                .reading("placement manifest", placement_text.len(), || {
                    Placement::from_json(&placement_text, &Options::default().with_limits(*limits))
                })
                .and_then(|p| {
                    let b =
                        progress.reading(BINDING_INVENTORY_LABEL, binding_text.len(), || {
                            let options = inventory_options(
                                &binding_text,
                                BINDING_INVENTORY_LABEL,
                                given,
                                limits,
                            )?;
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
        Command::Schema(SchemaCommand::Export { dir }) => {
            std::fs::create_dir_all(&dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
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
        Command::Adapt(command) => super::adapt::run(command, limits, progress),
        Command::Content(command) => super::content::run(command, limits, progress),
        Command::Coverage(args) => super::coverage::run(&args, limits, progress),
        Command::Plan(args) => super::plan::run(&args, limits, progress),
        Command::Mooncake(command) => super::mooncake::run(&command, limits, progress),
        Command::PlanBind(args) => super::plan_bind::run(&args, limits, progress),
        Command::Fence(args) => super::fence::run(&args, limits, progress),
        Command::Conformance(ConformanceCommand::Testee) => {
            conformance::serve(std::io::stdin().lock(), std::io::stdout().lock())
                .map_err(|e| format!("testee I/O: {e}"))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Conformance(ConformanceCommand::Run {
            dir,
            testee,
            filter,
            known_failures,
            timeout,
        }) => {
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

/// How a document is read: `--address-semantics` as given, and the progress of reading
/// it under its label.
type Reading<'a> = (Option<&'a String>, &'a Progress, &'a str);

/// Reads `input`, runs `check` with `--address-semantics` as given, and renders the
/// outcome.
fn validate<T>(
    input: &Input,
    limits: &Limits,
    reading: Reading<'_>,
    check: impl FnOnce(&[u8], Option<&String>) -> Result<T, Error>,
    as_json: impl FnOnce(&T) -> serde_json::Value,
    as_text: impl FnOnce(&T) -> String,
) -> Outcome {
    Ok(match checked(input, limits, reading, check)? {
        Err(e) => rejection(&e, input.format.format),
        Ok(checked) => {
            if input.format.format == Format::Json {
                json_success(as_json(&checked));
            } else {
                println!("{}", as_text(&checked));
            }
            leave_to_exit(checked);
            ExitCode::SUCCESS
        }
    })
}

/// Reads `input` and runs `check` on it with `--address-semantics` as given.
fn checked<T>(
    input: &Input,
    limits: &Limits,
    (address_semantics, progress, label): Reading<'_>,
    check: impl FnOnce(&[u8], Option<&String>) -> Result<T, Error>,
) -> Result<Result<T, Error>, String> {
    let text = read_input(&input.file, limits.max_document_bytes, progress, label)?;
    Ok(progress.reading(label, text.len(), || check(&text, address_semantics)))
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
fn runtime_line(summary: &RuntimeSummary) -> String {
    let generation = summary
        .generation
        .map_or("none".to_owned(), |g| g.to_string());
    format!(
        "ok: {} tensors, {} fragments, generation {generation}",
        summary.tensors, summary.fragments
    )
}

fn write_out(path: Option<&std::path::Path>, text: &str) -> Outcome {
    emit(path, text.as_bytes()).map_err(|e| format!("cannot write output: {e}"))?;
    Ok(ExitCode::SUCCESS)
}

fn placement_fields(p: &Placement) -> serde_json::Value {
    json!({
        "canonical": p.to_json(),
        "placement_id": p.placement_id(),
        "digest": p.digest(),
        "tensors": p.tensors().len(),
        "fragments": p.fragments().len(),
    })
}

fn placement(command: &PlacementCommand, limits: &Limits, progress: &Progress) -> Outcome {
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

fn project(command: ProjectCommand, limits: &Limits, progress: &Progress) -> Outcome {
    let (args, to_binding) = match command {
        ProjectCommand::Placement(args) => (args, false),
        ProjectCommand::Binding(args) => (args, true),
    };
    let label = RUNTIME_INVENTORY_LABEL;
    let text = read_input(&args.inventory, limits.max_document_bytes, progress, label)?;
    let given = args.semantics.address_semantics.as_ref();
    let format = args.format.format;
    let runtime = match progress.reading(label, text.len(), || {
        inventory_options(&text, label, given, limits)
            .and_then(|options| Runtime::from_inventory_json(&text, &options))
    }) {
        Err(e) => return Ok(rejection(&e, format)),
        Ok(r) => r,
    };
    let id = args.placement_id.as_deref();
    if to_binding {
        match progress.phase("projecting the binding", || project_binding(&runtime, id)) {
            Err(e) => Ok(rejection(&e, format)),
            Ok(b) if format == Format::Json => {
                let output = args.out.output.as_deref();
                document(Format::Json, output, json!({}), "binding", b.to_json())?;
                Ok(ExitCode::SUCCESS)
            }
            Ok(b) => write_out(args.out.output.as_deref(), &b.to_json()),
        }
    } else {
        match progress.phase("projecting the placement", || {
            project_placement(&runtime, id)
        }) {
            Err(e) => Ok(rejection(&e, format)),
            Ok(p) if format == Format::Json => {
                if let Some(path) = args.out.output.as_deref() {
                    write_out(Some(path), &p.to_json())?;
                }
                json_success(placement_fields(&p));
                Ok(ExitCode::SUCCESS)
            }
            Ok(p) => write_out(args.out.output.as_deref(), &p.to_json()),
        }
    }
}
