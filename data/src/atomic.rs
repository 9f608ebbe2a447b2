//! Whole files that appear atomically: written under a temporary name beside the target,
//! synced, then renamed over it, so a reader sees the old file or the new one, never half
//! of one, and a killed process leaves at most a temporary file.
//!
//! Temporary names are `.NAME.HOST-PID.XXXXXX.tmp` (random `XXXXXX`): hidden, unique per
//! writer, ending in [`TMP_SUFFIX`], and naming the host and process that write them, so that
//! [`remove_tmp_files`] (run by whoever owns the directory, such as a dataset writer holding
//! its lock) removes those a killed process left and spares those of live processes, on this
//! host or (on a shared filesystem, where an advisory lock may be local to each host) on
//! another one.
//!
//! Scratch directories ([`scratch_dir`]) carry the same owner in their names, so that
//! [`remove_abandoned_scratch_dirs`] can clear what a killed worker left in a shared
//! directory such as `/tmp` without touching a live worker's.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Write};
use std::path::Path;
use std::time::{Duration, SystemTime};

use tempfile::{NamedTempFile, TempDir};

/// The suffix of every temporary file.
pub const TMP_SUFFIX: &str = ".tmp";

/// Another host's temporary file is only taken for abandoned once it has not been modified
/// for this long: its process cannot be checked from here, and every writer here renames
/// or removes its file within seconds of its last write.
pub const FOREIGN_TMP_MAX_AGE: Duration = Duration::from_secs(24 * 3600);

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
        prefix.push(format!(".{}.", owner_tag()));
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
        .prefix(&format!(".write-probe.{}.", owner_tag()))
        .suffix(TMP_SUFFIX)
        .tempfile_in(dir)
        .map(drop)
}

/// Whether [`write_atomically`] could write the file `path`: its directory made and a file
/// written beside it. Checked before long work, which a bad path would otherwise waste.
pub fn check_file_writable(path: &Path) -> io::Result<()> {
    if path.is_dir() {
        return Err(io::Error::other("a directory is in the way"));
    }
    // create_dir_all only says "File exists" when a file stands where a folder must.
    if let Some(file) = path
        .ancestors()
        .skip(1)
        .find(|a| !a.as_os_str().is_empty() && a.exists())
        .filter(|a| !a.is_dir())
    {
        return Err(io::Error::other(format!(
            "{} is a file, not a directory",
            file.display()
        )));
    }
    // Dropped uncommitted: the directory is made and the probe file removed.
    AtomicFile::create(path).map(drop)
}

/// Removes the abandoned temporary files (names ending in [`TMP_SUFFIX`]) in `dir`, which
/// only its owner may call. A file is abandoned when its name says it was written on this
/// host by a process that is gone, or on another host and it has not been modified for
/// [`FOREIGN_TMP_MAX_AGE`]; a name without a host (an older build's) counts as this host's
/// dead process, as before. Directories are left alone.
pub fn remove_tmp_files(dir: &Path) -> io::Result<()> {
    remove_abandoned(
        dir,
        |_, metadata| !metadata.is_dir(),
        |path| std::fs::remove_file(path),
    )
}

/// A new directory in `parent` named `PREFIX.HOST-PID.XXXXXX.tmp`, removed with its contents
/// when dropped; one whose process was killed first is removed by
/// [`remove_abandoned_scratch_dirs`] with the same `prefix`.
pub fn scratch_dir(parent: &Path, prefix: &str) -> io::Result<TempDir> {
    tempfile::Builder::new()
        .prefix(&format!("{prefix}.{}.", owner_tag()))
        .suffix(TMP_SUFFIX)
        .tempdir_in(parent)
}

/// Removes the directories in `parent` that [`scratch_dir`] made with `prefix` for a process
/// that is gone (see [`remove_tmp_files`] for when another host's counts as gone). Anything
/// else stays, so this may run in a directory that others share, such as `/tmp`.
pub fn remove_abandoned_scratch_dirs(parent: &Path, prefix: &str) -> io::Result<()> {
    let start = format!("{prefix}.");
    remove_abandoned(
        parent,
        |name, metadata| metadata.is_dir() && name.starts_with(&start) && owner_of(name).is_some(),
        |path| std::fs::remove_dir_all(path),
    )
}

/// Removes with `remove` each entry of `dir` named `….tmp` that `is_candidate` accepts and
/// whose writer is gone ([`abandoned`]); one that vanished meanwhile is no error.
fn remove_abandoned(
    dir: &Path,
    is_candidate: impl Fn(&str, &std::fs::Metadata) -> bool,
    remove: impl Fn(&Path) -> io::Result<()>,
) -> io::Result<()> {
    let host = host_name();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(name) = name.to_str().filter(|n| n.ends_with(TMP_SUFFIX)) else {
            continue;
        };
        let metadata = entry.metadata()?;
        if !is_candidate(name, &metadata) || !abandoned(name, &host, &metadata) {
            continue;
        }
        match remove(&entry.path()) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
    }
    Ok(())
}

/// Whether the temporary file `name` (with `metadata`) was left by a writer that is gone.
fn abandoned(name: &str, this_host: &str, metadata: &std::fs::Metadata) -> bool {
    match owner_of(name) {
        None => true,
        Some((host, pid)) if host == this_host => !process_alive(pid),
        Some(_) => metadata
            .modified()
            .ok()
            .and_then(|t| SystemTime::now().duration_since(t).ok())
            .is_some_and(|age| age >= FOREIGN_TMP_MAX_AGE),
    }
}

