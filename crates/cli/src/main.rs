//! `weight-manifest`: validate, canonicalise, project and bind model-weight manifests,
//! plan and bind reshards, adapt checkpoints, export the published schemas, and run the
//! conformance suite.
//!
//! Argument parsing and rendering only: every command calls a library (the core
//! `weight-manifest`, `weight-manifest-adapt`, `weight-manifest-conformance`) and renders
//! its result or error.

mod cli;
mod command;
mod input;
mod limits;
mod options;
mod output;
mod progress;
mod reading;
mod render;

use std::process::ExitCode;

use clap::Parser;

/// The allocator of the command-line program (the library leaves the choice to its host).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `purge_delay` option in the option enum of the mimalloc bundled by
/// libmimalloc-sys 0.1.49 (v3: `mi_option_purge_delay`, the 16th entry).
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
/// That option's documented default (milliseconds): the value that identifies it.
const PURGE_DELAY_DEFAULT: std::ffi::c_long = 1000;

/// Keeps freed memory mapped for the whole run. mimalloc returns freed memory to the OS
/// ("purging"); a command that exits within a second gains nothing from that and pays for
/// it when the memory is needed again, as fresh page faults: 70 MiB of the reshard plan's
/// 238 MiB were purged and faulted in again, and on a VM fresh huge pages cost 0.2-0.7 s of
/// system time in some runs (BENCHMARKS.md). `MIMALLOC_PURGE_DELAY`, when set, wins; if the
/// option at [`PURGE_DELAY`] does not hold its documented default (another mimalloc), it is
/// left alone.
#[allow(unsafe_code)]
fn keep_freed_memory() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
        return;
    }
    // SAFETY: reading and setting an allocator option; called once, before any other
    // thread exists.
    unsafe {
        if libmimalloc_sys::mi_option_get(PURGE_DELAY) == PURGE_DELAY_DEFAULT {
            libmimalloc_sys::mi_option_set(PURGE_DELAY, -1);
        }
    }
}

/// Restores SIGPIPE's default action, which Rust's runtime sets to ignored: a reader that
/// stops early (`weight-manifest plan A B | head`) ends the program quietly, as it does
/// any Unix tool, instead of making `println!` panic on a broken pipe.
#[allow(unsafe_code)]
fn default_sigpipe() {
    // SAFETY: setting a signal disposition to its default; called once, before any other
    // thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn main() -> ExitCode {
    keep_freed_memory();
    default_sigpipe();
    run()
}

/// Parses the arguments and runs the command. Exit codes: 0 accepted, 1 rejected (or a
/// conformance failure), 2 usage or I/O error.
fn run() -> ExitCode {
    let cli = cli::Cli::parse();
    let progress = progress::Progress::new(cli.quiet, cli.command.format());
    let outcome =
        limits::from_settings(&cli.limits).and_then(|limits| cli.command.run(&limits, &progress));
    match outcome {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    /// A canary for allocator upgrades: the option index still names `purge_delay` with
    /// its documented default. The default only shows without `MIMALLOC_PURGE_DELAY`:
    /// when it is set, the test runs itself again in a child process without it.
    #[test]
    #[allow(unsafe_code)]
    fn the_purge_delay_option_is_where_main_expects_it() {
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
            let status = std::process::Command::new(std::env::current_exe().unwrap())
                .args([
                    "--exact",
                    "tests::the_purge_delay_option_is_where_main_expects_it",
                ])
                .env_remove("MIMALLOC_PURGE_DELAY")
                .status()
                .unwrap();
            assert!(
                status.success(),
                "the canary failed without MIMALLOC_PURGE_DELAY"
            );
            return;
        }
        // SAFETY: reading an allocator option.
        let value = unsafe { libmimalloc_sys::mi_option_get(super::PURGE_DELAY) };
        assert_eq!(value, super::PURGE_DELAY_DEFAULT);
    }
}
