//! Whole files that appear atomically: written under a temporary name beside the target,
//! synced, then renamed over it, so a reader sees the old file or the new one, never half
//! of one, and a killed process leaves at most a temporary file.
//!
//! Temporary names are `.NAME.XXXXXX.tmp` (random `XXXXXX`): hidden, unique per writer, and
//! ending in [`TMP_SUFFIX`], so that [`remove_tmp_files`] (run by whoever owns the directory,
//! such as a dataset writer holding its lock) finds those a killed process left.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Write};
use std::path::Path;

use tempfile::NamedTempFile;

/// The suffix of every temporary file.
pub const TMP_SUFFIX: &str = ".tmp";

/// A file being written for `target`; nothing is at `target` until [`AtomicFile::commit`].
/// Dropped without a commit, it removes its temporary file.
#[derive(Debug)]
pub struct AtomicFile {
    tmp: NamedTempFile,
    target: std::path::PathBuf,
}

impl AtomicFile {
    /// Starts a file for `target`, creating its directory.
    pub fn create(target: &Path) -> io::Result<AtomicFile> {
        AtomicFile::with_suffix(target, OsString::from(TMP_SUFFIX))
    }

    /// Like [`AtomicFile::create`], with the temporary name ending in the target's
    /// extension too (`.NAME.XXXXXX.tmp.png`), for writers that pick the format by it. A
    /// killed writer's file is not removed by [`remove_tmp_files`].
    pub fn create_keeping_extension(target: &Path) -> io::Result<AtomicFile> {
        let mut suffix = OsString::from(TMP_SUFFIX);
        if let Some(extension) = target.extension() {
            suffix.push(".");
            suffix.push(extension);
        }
        AtomicFile::with_suffix(target, suffix)
    }

    fn with_suffix(target: &Path, suffix: OsString) -> io::Result<AtomicFile> {
        let name = target.file_name().ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, "the path has no file name")
        })?;
        let dir = target
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        let mut prefix = OsString::from(".");
        prefix.push(name);
        prefix.push(".");
        let tmp = tempfile::Builder::new()
            .prefix(&prefix)
            .suffix(&suffix)
            .tempfile_in(dir)?;
        Ok(AtomicFile {
            tmp,
            target: target.to_path_buf(),
        })
    }

    /// The temporary file, for writers that take a path (they may recreate the file).
    pub fn path(&self) -> &Path {
        self.tmp.path()
    }

    /// The temporary file, to write to.
    pub fn file(&mut self) -> &mut File {
        self.tmp.as_file_mut()
    }

    /// Syncs the file, renames it to the target (replacing any file there) and syncs the
    /// directory, on a best-effort basis (not every filesystem can sync a directory).
    pub fn commit(self) -> io::Result<()> {
        // Through the path: a writer given the path may have replaced the file.
        File::open(self.tmp.path())?.sync_all()?;
        self.tmp.persist(&self.target).map_err(|e| e.error)?;
        if let Some(dir) = self.target.parent().filter(|d| !d.as_os_str().is_empty()) {
            if let Ok(dir) = File::open(dir) {
                let _ = dir.sync_all();
            }
        }
        Ok(())
    }
}

/// Writes `bytes` to `path` atomically (see the module), creating its directory.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = AtomicFile::create(path)?;
    file.file().write_all(bytes)?;
    file.commit()
}

/// Whether a file can be made in `dir` (created if needed): permissions and read-only
/// mounts are only found out by trying. The probe is removed.
pub fn check_writable(dir: &Path) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    tempfile::Builder::new()
        .prefix(".write-probe.")
        .suffix(TMP_SUFFIX)
        .tempfile_in(dir)
        .map(drop)
}

/// Removes the temporary files (names ending in [`TMP_SUFFIX`]) in `dir`, which only its
/// owner may call: a writer that holds the directory has no other writer's file to spare.
/// Directories are left alone.
pub fn remove_tmp_files(dir: &Path) -> io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let is_tmp = entry
            .file_name()
            .to_str()
            .is_some_and(|name| name.ends_with(TMP_SUFFIX));
        if !is_tmp || entry.file_type()?.is_dir() {
            continue;
        }
        match std::fs::remove_file(entry.path()) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn files_appear_whole_and_leave_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new/sub/out.json");
        write_atomically(&path, b"one").unwrap();
        write_atomically(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        assert_eq!(names(&dir.path().join("new/sub")), ["out.json"]);

        // Not committed: the target is untouched and the temporary file goes.
        let mut file = AtomicFile::create(&path).unwrap();
        file.file().write_all(b"three").unwrap();
        let tmp = file.path().to_path_buf();
        let name = tmp.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.starts_with(".out.json.") && name.ends_with(".tmp"),
            "{name}"
        );
        drop(file);
        assert!(!tmp.exists());
        assert_eq!(std::fs::read(&path).unwrap(), b"two");

        // Written through its path by another writer, with the extension it expects.
        let plot = dir.path().join("loss.png");
        let file = AtomicFile::create_keeping_extension(&plot).unwrap();
        assert!(file.path().to_string_lossy().ends_with(".tmp.png"));
        std::fs::write(file.path(), b"png").unwrap();
        file.commit().unwrap();
        assert_eq!(std::fs::read(&plot).unwrap(), b"png");

        check_writable(&dir.path().join("probe")).unwrap();
        assert!(names(&dir.path().join("probe")).is_empty());
        assert!(AtomicFile::create(Path::new("/")).is_err());
    }

    #[test]
    fn only_temporary_files_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["a.arrow", "b.arrow.tmp", ".c.json.x1y2z3.tmp", "d.tmp.png"] {
            std::fs::write(dir.path().join(name), b"x").unwrap();
        }
        std::fs::create_dir(dir.path().join("e.tmp")).unwrap();
        remove_tmp_files(dir.path()).unwrap();
        assert_eq!(names(dir.path()), ["a.arrow", "d.tmp.png", "e.tmp"]);
    }
}
