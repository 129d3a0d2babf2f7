//! The scratch folder of one test, shared by the workspace's test crates (the CLI's and the
//! adapter's include this file by path): removed with everything in it when dropped, when
//! the test ends and also when a failing assertion unwinds it.

// Each including crate uses its own part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A folder of one test under the system's temporary folder.
pub struct ScratchDir(PathBuf);

impl ScratchDir {
    /// Creates the empty folder `wm-TAG-PID-N`; `N` counts the folders of this process, so
    /// tests running at once never share one.
    pub fn new(tag: &str) -> Self {
        static CREATED: AtomicUsize = AtomicUsize::new(0);
        let n = CREATED.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("wm-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    /// Writes `text` to `name` in the folder and returns its path.
    pub fn write(&self, name: &str, text: impl AsRef<[u8]>) -> String {
        let path = self.0.join(name);
        std::fs::write(&path, text).unwrap();
        path.to_string_lossy().into_owned()
    }
}

impl std::ops::Deref for ScratchDir {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
