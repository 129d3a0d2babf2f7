//! Reading a command's input documents: `-` is standard input; a large regular file is
//! mapped read-only instead of copied.
//!
//! Why map: on the frontier-scale workloads (BENCHMARKS.md) copying the file into fresh
//! heap memory was the largest single cost after parsing. The file is usually in the page
//! cache already, and the copy doubles the memory that must be faulted in and zeroed
//! (722 MB of 1.3 GB peak for a 1M-fragment runtime inventory). A mapping shares the page
//! cache's pages instead.
//!
//! The price, as for every tool that maps its input (ripgrep, git): a file truncated by
//! another process *while* the command reads it can end the process with SIGBUS. Nothing
//! is written in that case (outputs are renamed into place only when complete). Read
//! through standard input (`weight-manifest ... - < FILE`) to rule it out.
//!
//! `max_document_bytes` bounds what is read into memory: a mapping costs nothing until it
//! is read, and the library rejects an oversized document from its length before reading
//! it; what is copied (standard input, or a file that cannot be mapped) stops one byte
//! past the limit, which the library then rejects as over it.
//!
//! Copying standard input, or a large file that cannot be mapped, is a progress phase
//! (`receiving LABEL on standard input`, `copying LABEL`) that counts the bytes read; a
//! mapping takes no time until the document is parsed.

use std::fs::File;
use std::io::{self, Read};
use std::ops::Deref;

use crate::progress::{Counter, Progress, Unit};

/// Files below this size are read into memory: mapping costs more than a small copy.
const MAP_THRESHOLD: u64 = 1 << 20;

/// The bytes of one input document.
pub(crate) enum Input {
    /// Read into memory (standard input, small files, or files that cannot be mapped).
    Read(Vec<u8>),
    /// A read-only mapping of a large regular file.
    Mapped(memmap2::Mmap),
}

impl Deref for Input {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Input::Read(bytes) => bytes,
            Input::Mapped(map) => map,
        }
    }
}

impl AsRef<[u8]> for Input {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

/// Reads `path`, or standard input for `-`, copying at most `max_bytes + 1` bytes (module
/// docs), with a copy's progress under `label` (`placement manifest`); errors name the path.
pub(crate) fn read_input(
    path: &str,
    max_bytes: u64,
    progress: &Progress,
    label: &str,
) -> Result<Input, String> {
    read(path, max_bytes, progress, label).map_err(|e| format!("cannot read {path}: {e}"))
}

fn read(path: &str, max_bytes: u64, progress: &Progress, label: &str) -> io::Result<Input> {
    let bound = max_bytes.saturating_add(1);
    if path == "-" {
        let message = format!("receiving {label} on standard input");
        return progress.counted(message, None, Unit::Bytes, |counter| {
            read_bounded(io::stdin().lock(), bound, 0, counter)
        });
    }
    let file = File::open(path)?;
    let metadata = file.metadata()?;
    if metadata.is_file() && metadata.len() >= MAP_THRESHOLD {
        if let Some(map) = map(&file) {
            return Ok(Input::Mapped(map));
        }
    }
    // A small file is read in no time; a large one here is one that could not be mapped.
    let small = metadata.is_file() && metadata.len() < MAP_THRESHOLD;
    let progress = if small { Progress::off() } else { *progress };
    let total = metadata.is_file().then(|| metadata.len().min(bound));
    progress.counted(format!("copying {label}"), total, Unit::Bytes, |counter| {
        read_bounded(file, bound, metadata.len(), counter)
    })
}

/// Reads at most `bound` bytes of `source`, reserving for `expected` of them and counting
/// them on `counter`.
fn read_bounded(
    source: impl Read,
    bound: u64,
    expected: u64,
    counter: &Counter,
) -> io::Result<Input> {
    let reserve = usize::try_from(expected.min(bound)).unwrap_or(0);
    let mut buffer = Vec::with_capacity(reserve);
    Counted { source, counter }
        .take(bound)
        .read_to_end(&mut buffer)?;
    Ok(Input::Read(buffer))
}

/// A reader that counts what it reads on a progress [`Counter`].
struct Counted<'c, R> {
    source: R,
    counter: &'c Counter,
}

impl<R: Read> Read for Counted<'_, R> {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        let n = self.source.read(buffer)?;
        self.counter.add(n as u64);
        Ok(n)
    }
}

