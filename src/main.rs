//! `weight-manifest`: validate, canonicalise, project and bind model-weight manifests,
//! export the published schemas, and run the conformance suite.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
