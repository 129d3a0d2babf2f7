//! The command line, declared with clap.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Parser)]
#[command(
    name = "weight-manifest",
    version,
    about = "Validate, canonicalise, project and bind model-weight manifests"
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub command: Command,
    #[arg(long = "limit", global = true, value_name = "NAME=VALUE", help = super::limits::HELP, value_parser = super::limits::parse_setting)]
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

impl Command {
    /// The `--format` the command was given (`text` for the commands without one).
    pub fn format(&self) -> Format {
        let format = match self {
            Command::Placement(
                PlacementCommand::Validate(input)
                | PlacementCommand::Id(input)
                | PlacementCommand::Canonicalize { input, .. }
                | PlacementCommand::FromInventory { input, .. },
            )
            | Command::Runtime(RuntimeCommand::Validate { input, .. })
            | Command::Binding(BindingCommand::Validate { input, .. }) => &input.format,
            Command::Project(ProjectCommand::Placement(args) | ProjectCommand::Binding(args)) => {
                &args.format
            }
            Command::Bind { format, .. } => format,
            Command::Coverage(args) => &args.format,
            Command::Plan(args) => &args.format,
            Command::PlanBind(args) => &args.format,
            Command::Fence(args) => &args.format,
            Command::Adapt(super::adapt::AdaptCommand::Safetensors(args)) => &args.format,
            Command::Content(command) => command.format(),
            Command::Mooncake(command) => command.format(),
            Command::Schema(_) | Command::Conformance(_) | Command::BenchData(_) => {
                return Format::Text
            }
        };
        format.format
    }
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Placement manifests (contract §6).
    #[command(subcommand)]
    Placement(PlacementCommand),
    /// Runtime manifests (contract §9.1) and runtime inventories (§10.3).
    #[command(subcommand)]
    Runtime(RuntimeCommand),
    /// Runtime binding manifests (contract §9.2) and binding inventories (§10.4).
    #[command(subcommand)]
    Binding(BindingCommand),
    /// Project a runtime inventory to its placement or binding (contract §11).
    #[command(subcommand)]
    Project(ProjectCommand),
    /// Bind a placement and a binding inventory into a runtime manifest (contract §12).
    Bind {
        /// Placement manifest JSON file (`-` for standard input).
        placement: String,
        /// Binding inventory JSON file.
        binding: String,
        #[command(flatten)]
        semantics: Semantics,
        #[command(flatten)]
        out: Out,
        #[command(flatten)]
        format: FormatArg,
    },
    /// The published JSON Schemas.
    #[command(subcommand)]
    Schema(SchemaCommand),
    /// The conformance suite: testee and runner.
    #[command(subcommand)]
    Conformance(ConformanceCommand),
    /// Coverage analysis: which tensors the placement holds completely.
    Coverage(super::coverage::CoverageArgs),
    /// Plan the byte regions that move weights from one placement to another.
    Plan(super::plan::PlanArgs),
    /// Bind a reshard plan to the runtime bindings of its placements: the copy list.
    PlanBind(super::plan_bind::PlanBindArgs),
    /// Check what a worker or a binding holds now against a bound plan's fence (§17.7).
    Fence(super::fence::FenceArgs),
    /// A placement from a checkpoint's headers and a sharding rules file.
    #[command(subcommand)]
    Adapt(super::adapt::AdaptCommand),
    /// Layout-independent content digests of tensors (contract §19).
    #[command(subcommand)]
    Content(super::content::ContentCommand),
    /// Mooncake's released formats (mooncake.reshard 0.3.13): export, import, validate.
    #[command(subcommand)]
    Mooncake(super::mooncake::MooncakeCommand),
    /// Write a generated benchmark workload (BENCHMARKS.md).
    #[command(hide = true)]
    BenchData(super::bench_data::BenchDataArgs),
}

#[derive(Subcommand)]
pub(crate) enum PlacementCommand {
    /// Validate a placement; print its placement_id and digest.
    Validate(Input),
    /// Print the canonical wire JSON.
    Canonicalize {
        #[command(flatten)]
        input: Input,
        #[command(flatten)]
        out: Out,
    },
    /// Print the placement_id only.
    Id(Input),
    /// Read a placement inventory (§10.5) and print the canonical placement.
    FromInventory {
        #[command(flatten)]
        input: Input,
        #[command(flatten)]
        out: Out,
    },
}

#[derive(Subcommand)]
pub(crate) enum RuntimeCommand {
    /// Validate a runtime manifest (or, with --inventory, a runtime inventory).
    Validate {
        #[command(flatten)]
        input: Input,
        /// The file is a runtime inventory (§10.3), not a runtime manifest.
        #[arg(long)]
        inventory: bool,
        #[command(flatten)]
        semantics: Semantics,
    },
}

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

#[derive(Subcommand)]
pub(crate) enum ProjectCommand {
    /// Runtime inventory -> canonical placement (§11.1).
    Placement(ProjectArgs),
    /// Runtime inventory -> binding manifest (§11.2).
    Binding(ProjectArgs),
}

#[derive(Args)]
pub(crate) struct ProjectArgs {
    /// Runtime inventory JSON file (`-` for standard input).
    pub inventory: String,
    /// The expected placement_id; only the canonical id is accepted.
    #[arg(long)]
    pub placement_id: Option<String>,
    #[command(flatten)]
    pub semantics: Semantics,
    #[command(flatten)]
    pub out: Out,
    #[command(flatten)]
    pub format: FormatArg,
}

#[derive(Subcommand)]
pub(crate) enum SchemaCommand {
    /// Write every published schema into DIR (created if missing).
    Export {
        /// The target folder.
        dir: PathBuf,
    },
}

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

#[derive(Args)]
pub(crate) struct Input {
    /// JSON file (`-` for standard input).
    pub file: String,
    #[command(flatten)]
    pub format: FormatArg,
}

#[derive(Args)]
pub(crate) struct FormatArg {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

#[derive(Args)]
pub(crate) struct Semantics {
    /// Declare that every address already points at the first byte of the view.
    #[arg(long, value_name = "view")]
    pub address_semantics: Option<String>,
}

#[derive(Args)]
pub(crate) struct Out {
    /// Write the JSON to this file (atomically) instead of standard output.
    #[arg(short = 'o', long = "output")]
    pub output: Option<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// Human-readable lines.
    Text,
    /// One JSON object on standard output.
    Json,
}
