//! The command line, declared with clap: the global options and one variant per command,
//! each command's arguments and run in its own module under `command/`.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use weight_manifest::Limits;

use crate::command;
use crate::options::Format;
use crate::progress::Progress;

#[derive(Parser)]
#[command(
    name = "weight-manifest",
    version,
    about = "Validate, canonicalise, project and bind model-weight manifests"
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub command: Command,
    #[arg(long = "limit", global = true, value_name = "NAME=VALUE", help = crate::limits::HELP, value_parser = crate::limits::parse_setting)]
    pub limits: Vec<String>,
    /// Show no progress on standard error.
    ///
    /// Work that runs longer than about a second (reading and validating a large
    /// document, planning, coverage) shows its progress on standard error: a spinner,
    /// counter or bar with the elapsed time, cleared when the work ends. It appears only
    /// when standard error is a terminal, never with `--format json`, and never on
    /// standard output. WEIGHT_MANIFEST_PROGRESS_DELAY_MS sets the delay before it
    /// appears (default 1000).
    #[arg(short, long, global = true)]
    pub quiet: bool,
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Placement manifests (contract §6).
    #[command(subcommand)]
    Placement(command::placement::PlacementCommand),
    /// Runtime manifests (contract §9.1) and runtime inventories (§10.3).
    #[command(subcommand)]
    Runtime(command::runtime::RuntimeCommand),
    /// Runtime binding manifests (contract §9.2) and binding inventories (§10.4).
    #[command(subcommand)]
    Binding(command::binding::BindingCommand),
    /// Project a runtime inventory to its placement or binding (contract §11).
    #[command(subcommand)]
    Project(command::project::ProjectCommand),
    /// Bind a placement and a binding inventory into a runtime manifest (contract §12).
    Bind(command::bind::BindArgs),
    /// The published JSON Schemas.
    #[command(subcommand)]
    Schema(command::schema::SchemaCommand),
    /// The conformance suite: testee and runner.
    #[command(subcommand)]
    Conformance(command::conformance::ConformanceCommand),
    /// Coverage analysis: which tensors the placement holds completely.
    Coverage(command::coverage::CoverageArgs),
    /// Plan the byte regions that move weights from one placement to another.
    Plan(command::plan::PlanArgs),
    /// Bind a reshard plan to the runtime bindings of its placements: the copy list.
    PlanBind(command::plan_bind::PlanBindArgs),
    /// Check what a worker or a binding holds now against a bound plan's fence (§17.7).
    Fence(command::fence::FenceArgs),
    /// A placement from a checkpoint's headers and a sharding rules file.
    #[command(subcommand)]
    Adapt(command::adapt::AdaptCommand),
    /// Layout-independent content digests of tensors (contract §19).
    #[command(subcommand)]
    Content(command::content::ContentCommand),
    /// Mooncake's released formats (mooncake.reshard 0.3.13): export, import, validate.
    #[command(subcommand)]
    Mooncake(command::mooncake::MooncakeCommand),
    /// Write a generated benchmark workload (BENCHMARKS.md).
    #[command(hide = true)]
    BenchData(command::bench_data::BenchDataArgs),
}

impl Command {
    /// The `--format` the command was given (`text` for the commands without one).
    pub(crate) fn format(&self) -> Format {
        match self {
            Command::Placement(command) => command.format(),
            Command::Runtime(command) => command.format(),
            Command::Binding(command) => command.format(),
            Command::Project(command) => command.format(),
            Command::Bind(args) => args.format.format,
            Command::Coverage(args) => args.format.format,
            Command::Plan(args) => args.format.format,
            Command::PlanBind(args) => args.format.format,
            Command::Fence(args) => args.format.format,
            Command::Adapt(command::adapt::AdaptCommand::Safetensors(args)) => args.format.format,
            Command::Content(command) => command.format().format,
            Command::Mooncake(command) => command.format().format,
            Command::Schema(_) | Command::Conformance(_) | Command::BenchData(_) => Format::Text,
        }
    }

    /// Runs the command under `limits`, showing its long steps on `progress`.
    pub(crate) fn run(self, limits: &Limits, progress: &Progress) -> Result<ExitCode, String> {
        match self {
            Command::Placement(command) => command::placement::run(&command, limits, progress),
            Command::Runtime(command) => command::runtime::run(&command, limits, progress),
            Command::Binding(command) => command::binding::run(&command, limits, progress),
            Command::Project(command) => command::project::run(&command, limits, progress),
            Command::Bind(args) => command::bind::run(&args, limits, progress),
            Command::Schema(command) => command::schema::run(&command),
            Command::Conformance(command) => command::conformance::run(command),
            Command::Coverage(args) => command::coverage::run(&args, limits, progress),
            Command::Plan(args) => command::plan::run(&args, limits, progress),
            Command::PlanBind(args) => command::plan_bind::run(&args, limits, progress),
            Command::Fence(args) => command::fence::run(&args, limits, progress),
            Command::Adapt(command) => command::adapt::run(command, limits, progress),
            Command::Content(command) => command::content::run(command, limits, progress),
            Command::Mooncake(command) => command::mooncake::run(&command, limits, progress),
            Command::BenchData(args) => command::bench_data::run(&args),
        }
    }
}
