//! The runner: starts a testee, feeds it every selected fixture, compares, and reports
//! one line per failure and a closing `N passed, N failed[, N skipped]` line.

use std::fmt::Write as _;
use std::io::{self, BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use serde_json::{json, Value as Json};

use super::compare::{compare, Verdict};
use super::fixture::{load_fixtures, Fixture};
use super::glob::glob_match;
use super::known_failures::{parse_known_failures, KnownFailure};

/// What to run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// The corpus root (`tests/conformance`).
    pub dir: PathBuf,
    /// The testee command, run through `sh -c`; `None` runs this executable's own
    /// `conformance testee`.
    pub testee: Option<String>,
    /// Only fixtures whose id matches this glob.
    pub filter: Option<String>,
    /// A known-failures list (`fixture-id: reason` per line).
    pub known_failures: Option<PathBuf>,
    /// How long to wait for one response before the testee counts as hung.
    pub timeout: Duration,
}

/// The counts of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Cases that matched.
    pub passed: usize,
    /// Cases that did not match, and known failures that now pass.
    pub failed: usize,
    /// Cases whose operation the testee does not know.
    pub skipped: usize,
    /// Cases that failed as a known-failures entry says (neither passed nor failed).
    pub known: usize,
}

impl Summary {
    /// The closing line.
    pub fn closing_line(&self) -> String {
        let mut line = format!("{} passed, {} failed", self.passed, self.failed);
        if self.skipped > 0 {
            let _ = write!(line, ", {} skipped", self.skipped);
        }
        line
    }
}

/// Runs the corpus against the testee, writing the report to `out`.
pub fn run(options: &RunOptions, out: &mut dyn Write) -> io::Result<Summary> {
    let known: Vec<KnownFailure> = match &options.known_failures {
        None => Vec::new(),
        Some(path) => parse_known_failures(&std::fs::read_to_string(path)?)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?,
    };
    let fixtures: Vec<Fixture> = load_fixtures(&options.dir)?
        .into_iter()
        .filter(|f| {
            options
                .filter
                .as_deref()
                .is_none_or(|g| glob_match(g, &f.id))
        })
        .collect();

    let mut command = if let Some(line) = &options.testee {
        let mut c = Command::new("sh");
        c.arg("-c").arg(line);
        c
    } else {
        let mut c = Command::new(std::env::current_exe()?);
        c.args(["conformance", "testee"]);
        c
    };
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()?;
    let mut stdin = child
        .stdin
        .take()
        .ok_or_else(|| io::Error::other("no testee stdin"))?;
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| io::Error::other("no testee stdout"))?;

    let requests: Vec<String> = fixtures
        .iter()
        .map(|f| json!({ "id": f.id, "op": f.fixture.op, "input": f.fixture.input }).to_string())
        .collect();
    let writer = thread::spawn(move || {
        for request in requests {
            if writeln!(stdin, "{request}").is_err() {
                break; // the testee died; the reader reports it
            }
        }
    });
    let (sender, responses) = mpsc::channel::<io::Result<String>>();
    thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if sender.send(line).is_err() {
                break;
            }
        }
    });

    let mut summary = Summary::default();
    let mut testee_gone: Option<String> = None;
    for fixture in &fixtures {
        let verdict = match &testee_gone {
            Some(reason) => Verdict::Fail(reason.clone()),
            None => match responses.recv_timeout(options.timeout) {
                Ok(Ok(line)) => match serde_json::from_str::<Json>(&line) {
                    Ok(response) => compare(fixture, &response),
                    Err(e) => Verdict::Fail(format!("malformed response line ({e}): {line}")),
                },
                Ok(Err(e)) => {
                    testee_gone = Some(format!("reading the testee failed: {e}"));
                    Verdict::Fail(format!("reading the testee failed: {e}"))
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    testee_gone = Some("testee hung".to_owned());
                    Verdict::Fail(format!("no response within {:?}", options.timeout))
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    testee_gone = Some("testee exited before answering".to_owned());
                    Verdict::Fail("testee exited before answering".to_owned())
                }
            },
        };
        let listed = known.iter().find(|k| k.id == fixture.id);
        match (verdict, listed) {
            (Verdict::Pass, None) => summary.passed += 1,
            (Verdict::Skipped, _) => summary.skipped += 1,
            (Verdict::Fail(reason), None) => {
                summary.failed += 1;
                writeln!(out, "FAIL {}: {reason}", fixture.id)?;
            }
            (Verdict::Fail(_), Some(k)) => {
                summary.known += 1;
                writeln!(out, "known failure {}: {}", k.id, k.reason)?;
            }
            (Verdict::Pass, Some(k)) => {
                summary.failed += 1;
                writeln!(
                    out,
                    "FAIL {}: listed as a known failure ({}) but passes; remove it from the list",
                    k.id, k.reason
                )?;
            }
        }
    }
    if testee_gone.is_some() {
        let _ = child.kill();
    }
    drop(responses);
    let _ = writer.join();
    let status = child.wait()?;
    if testee_gone.is_none() && !status.success() {
        summary.failed += 1;
        writeln!(out, "FAIL testee exited with {status} at end of input")?;
    }
    for k in &known {
        if !fixtures.iter().any(|f| f.id == k.id) {
            writeln!(
                out,
                "note: known failure {} names no selected fixture",
                k.id
            )?;
        }
    }
    if summary.known > 0 {
        writeln!(out, "{} known failures (listed above)", summary.known)?;
    }
    writeln!(out, "{}", summary.closing_line())?;
    Ok(summary)
}