/// The whole file at `path`, mapped read-only (read into memory only when it cannot be
/// mapped, an empty file for one): for checkpoint data, which is hashed in place.
pub(crate) fn map_file(path: &std::path::Path) -> io::Result<Input> {
    let mut file = File::open(path)?;
    if let Some(map) = map(&file) {
        return Ok(Input::Mapped(map));
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(Input::Read(bytes))
}

/// Maps `file` read-only; `None` when the system refuses (the caller then reads it).
#[allow(unsafe_code)]
fn map(file: &File) -> Option<memmap2::Mmap> {
    // SAFETY: the mapping is private to this process and read-only; Rust code sees it as
    // `&[u8]` for as long as the `Input` lives. The one hazard is another process
    // truncating or rewriting the file meanwhile (module docs): truncation raises SIGBUS
    // rather than reading freed memory, and a rewrite can only change bytes that the strict
    // parser then validates like any other input.
    let map = unsafe { memmap2::Mmap::map(file) }.ok()?;
    // One sequential pass: ask the kernel to read ahead.
    let _ = map.advise(memmap2::Advice::Sequential);
    Some(map)
}

#[cfg(test)]
mod tests {
    use super::{Input, Progress, MAP_THRESHOLD};
    use std::io::Write;

    fn read_input(path: &str, max_bytes: u64) -> Result<Input, String> {
        super::read_input(path, max_bytes, &Progress::off(), "test document")
    }

    /// A folder of one test, removed with its files when dropped (also on failure).
    struct ScratchDir(std::path::PathBuf);

    impl ScratchDir {
        fn new(test: &str) -> Self {
            let dir = std::env::temp_dir().join(format!("wm-input-{test}-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            Self(dir)
        }

        /// Writes `bytes` to a file of the folder named after their length.
        fn file(&self, bytes: &[u8]) -> std::path::PathBuf {
            let path = self.0.join(format!("{}.json", bytes.len()));
            std::fs::File::create(&path)
                .unwrap()
                .write_all(bytes)
                .unwrap();
            path
        }
    }

    impl Drop for ScratchDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn small_files_are_read_and_large_files_mapped_with_the_same_bytes() {
        let dir = ScratchDir::new("sizes");
        for size in [
            0,
            17,
            MAP_THRESHOLD - 1,
            MAP_THRESHOLD,
            MAP_THRESHOLD + 4097,
        ] {
            let bytes: Vec<u8> = (0..size).map(|i| u8::try_from(i % 251).unwrap()).collect();
            let path = dir.file(&bytes);
            let input = read_input(path.to_str().unwrap(), u64::MAX).unwrap();
            assert_eq!(&*input, &bytes[..], "size {size}");
            let mapped = matches!(input, Input::Mapped(_));
            assert_eq!(mapped, size >= MAP_THRESHOLD, "size {size}");
            std::fs::remove_file(path).unwrap();
        }
    }

    #[test]
    fn copies_stop_one_byte_past_the_limit_and_mappings_keep_their_length() {
        let dir = ScratchDir::new("limits");
        let small: Vec<u8> = vec![b' '; 100];
        let path = dir.file(&small);
        let input = read_input(path.to_str().unwrap(), 10).unwrap();
        assert_eq!(input.len(), 11);
        assert_eq!(read_input(path.to_str().unwrap(), 100).unwrap().len(), 100);
        std::fs::remove_file(path).unwrap();
        let large = vec![b' '; usize::try_from(MAP_THRESHOLD).unwrap() + 1];
        let path = dir.file(&large);
        // Mapped whole: the library rejects it from its length without reading it.
        let input = read_input(path.to_str().unwrap(), 10).unwrap();
        assert!(matches!(input, Input::Mapped(_)));
        assert_eq!(input.len(), large.len());
        std::fs::remove_file(path).unwrap();
    }

    #[test]
    fn errors_name_the_path() {
        let error = read_input("/nonexistent/wm-input.json", u64::MAX)
            .err()
            .unwrap();
        assert!(
            error.starts_with("cannot read /nonexistent/wm-input.json: "),
            "{error}"
        );
    }

    #[test]
    fn a_directory_is_an_error_not_a_mapping() {
        let dir = std::env::temp_dir();
        assert!(read_input(dir.to_str().unwrap(), u64::MAX).is_err());
    }
}