/// `HOST-PID` of this process, as temporary names carry it.
fn owner_tag() -> String {
    format!("{}-{}", host_name(), std::process::id())
}

/// The host and pid a temporary name `.NAME.HOST-PID.XXXXXX.tmp` carries, if any.
fn owner_of(name: &str) -> Option<(&str, u32)> {
    let stem = name.strip_suffix(TMP_SUFFIX)?;
    let (rest, _random) = stem.rsplit_once('.')?;
    let (_, tag) = rest.rsplit_once('.')?;
    let (host, pid) = tag.rsplit_once('-')?;
    let pid = pid.parse().ok()?;
    (!host.is_empty()).then_some((host, pid))
}

/// This machine's host name as a file name part: dots (which separate the parts of a
/// temporary name) and anything but letters, digits and `-` become `_`.
fn host_name() -> String {
    let mut buffer = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname writes at most that much.
    let status = unsafe { libc::gethostname(buffer.as_mut_ptr().cast(), buffer.len()) };
    let end = buffer.iter().position(|&b| b == 0).unwrap_or(buffer.len());
    let raw = if status == 0 { &buffer[..end] } else { &[] };
    let name: String = String::from_utf8_lossy(raw)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.is_empty() {
        "localhost".to_string()
    } else {
        name
    }
}

/// Whether process `pid` exists on this host (a process of another user counts).
fn process_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 only checks whether the process exists; nothing is sent.
    let status = unsafe { libc::kill(pid, 0) };
    status == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
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

    /// The file name of `path`, after checking that it names this host and process.
    fn assert_owned_by_this_process(path: &Path) -> String {
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        assert_eq!(
            owner_of(&name),
            Some((host_name().as_str(), std::process::id()))
        );
        name
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

    #[test]
    fn temporary_names_carry_the_host_and_process() {
        let dir = tempfile::tempdir().unwrap();
        let file = AtomicFile::create(&dir.path().join("x.json")).unwrap();
        assert_owned_by_this_process(file.path());
        assert_eq!(owner_of(".a.b.my-host-7.AbC123.tmp"), Some(("my-host", 7)));
        assert_eq!(owner_of(".a.json.x1y2z3.tmp"), None);
        assert_eq!(owner_of("junk.tmp"), None);
        assert!(!host_name().contains('.'));
        assert!(process_alive(std::process::id()));
        assert!(!process_alive(0));
    }

    #[test]
    fn live_writers_and_other_hosts_keep_their_temporary_files() {
        let dir = tempfile::tempdir().unwrap();
        let host = host_name();
        // A pid above the kernel's maximum (4194304) belongs to no process.
        let dead = format!(".a.arrow.{host}-99999999.r1.tmp");
        let live = format!(".b.arrow.{host}-{}.r2.tmp", std::process::id());
        let other_host = format!(".c.arrow.{host}x-1.r3.tmp");
        for name in [&dead, &live, &other_host] {
            std::fs::write(dir.path().join(name), b"x").unwrap();
        }
        remove_tmp_files(dir.path()).unwrap();
        assert_eq!(names(dir.path()), [live.clone(), other_host.clone()]);

        // Another host's file untouched for a day is abandoned.
        let old = SystemTime::now() - FOREIGN_TMP_MAX_AGE - Duration::from_secs(60);
        let file = File::options()
            .write(true)
            .open(dir.path().join(&other_host))
            .unwrap();
        file.set_modified(old).unwrap();
        remove_tmp_files(dir.path()).unwrap();
        assert_eq!(names(dir.path()), [live]);
    }

    #[test]
    fn scratch_dirs_of_gone_processes_are_removed_and_nothing_else() {
        let parent = tempfile::tempdir().unwrap();
        let live = scratch_dir(parent.path(), "nz-shard").unwrap();
        std::fs::write(live.path().join("part.arrow"), b"x").unwrap();
        let host = host_name();
        let dead = format!("nz-shard.{host}-99999999.r1.tmp");
        std::fs::create_dir(parent.path().join(&dead)).unwrap();
        std::fs::write(parent.path().join(&dead).join("part.arrow"), b"x").unwrap();
        // Another prefix, a name without an owner and a file are someone else's.
        let others = [
            format!("other.{host}-99999999.r2.tmp"),
            "nz-shard.no-owner.tmp".to_string(),
        ];
        for name in &others {
            std::fs::create_dir(parent.path().join(name)).unwrap();
        }
        let file = format!("nz-shard.{host}-99999999.r3.tmp");
        std::fs::write(parent.path().join(&file), b"x").unwrap();
        let live_name = assert_owned_by_this_process(live.path());

        remove_abandoned_scratch_dirs(parent.path(), "nz-shard").unwrap();
        let mut kept = vec![file, others[0].clone(), others[1].clone()];
        kept.sort();
        let mut with_live = [kept.clone(), vec![live_name]].concat();
        with_live.sort();
        assert_eq!(names(parent.path()), with_live);
        drop(live);
        assert_eq!(names(parent.path()), kept);
    }
}
