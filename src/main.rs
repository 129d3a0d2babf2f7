//! `weight-manifest`: validate, canonicalise, project and bind model-weight manifests,
//! export the published schemas, and run the conformance suite.

mod cli;

/// The allocator of the command-line program (the library leaves the choice to its host).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    cli::main()
}
