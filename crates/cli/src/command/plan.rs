//! The `plan` command: the regions that move weights from one placement to another.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use serde_json::{json, Value as Json};
use weight_manifest::plan::{
    plan_with_progress, PlanStats, DEFAULT_MAX_REGIONS, DEFAULT_MAX_SEGMENTS,
};
use weight_manifest::{Error, Limits, Placement, PlanLimits, ReplicaChoice};
use weight_manifest_mooncake::{
    check_generations, export, import_owned, import_storage, ExportOptions, MooncakePlacement,
    MooncakeReplicas, MooncakeStorageManifest,
};

use crate::input::read_input;
use crate::options::{Format, FormatArg};
use crate::output::leave_to_exit;
use crate::progress::{Progress, Unit};
use crate::render::{document, rejection};
use weight_manifest::Options;

#[derive(Args)]
pub(crate) struct PlanArgs {
    /// Source placement manifest JSON file (the layout the weights are in).
    pub source: String,
    /// Target placement manifest JSON file (the layout the weights go to).
    pub target: String,
    /// Fail with plan_limit_exceeded when the plan needs more regions.
    #[arg(long, default_value_t = DEFAULT_MAX_REGIONS)]
    pub max_regions: u64,
    /// Fail with plan_limit_exceeded when the plan needs more contiguous runs in total.
    #[arg(long, default_value_t = DEFAULT_MAX_SEGMENTS)]
    pub max_segments: u64,
    /// Print the region, segment and byte counts, total and per source rank (on standard
    /// error in text format).
    #[arg(long)]
    pub stats: bool,
    /// Which source replica a region reads: `balanced` (the target's own dp, then the least
    /// loaded rank), `spread` (any replica: the busiest source rank sends the fewest bytes;
    /// for sources with more DP replicas than the target) or `mooncake` (upstream's choice:
    /// source replica sorted(dp)[d % n], the lowest rank; regions then equal upstream's
    /// plan_placement_transfer).
    #[arg(long, value_enum, default_value_t = Choice::Balanced)]
    pub replica_choice: Choice,
    /// A quantization spec JSON file (contract §17.8): the target tensors the source
    /// quantizes into block FP8, with their scale tensors. Only with the balanced choice.
    #[arg(long, value_name = "SPEC")]
    pub quantization: Option<String>,
    /// Write the plan (canonical JSON) to this file (atomically) instead of standard output.
    #[arg(short = 'o', long = "output")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub format: FormatArg,
}

/// The replica choice of the command line.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Choice {
    /// Load-balanced (the default).
    Balanced,
    /// Any replica, so that the busiest source rank sends the fewest bytes.
    Spread,
    /// Mooncake's `plan_placement_transfer` choice.
    Mooncake,
}

/// The replica choice `plan --replica-choice mooncake` has for a source, by its format.
enum Replicas {
    /// A Mooncake placement's, from its own axes (when asked for).
    Mooncake(Option<MooncakeReplicas>),
    /// None yet: ours, whose axes come from its export.
    Ours,
    /// None: a Store manifest holds each tile once, so every choice reads the same
    /// fragment.
    Store,
}

/// A placement of any format: ours, a Mooncake placement or a Mooncake Store manifest
/// (each stored fragment on rank 0: the source of a load from the Store); with
/// `replicas`, a Mooncake placement's replica choice is taken before the placement is
/// imported. The last member is its Mooncake `weight_generation`, if it has one.
fn read_placement(
    text: &[u8],
    options: &Options<'_>,
    limits: &Limits,
    replicas: bool,
) -> Result<(Placement, Replicas, Option<u64>), Error> {
    // Mooncake's canonical text starts with its parts; when the one-pass reader accepts
    // it, it is a Mooncake placement (no Store manifest: its key set is exact) and this is
    // what the general reader gives, without scanning the text for keys.
    let canonical = text.starts_with(b"{\"parts\":[");
    if let Some(m) = canonical
        .then(|| {
            MooncakePlacement::from_json_one_pass(text, &Options::default().with_limits(*limits))
        })
        .flatten()
    {
        return mooncake_placement(m, replicas);
    }
    if weight_manifest_mooncake::is_mooncake_store(text) {
        let m = MooncakeStorageManifest::from_json(text, &Options::default().with_limits(*limits))?;
        let generation = Some(m.weight_generation);
        Ok((import_storage(&m)?.placement, Replicas::Store, generation))
    } else if weight_manifest_mooncake::is_mooncake_placement(text) {
        mooncake_placement(
            MooncakePlacement::from_json(text, &Options::default().with_limits(*limits))?,
            replicas,
        )
    } else {
        Ok((Placement::from_json(text, options)?, Replicas::Ours, None))
    }
}

/// A Mooncake placement imported, with its replica choice (when asked for) and its
/// generation.
fn mooncake_placement(
    m: MooncakePlacement,
    replicas: bool,
) -> Result<(Placement, Replicas, Option<u64>), Error> {
    let choice = replicas.then(|| MooncakeReplicas::new(&m));
    let generation = Some(m.weight_generation());
    let placement = import_owned(m)?.placement;
    Ok((placement, Replicas::Mooncake(choice), generation))
}

/// A u128 as a JSON number when it fits in a u64, else as a decimal string.
fn big(n: u128) -> Json {
    u64::try_from(n).map_or_else(|_| json!(n.to_string()), |n| json!(n))
}

