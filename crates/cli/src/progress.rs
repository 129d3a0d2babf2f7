//! Progress on standard error for work that runs longer than about a second.
//!
//! A command gets one [`Progress`] from [`Progress::new`] and runs each long step of its
//! work as a *phase*: [`Progress::phase`] shows a spinner with the step's name and its
//! elapsed time, [`Progress::counted`] adds a counter, or a bar where the total is known
//! (bytes read, tensors planned). A phase is drawn only once the command has run for the
//! delay (1 s; [`DELAY_VARIABLE`] changes it), redrawn ten times a second from a thread of
//! its own, and its line is cleared when the phase ends, so what stays on the terminal is
//! the command's own output, unchanged. Nothing is ever written to standard output.
//!
//! Progress is off, and costs one branch per call, when `--quiet` is given, with
//! `--format json`, when standard error is not a terminal, or when `TERM` is unset or
//! `dumb`.
//!
//! A command must end every phase before it prints anything: the phases are closures
//! ([`Progress::phase`]`(message, || work)`), so a phase cannot outlive its work.
//!
//! ```ignore
//! let placement = progress.phase(format!("reading placement manifest ({size})"), || {
//!     Placement::from_json(&text, &options)
//! });
//! let plan = progress.counted("planning", None, Unit::Items("tensors"), |counter| {
//!     plan_with_progress(&source, &target, &limits, |done, total| {
//!         counter.set_total(total as u64);
//!         counter.set(done as u64);
//!     })
//! });
//! ```

use std::borrow::Cow;
use std::cell::Cell;
use std::io::IsTerminal;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::options::Format;

/// The environment variable that sets the delay before progress is drawn, in
/// milliseconds from the start of the command (default 1000; `0` draws every phase at
/// once, which the tests use). A value that is not a number is ignored.
pub(crate) const DELAY_VARIABLE: &str = "WEIGHT_MANIFEST_PROGRESS_DELAY_MS";

/// The delay when [`DELAY_VARIABLE`] is not set.
const DEFAULT_DELAY: Duration = Duration::from_secs(1);

/// How often a drawn phase is redrawn (its spinner turns and its elapsed time moves).
const TICK: Duration = Duration::from_millis(100);

/// Whether, and from when, a command's phases are drawn.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Progress {
    /// From this instant on a phase is drawn; `None`: progress is off.
    drawn_from: Option<Instant>,
}

/// What a [`Progress::counted`] phase counts.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Unit {
    /// Bytes, shown as KiB, MiB, GiB.
    Bytes,
    /// Things of this name (`"tensors"`), shown once their total is known.
    Items(&'static str),
}

/// The position and total of a [`Progress::counted`] phase. When progress is off it holds
/// nothing, and each call is one branch; when on, moving it on is lock-free (indicatif
/// redraws at most every few milliseconds).
pub(crate) struct Counter {
    bar: Option<ProgressBar>,
    /// What it counts (`None` for a spinner).
    unit: Option<Unit>,
    /// The total given so far (kept here: asking the bar takes its lock).
    total: Cell<Option<u64>>,
}

impl Progress {
    /// Progress for a command run now: off with `quiet`, with `--format json`, when
    /// standard error is not a terminal, or when `TERM` is unset or `dumb` (the module
    /// docs); else drawn after the delay of [`DELAY_VARIABLE`].
    pub(crate) fn new(quiet: bool, format: Format) -> Progress {
        let dumb = std::env::var_os("TERM").is_none_or(|term| term == "dumb");
        if quiet || format == Format::Json || dumb || !std::io::stderr().is_terminal() {
            return Progress::off();
        }
        let delay = std::env::var(DELAY_VARIABLE)
            .ok()
            .and_then(|ms| ms.trim().parse().ok())
            .map_or(DEFAULT_DELAY, Duration::from_millis);
        Progress {
            drawn_from: Some(Instant::now() + delay),
        }
    }

    /// Progress that never shows.
    pub(crate) fn off() -> Progress {
        Progress { drawn_from: None }
    }

    /// Runs `work` as a phase named `message`: a spinner with its elapsed time.
    pub(crate) fn phase<T>(
        &self,
        message: impl Into<Cow<'static, str>>,
        work: impl FnOnce() -> T,
    ) -> T {
        let phase = self.start(message.into(), None);
        let result = work();
        drop(phase);
        result
    }

    /// Runs `work`, which reads and validates a document of `bytes` bytes, as the phase
    /// `reading LABEL (SIZE)`: `reading placement manifest (40.55 MiB)`.
    pub(crate) fn reading<T>(&self, label: &str, bytes: usize, work: impl FnOnce() -> T) -> T {
        let size = indicatif::BinaryBytes(u64::try_from(bytes).unwrap_or(u64::MAX));
        self.phase(format!("reading {label} ({size})"), work)
    }

