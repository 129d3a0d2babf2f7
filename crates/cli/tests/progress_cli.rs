//! Progress on standard error (issue 24): shown when standard error is a terminal (here a
//! pseudo-terminal), absent when it is a pipe, with `--format json`, with `--quiet`,
//! before the delay and with `TERM=dumb`; its line is cleared when the work ends, and
//! standard output is byte for byte the same with and without it.
//!
//! Every run sets `WEIGHT_MANIFEST_PROGRESS_DELAY_MS=0`, which draws each phase as it
//! starts, so the bundled example (read in milliseconds) shows it: nothing here depends
//! on how fast the machine is.

#[allow(dead_code)]
mod cli_support;

use std::process::{Command, ExitStatus, Stdio};

const EXAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/moe-ep-pp");
const DELAY: &str = "WEIGHT_MANIFEST_PROGRESS_DELAY_MS";
/// The escape sequence with which indicatif clears a line (`ESC [ 2 K`).
const CLEAR_LINE: &str = "\x1b[2K";

fn example(name: &str) -> String {
    format!("{EXAMPLE}/{name}")
}

/// What a run printed.
struct Run {
    status: ExitStatus,
    stdout: Vec<u8>,
    stderr: String,
}

/// The binary with `args`, no input, a terminal type that can draw, and no delay.
fn command(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_weight-manifest"));
    command
        .args(args)
        .env("TERM", "xterm-256color")
        .env(DELAY, "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped());
    command
}

/// Runs `command` with standard error on a pseudo-terminal and standard output on a pipe.
///
/// The test keeps its own end of the terminal open, and once the child has exited writes
/// [`pty::END`] to it: the terminal delivers bytes in the order they were written, so
/// reading up to that mark reads all the child wrote. Reading until the terminal hangs up
/// instead loses the child's last bytes on some kernels (a hang-up can be seen before the
/// bytes written just before it).
fn on_terminal(mut command: Command) -> Run {
    let (controller, terminal) = pty::open();
    command.stderr(Stdio::from(terminal.try_clone().unwrap()));
    let child = command.spawn().unwrap();
    // The child's copy of the terminal is now its own: the test's lives on in `terminal`.
    drop(command);
    let reader = std::thread::spawn(move || pty::read_to_end_mark(controller));
    let output = child.wait_with_output().unwrap();
    pty::write_end_mark(&terminal);
    let stderr = reader.join().unwrap();
    drop(terminal);
    Run {
        status: output.status,
        stdout: output.stdout,
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    }
}

/// Runs `command` with standard error on a pipe.
fn piped(mut command: Command) -> Run {
    let output = command.stderr(Stdio::piped()).output().unwrap();
    Run {
        status: output.status,
        stdout: output.stdout,
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// The commands covered, each with the phase names it must show.
fn covered() -> Vec<(Vec<String>, Vec<&'static str>)> {
    let placement = example("placement.json");
    let inventory = example("runtime-inventory.json");
    let p = placement.as_str();
    vec![
        (
            args(&["placement", "validate", p]),
            vec!["reading placement manifest ("],
        ),
        (
            args(&["placement", "canonicalize", p]),
            vec!["reading placement manifest ("],
        ),
        (
            args(&["plan", p, p]),
            vec![
                "reading source placement (",
                "reading target placement (",
                "planning",
            ],
        ),
        (
            args(&["coverage", p]),
            vec![
                "reading placement manifest (",
                "checking the coverage of 12 tensors",
            ],
        ),
        (
            args(&["runtime", "validate", "--inventory", &inventory]),
            vec!["reading runtime inventory ("],
        ),
    ]
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|&a| a.to_owned()).collect()
}

fn strings(list: &[String]) -> Vec<&str> {
    list.iter().map(String::as_str).collect()
}

#[test]
fn each_covered_command_shows_its_phases_on_a_terminal_and_clears_them() {
    for (args, phases) in covered() {
        let run = on_terminal(command(&strings(&args)));
        assert!(run.status.success(), "{args:?}: {}", run.stderr);
        for phase in &phases {
            assert!(
                run.stderr.contains(phase),
                "{args:?}: no {phase:?} on the terminal: {:?}",
                run.stderr
            );
        }
        // Whatever was drawn last is cleared: the terminal keeps only the output.
        let last = phases.last().unwrap();
        let after = &run.stderr[run.stderr.rfind(last).unwrap()..];
        assert!(
            after.contains(CLEAR_LINE),
            "{args:?}: the last phase is not cleared: {:?}",
            run.stderr
        );
    }
}

#[test]
fn standard_input_shows_the_bytes_received() {
    let mut command = command(&["placement", "validate", "-"]);
    command.stdin(std::fs::File::open(example("placement.json")).unwrap());
    let run = on_terminal(command);
    assert!(run.status.success(), "{}", run.stderr);
    for phase in [
        "receiving placement manifest on standard input",
        "reading placement manifest (",
    ] {
        assert!(run.stderr.contains(phase), "no {phase:?}: {:?}", run.stderr);
    }
}

#[test]
fn a_rejection_is_printed_after_the_progress_line_is_cleared() {
    let run = on_terminal(command(&[
        "placement",
        "validate",
        &example("runtime-inventory.json"),
    ]));
    assert_eq!(run.status.code(), Some(1), "{}", run.stderr);
    let error = run.stderr.find("error[fields_mismatch]").unwrap();
    let before = &run.stderr[..error];
    assert!(
        before.contains("reading placement manifest ("),
        "{:?}",
        run.stderr
    );
    assert!(
        before.ends_with(CLEAR_LINE),
        "the error does not start on a cleared line: {:?}",
        run.stderr
    );
}

#[test]
fn no_progress_when_standard_error_is_a_pipe() {
    for (args, _) in covered() {
        let run = piped(command(&strings(&args)));
        assert!(run.status.success(), "{args:?}: {}", run.stderr);
        assert_eq!(run.stderr, "", "{args:?}");
    }
}

#[test]
fn no_progress_with_format_json_even_on_a_terminal() {
    for (mut args, _) in covered() {
        args.extend(["--format".to_owned(), "json".to_owned()]);
        let run = on_terminal(command(&strings(&args)));
        assert!(run.status.success(), "{args:?}: {}", run.stderr);
        assert_eq!(run.stderr, "", "{args:?}");
        let text = String::from_utf8(run.stdout).unwrap();
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(json["ok"], true, "{args:?}");
    }
}

#[test]
fn no_progress_with_quiet_on_a_terminal() {
    for (args, _) in covered() {
        // `--quiet` is global: before the command and, as `-q`, after its arguments.
        let mut before = vec!["--quiet".to_owned()];
        before.extend(args.iter().cloned());
        let mut after = args.clone();
        after.push("-q".to_owned());
        for args in [before, after] {
            let run = on_terminal(command(&strings(&args)));
            assert!(run.status.success(), "{args:?}: {}", run.stderr);
            assert_eq!(run.stderr, "", "{args:?}");
        }
    }
}

#[test]
fn no_progress_before_the_delay_or_on_a_dumb_terminal() {
    let placement = example("placement.json");
    let args = ["placement", "validate", placement.as_str()];
    let mut late = command(&args);
    late.env(DELAY, "600000");
    let mut dumb = command(&args);
    dumb.env("TERM", "dumb");
    for (case, command) in [("before the delay", late), ("TERM=dumb", dumb)] {
        let run = on_terminal(command);
        assert!(run.status.success(), "{case}: {}", run.stderr);
        assert_eq!(run.stderr, "", "{case}");
    }
}

#[test]
fn standard_output_is_the_same_with_and_without_progress() {
    for (args, phases) in covered() {
        let shown = on_terminal(command(&strings(&args)));
        assert!(shown.stderr.contains(phases[0]), "{args:?}: not shown");
        let none = piped(command(&strings(&args)));
        assert!(!shown.stdout.is_empty(), "{args:?}");
        assert_eq!(
            String::from_utf8_lossy(&shown.stdout),
            String::from_utf8_lossy(&none.stdout),
            "{args:?}"
        );
    }
}

#[test]
fn help_documents_quiet_and_the_progress() {
    // Words only: clap wraps the text to the width it finds.
    let help = cli_support::stdout(&cli_support::run(&["--help"]))
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        help.contains("-q, --quiet") && help.contains("standard error is a terminal"),
        "{help}"
    );
    assert!(help.contains(DELAY), "{help}");
}

/// A pseudo-terminal from the C library: a controller to read and the terminal the child
/// writes to.
#[allow(unsafe_code)]
mod pty {
    use std::ffi::CStr;
    use std::fs::{File, OpenOptions};
    use std::io::{self, Read, Write};
    use std::os::fd::{FromRawFd, OwnedFd};
    use std::os::unix::fs::OpenOptionsExt;

    /// Opens a pseudo-terminal of 24 rows and 100 columns: (controller, terminal). Both
    /// are close-on-exec, so no other test's child inherits them.
    pub fn open() -> (OwnedFd, OwnedFd) {
        // SAFETY: plain calls on a file descriptor this function owns; `name` outlives
        // `ptsname_r`, which writes a NUL-terminated path into it.
        unsafe {
            let fd = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
            assert!(fd >= 0, "posix_openpt: {}", io::Error::last_os_error());
            let controller = OwnedFd::from_raw_fd(fd);
            assert_eq!(libc::grantpt(fd), 0, "{}", io::Error::last_os_error());
            assert_eq!(libc::unlockpt(fd), 0, "{}", io::Error::last_os_error());
            let mut name = [0 as libc::c_char; 128];
            assert_eq!(libc::ptsname_r(fd, name.as_mut_ptr(), name.len()), 0);
            let path = CStr::from_ptr(name.as_ptr()).to_str().unwrap().to_owned();
            let size = libc::winsize {
                ws_row: 24,
                ws_col: 100,
                ws_xpixel: 0,
                ws_ypixel: 0,
            };
            let terminal = OpenOptions::new()
                .read(true)
                .write(true)
                .custom_flags(libc::O_NOCTTY)
                .open(&path)
                .unwrap();
            assert_eq!(
                libc::ioctl(fd, libc::TIOCSWINSZ, &raw const size),
                0,
                "{}",
                io::Error::last_os_error()
            );
            (controller, OwnedFd::from(terminal))
        }
    }

    /// What the test writes to the terminal after the child has exited: no output
    /// processing changes it (no newline, no tab), and no command prints it.
    pub const END: &[u8] = b"<<end of the child's output>>";

    /// Writes [`END`] to the terminal.
    pub fn write_end_mark(terminal: &OwnedFd) {
        let mut file = File::from(terminal.try_clone().unwrap());
        file.write_all(END).unwrap();
    }

    /// Everything written to the terminal before [`END`]; panics if the terminal hangs up
    /// before it (a test would otherwise judge a truncated output).
    pub fn read_to_end_mark(controller: OwnedFd) -> Vec<u8> {
        let mut file = File::from(controller);
        let mut bytes = Vec::new();
        let mut buffer = [0u8; 4096];
        while !bytes.ends_with(END) {
            match file.read(&mut buffer) {
                Ok(0) => panic!("the terminal closed before the end mark: {bytes:?}"),
                Ok(n) => bytes.extend_from_slice(&buffer[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => panic!("reading the terminal: {e}; read so far: {bytes:?}"),
            }
        }
        bytes.truncate(bytes.len() - END.len());
        bytes
    }
}