fn stats_json(stats: &PlanStats) -> Json {
    let sources: Vec<Json> = stats
        .sources
        .iter()
        .map(|s| json!({ "rank": s.rank, "regions": s.regions, "bytes": big(s.bytes) }))
        .collect();
    json!({
        "regions": stats.regions,
        "segments": stats.segments,
        "bytes": big(stats.bytes),
        "sources": sources,
    })
}

fn print_stats(plan_id: &str, stats: &PlanStats) {
    eprintln!("plan_id: {plan_id}");
    eprintln!(
        "regions: {}, segments: {}, bytes: {}",
        stats.regions, stats.segments, stats.bytes
    );
    eprintln!("source ranks read from: {}", stats.sources.len());
    for s in &stats.sources {
        let r = &s.rank;
        eprintln!(
            "  dp {} tp {} pp {} ep {}: {} regions, {} bytes",
            r.dp, r.tp, r.pp, r.ep, s.regions, s.bytes
        );
    }
}

pub(crate) fn run(
    args: &PlanArgs,
    document_limits: &Limits,
    progress: &Progress,
) -> Result<ExitCode, String> {
    const SOURCE: &str = "source placement";
    const TARGET: &str = "target placement";
    let max = document_limits.max_document_bytes;
    let source_text = read_input(&args.source, max, progress, SOURCE)?;
    let target_text = read_input(&args.target, max, progress, TARGET)?;
    let quantization_text = match &args.quantization {
        Some(path) if args.replica_choice == Choice::Balanced => {
            Some(read_input(path, max, progress, "quantization spec")?)
        }
        Some(_) => return Err("--quantization works with --replica-choice balanced".to_owned()),
        None => None,
    };
    let format = args.format.format;
    let limits = PlanLimits {
        max_regions: args.max_regions,
        max_segments: args.max_segments,
        max_geometry_work: document_limits.max_geometry_work,
    };
    let mooncake_choice = args.replica_choice == Choice::Mooncake;
    // The two documents are read at once, the target on a second thread; the source's
    // rejection, when both are rejected, is the one reported.
    let (source_result, target_result) = std::thread::scope(|scope| {
        let target = scope.spawn(|| {
            let options = Options::default().with_limits(*document_limits);
            read_placement(&target_text, &options, document_limits, false)
        });
        let source = progress.reading(SOURCE, source_text.len(), || {
            let options = Options::default().with_limits(*document_limits);
            read_placement(&source_text, &options, document_limits, mooncake_choice)
        });
        let target = progress.reading(TARGET, target_text.len(), || {
            target
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        });
        (source, target)
    });
    let result = source_result
        .and_then(|source| Ok((source, target_result?)))
        .and_then(|((source, replicas, source_generation), target)| {
            let (target, _, target_generation) = target;
            // Upstream compares the generations after the models and revisions, whose
            // difference the planner reports.
            if source.model_id() == target.model_id() && source.revision() == target.revision() {
                check_generations(source_generation, target_generation)?;
            }
            let replicas = match (mooncake_choice, replicas) {
                (false, _) | (true, Replicas::Store) => None,
                (true, Replicas::Mooncake(choice)) => choice,
                // Mooncake's choice needs the source's axes: here the export's.
                (true, Replicas::Ours) => Some(MooncakeReplicas::new(&export(
                    &source,
                    &ExportOptions::default(),
                )?)),
            };
            if let Some(text) = &quantization_text {
                let options = Options::default().with_limits(*document_limits);
                let spec = weight_manifest::Quantization::from_json(text, &options)?;
                let plan = progress.phase("planning", || {
                    weight_manifest::plan_quantized(&source, &target, &spec, &limits)
                });
                leave_to_exit((source, target));
                return plan;
            }
            if let Some(replicas) = replicas {
                let plan = progress.phase("planning", || {
                    weight_manifest::plan_with_choice(
                        &source,
                        &target,
                        &limits,
                        ReplicaChoice::Policy(&replicas),
                    )
                });
                leave_to_exit((source, target, replicas));
                return plan;
            }
            if args.replica_choice == Choice::Spread {
                let plan = progress.phase("planning", || {
                    weight_manifest::plan_with_choice(
                        &source,
                        &target,
                        &limits,
                        ReplicaChoice::Spread(None),
                    )
                });
                leave_to_exit((source, target));
                return plan;
            }
            let plan = progress.counted("planning", None, Unit::Items("tensors"), |counter| {
                plan_with_progress(&source, &target, &limits, |done, total| {
                    counter.set_total(total as u64);
                    counter.set(done as u64);
                    if done == total {
                        counter.set_message("writing the plan");
                    }
                })
            });
            leave_to_exit((source, target));
            plan
        });
    let plan = match result {
        Err(e) => return Ok(rejection(&e, format)),
        Ok(p) => p,
    };
    let (id, stats) = (plan.plan_id().to_owned(), plan.stats().clone());
    let mut fields = json!({ "plan_id": id });
    if args.stats && format == Format::Json {
        fields["stats"] = stats_json(&stats);
    }
    document(
        format,
        args.output.as_deref(),
        fields,
        "plan",
        plan.into_json(),
    )?;
    if args.stats && format != Format::Json {
        print_stats(&id, &stats);
    }
    Ok(ExitCode::SUCCESS)
}