    /// Runs `work` as a phase named `message` that counts `unit`s: a bar when `total` is
    /// known (or set later with [`Counter::set_total`]), else a byte counter (items are
    /// not shown without their total). `work` moves it on through the [`Counter`] it is
    /// given.
    pub(crate) fn counted<T>(
        &self,
        message: impl Into<Cow<'static, str>>,
        total: Option<u64>,
        unit: Unit,
        work: impl FnOnce(&Counter) -> T,
    ) -> T {
        let phase = self.start(message.into(), Some((total, unit)));
        let result = work(&phase.counter);
        drop(phase);
        result
    }

    /// A phase, hidden until `drawn_from`; ended (and its line cleared) when dropped.
    fn start(&self, message: Cow<'static, str>, counts: Option<(Option<u64>, Unit)>) -> Phase {
        let Some(drawn_from) = self.drawn_from else {
            return Phase::off();
        };
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
        bar.set_style(style(counts));
        if let Some((Some(total), _)) = counts {
            bar.set_length(total);
        }
        bar.set_message(message);
        let wait = drawn_from.saturating_duration_since(Instant::now());
        if wait.is_zero() {
            // Drawn here, before the work starts, so that even a short phase shows.
            bar.set_draw_target(ProgressDrawTarget::stderr());
            bar.tick();
        }
        let (stop, stopped) = mpsc::channel::<()>();
        let drawing = bar.clone();
        let thread = std::thread::Builder::new()
            .name("progress".into())
            .spawn(move || {
                if !wait.is_zero() {
                    if stopped.recv_timeout(wait) != Err(RecvTimeoutError::Timeout) {
                        return;
                    }
                    drawing.set_draw_target(ProgressDrawTarget::stderr());
                }
                loop {
                    drawing.tick();
                    if stopped.recv_timeout(TICK) != Err(RecvTimeoutError::Timeout) {
                        return;
                    }
                }
            })
            // No thread, no redrawing: the phase still ends cleanly.
            .ok();
        Phase {
            counter: Counter {
                bar: Some(bar),
                unit: counts.map(|(_, unit)| unit),
                total: Cell::new(counts.and_then(|(total, _)| total)),
            },
            stop: Some(stop),
            thread,
        }
    }
}

/// The template of a phase: spinner, message, then the count or bar, then elapsed time.
fn style(counts: Option<(Option<u64>, Unit)>) -> ProgressStyle {
    let count = match counts {
        // A count of items means little without its total: shown once the total is known.
        None | Some((None, Unit::Items(_))) => String::new(),
        Some((None, Unit::Bytes)) => " {binary_bytes}".to_owned(),
        Some((Some(_), Unit::Bytes)) => {
            " [{bar:30}] {binary_bytes}/{binary_total_bytes}".to_owned()
        }
        Some((Some(_), Unit::Items(name))) => {
            format!(" [{{bar:30}}] {{human_pos}}/{{human_len}} {name}")
        }
    };
    ProgressStyle::with_template(&format!("{{spinner}} {{msg}}{count} ({{elapsed}})"))
        .unwrap_or_else(|e| unreachable!("the progress templates are valid: {e}"))
        .progress_chars("=> ")
}

/// A running phase: its bar, and the thread that draws it.
struct Phase {
    counter: Counter,
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Phase {
    fn off() -> Phase {
        Phase {
            counter: Counter {
                bar: None,
                unit: None,
                total: Cell::new(None),
            },
            stop: None,
            thread: None,
        }
    }
}

impl Drop for Phase {
    /// Stops the drawing thread, then clears the phase's line (if it was ever drawn).
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        if let Some(bar) = &self.counter.bar {
            bar.finish_and_clear();
        }
    }
}

impl Counter {
    /// Sets the position (bytes or items done).
    pub(crate) fn set(&self, position: u64) {
        if let Some(bar) = &self.bar {
            bar.set_position(position);
        }
    }

    /// Moves the position on by `delta`.
    pub(crate) fn add(&self, delta: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(delta);
        }
    }

    /// Sets the total, once it is known; a counter then becomes a bar.
    pub(crate) fn set_total(&self, total: u64) {
        let (Some(bar), Some(unit)) = (&self.bar, self.unit) else {
            return;
        };
        let known = self.total.replace(Some(total));
        if known.is_none() {
            bar.set_style(style(Some((Some(total), unit))));
        }
        if known != Some(total) {
            bar.set_length(total);
        }
    }

    /// Renames the phase (a later step of the same work).
    pub(crate) fn set_message(&self, message: impl Into<Cow<'static, str>>) {
        if let Some(bar) = &self.bar {
            bar.set_message(message);
        }
    }
}
