//! Writing outputs: files are written to a temporary sibling and renamed, so a failure
//! never leaves a half-written file.

use std::fs;
use std::io::{self, Write};
use std::path::Path;

/// Writes `bytes` to `path` atomically (temporary file in the same folder, then rename).
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidInput, "output path has no file name")
    })?;
    let temporary = dir.join(format!(
        ".{}.tmp-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| {
        let mut file = fs::File::create(&temporary)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&temporary, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    result
}

/// Writes `bytes` to `path`, or to standard output when there is none.
pub(crate) fn emit(path: Option<&Path>, bytes: &[u8]) -> io::Result<()> {
    if let Some(path) = path {
        write_atomic(path, bytes)
    } else {
        let mut stdout = io::stdout().lock();
        stdout.write_all(bytes)?;
        stdout.flush()
    }
}

/// Leaves `value` to the operating system instead of freeing it: the command is about to
/// exit, and freeing a frontier-scale manifest allocation by allocation (a million
/// fragments are several million allocations) costs time the OS spends in one unmap.
pub(crate) fn leave_to_exit<T>(value: T) {
    std::mem::forget(value);
}
