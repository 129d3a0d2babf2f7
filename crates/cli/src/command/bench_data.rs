//! The hidden `bench-data` command: writes the generated benchmark workloads
//! (see `weight_manifest_bench_data`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use weight_manifest_bench_data::{
    write_placement, write_quantization, write_runtime_inventory, Model,
};

use crate::output::write_atomic;

/// Which model to generate.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ModelArg {
    /// 61 layers, 256 experts, TP8/EP8, PP4, DP2: about 100k fragments.
    DeepseekV3,
    /// 61 layers, 384 experts, TP8/EP8, PP4 and --dp replicas (76k fragments each).
    KimiK2,
    /// Kimi-K2's layers with 1,056 experts: 2.8 trillion parameters.
    Kimi2p8t,
}

/// Which document to write.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum KindArg {
    /// The canonical placement manifest.
    Placement,
    /// The runtime inventory (records GPU by GPU, addresses packed per device).
    RuntimeInventory,
    /// The quantization spec of the block-FP8 tensors (with --block-fp8).
    Quantization,
}

#[derive(Args)]
pub(crate) struct BenchDataArgs {
    /// The model.
    #[arg(long, value_enum)]
    pub model: ModelArg,
    /// The document.
    #[arg(long, value_enum)]
    pub kind: KindArg,
    /// Data parallel replicas (default: 2 for DeepSeek-V3, 14 for Kimi-K2).
    #[arg(long)]
    pub dp: Option<u64>,
    /// Keep only the first N layers (for scaling curves).
    #[arg(long)]
    pub layers: Option<u64>,
    /// Routed experts in BF16 (a trainer's copy) instead of the checkpoint's FP8.
    #[arg(long)]
    pub bf16_experts: bool,
    /// The MLA down projections whole on every TP rank instead of split by rows.
    #[arg(long)]
    pub mla_replicated: bool,
    /// The checkpoint's block FP8: every decoder linear weight FP8 with its block scales.
    #[arg(long)]
    pub block_fp8: bool,
    /// The output file.
    #[arg(short = 'o', long = "output")]
    pub output: PathBuf,
}

pub(crate) fn run(args: &BenchDataArgs) -> Result<ExitCode, String> {
    let mut model = match args.model {
        ModelArg::DeepseekV3 => Model::deepseek_v3(),
        ModelArg::KimiK2 => Model::kimi_k2(14),
        ModelArg::Kimi2p8t => Model::kimi_2p8t(14),
    };
    if let Some(dp) = args.dp {
        model.dp = dp.max(1);
    }
    model.bf16_experts = args.bf16_experts;
    model.mla_replicated = args.mla_replicated;
    model.block_fp8 = args.block_fp8;
    if let Some(layers) = args.layers {
        model = model.truncated(layers);
    }
    let mut text = Vec::new();
    match args.kind {
        KindArg::Placement => write_placement(&model, &mut text),
        KindArg::RuntimeInventory => write_runtime_inventory(&model, &mut text),
        KindArg::Quantization => write_quantization(&model, &mut text),
    }
    .and_then(|()| write_atomic(&args.output, &text))
    .map_err(|e| format!("cannot write {}: {e}", args.output.display()))?;
    Ok(ExitCode::SUCCESS)
}
