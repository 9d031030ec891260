//! The one way rtlab writes a file a flag names (`--out`, `--csv`,
//! `--trace`, `--gantt`, `--plot`, `--jobs`, `--report`, `--histogram`,
//! `--kernel-trace=FILE`, ...), whatever the path turns out to be:
//!
//! - **a regular file, or a name not there yet**: written to `NAME.partial`
//!   beside it, then renamed over it when complete ([`OutputFile::commit`]).
//!   A reader never sees half a file, and a write that fails (a full disk,
//!   a refused row) leaves the old file as it was and no `.partial` behind.
//!   A file that was there keeps its permissions.
//! - **a symbolic link**: followed. Its target is written by the rules here
//!   (a regular file replaced beside its target, a device in place); the
//!   link stays a link. A link to nothing is refused.
//! - **a character device or a FIFO** (`/dev/null`, a pipe made with
//!   `mkfifo`): written in place, never replaced by a file. A device that
//!   refuses the bytes (`/dev/full`) fails the write.
//! - **a descriptor rtlab already has** (`/dev/stdout`, `/dev/stderr`,
//!   `/dev/fd/N`, `/proc/self/fd/N`): appended to through it, whatever it
//!   leads to.
//! - **anything else** (a directory, a block device, a socket): refused
//!   before anything is written.

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::FileTypeExt as _;
use std::path::{Path, PathBuf};

/// A file being written to the path a user named; see the module doc for
/// what each kind of path gets. Write to it, then [`commit`](Self::commit):
/// dropped without a commit, a regular file's new contents are thrown away
/// (its `.partial` removed) and the old file stays.
#[derive(Debug)]
pub struct OutputFile {
    file: File,
    pending: PendingOutput,
}

/// What puts an [`OutputFile`]'s bytes at their path once they are all
/// written: the rename of a regular file's `.partial` (nothing for a device
/// or pipe). For a file written by someone else (a job sink that owns the
/// [`File`] until the run ends): [`OutputFile::into_parts`], then
/// [`commit`](Self::commit) when the writer has finished. Dropped without a
/// commit, it removes the `.partial`.
#[derive(Debug)]
#[must_use = "dropped without a commit, the output is thrown away"]
pub struct PendingOutput {
    /// `(partial, destination)` for a regular file.
    rename: Option<(PathBuf, PathBuf)>,
}

impl PendingOutput {
    /// Renames the `.partial` over its destination (a device or pipe has
    /// its bytes already). Call it once the file's writer has flushed.
    pub fn commit(mut self) -> io::Result<()> {
        if let Some((partial, destination)) = self.rename.take() {
            if let Err(e) = fs::rename(&partial, &destination) {
                let _ = fs::remove_file(&partial);
                return Err(e);
            }
        }
        Ok(())
    }
}

impl Drop for PendingOutput {
    fn drop(&mut self) {
        if let Some((partial, _)) = self.rename.take() {
            let _ = fs::remove_file(partial);
        }
    }
}

/// Where the bytes for `path` go, decided before anything is opened.
#[derive(Debug, PartialEq, Eq)]
enum Target {
    /// A regular file (there or not) at this path, the links resolved.
    Regular(PathBuf),
    /// A character device or FIFO: opened and written in place.
    InPlace,
    /// A descriptor the process has: opened through it, appended to.
    Open,
}

/// The refusal of a path that is `what` (the caller's message names the
/// path and the flag).
fn refused(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("it is {what} (rtlab writes regular files, character devices and pipes)"),
    )
}

/// What `path` is, following links (each link's target taken relative to
/// the link's folder), and so how it is written. A descriptor rtlab already
/// has (`/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`) is written in place
/// whatever it is: replacing the file behind it would take it from under
/// the descriptor.
fn target(path: &Path) -> io::Result<Target> {
    let already_open = ["/dev/fd/", "/proc/self/fd/", "/dev/std"]
        .iter()
        .any(|p| path.to_string_lossy().starts_with(p));
    if already_open {
        return Ok(Target::Open);
    }
    let mut current = path.to_path_buf();
    // As the kernel does: a chain of more than 40 links is a loop.
    for _ in 0..=40 {
        let meta = match fs::symlink_metadata(&current) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return if current == path {
                    Ok(Target::Regular(current))
                } else {
                    Err(io::Error::new(
                        io::ErrorKind::NotFound,
                        format!(
                            "it is a symbolic link to {}, which does not exist",
                            current.display()
                        ),
                    ))
                };
            }
            Err(e) => return Err(e),
        };
        let kind = meta.file_type();
        if kind.is_symlink() {
            let link = fs::read_link(&current)?;
            // `/proc/self/fd/N` and `/dev/stdout` lead to "pipe:[..]" or
            // "socket:[..]", no path: the kernel opens them through the link.
            if !link.is_absolute() && link.to_string_lossy().contains(":[") {
                return in_place_or_refused(&fs::metadata(path)?);
            }
            current = match current.parent() {
                Some(dir) if link.is_relative() => dir.join(link),
                _ => link,
            };
            continue;
        }
        if kind.is_file() {
            return Ok(Target::Regular(current));
        }
        return in_place_or_refused(&meta);
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        "too many levels of symbolic links",
    ))
}

fn in_place_or_refused(meta: &fs::Metadata) -> io::Result<Target> {
    let kind = meta.file_type();
    if kind.is_char_device() || kind.is_fifo() {
        Ok(Target::InPlace)
    } else if kind.is_file() {
        Err(refused("a link the kernel resolves to no path"))
    } else if kind.is_dir() {
        Err(refused("a directory"))
    } else if kind.is_block_device() {
        Err(refused("a block device"))
    } else {
        Err(refused("a socket"))
    }
}

/// `NAME.partial` beside `path`.
fn partial_of(path: &Path) -> PathBuf {
    let mut name: OsString = path.file_name().unwrap_or_default().to_os_string();
    name.push(".partial");
    path.with_file_name(name)
}

impl OutputFile {
    /// Opens the file `path` names for writing, by the rules of the module
    /// doc. Refuses a directory, a block device, a socket and a link to
    /// nothing before creating anything.
    pub fn create(path: impl AsRef<Path>) -> io::Result<OutputFile> {
        let path = path.as_ref();
        if path.as_os_str().is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "an empty path names no file",
            ));
        }
        match target(path)? {
            Target::InPlace => Ok(OutputFile {
                file: OpenOptions::new().write(true).open(path)?,
                pending: PendingOutput { rename: None },
            }),
            Target::Open => Ok(OutputFile {
                file: OpenOptions::new().append(true).open(path)?,
                pending: PendingOutput { rename: None },
            }),
            Target::Regular(destination) => {
                let partial = partial_of(&destination);
                let file = File::create(&partial)?;
                if let Ok(meta) = fs::metadata(&destination) {
                    // The replaced file's mode; a failure here is not worth
                    // refusing the output for.
                    let _ = file.set_permissions(meta.permissions());
                }
                Ok(OutputFile {
                    file,
                    pending: PendingOutput {
                        rename: Some((partial, destination)),
                    },
                })
            }
        }
    }

    /// Flushes what was written and puts it at its path: a regular file's
    /// `.partial` is renamed over it; a device or pipe already has it.
    pub fn commit(mut self) -> io::Result<()> {
        self.file.flush()?;
        self.pending.commit()
    }

    /// The file the bytes go to until the commit, for a regular file (its
    /// `.partial`); `None` for a device or pipe, written in place.
    pub fn partial_path(&self) -> Option<&Path> {
        self.pending
            .rename
            .as_ref()
            .map(|(partial, _)| partial.as_path())
    }

    /// The open file, to hand to a writer that keeps it, and what puts it
    /// at its path once that writer is done.
    pub fn into_parts(self) -> (File, PendingOutput) {
        (self.file, self.pending)
    }
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.file.write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// Writes `contents` to the file `path` names, whole or not at all, by the
/// rules of the module doc: [`OutputFile::create`], write, commit.
pub fn write_output(path: impl AsRef<Path>, contents: impl AsRef<[u8]>) -> io::Result<()> {
    let mut out = OutputFile::create(path)?;
    out.write_all(contents.as_ref())?;
    out.commit()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;
    use std::os::unix::fs::PermissionsExt as _;

    #[test]
    fn a_new_file_appears_whole_and_no_partial_stays() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        let mut out = OutputFile::create(&path).unwrap();
        out.write_all(b"{\"a\": 1}").unwrap();
        assert!(!path.exists(), "nothing at the path before the commit");
        assert!(dir.path().join("out.json.partial").exists());
        out.commit().unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "{\"a\": 1}");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_partial() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.csv");
        fs::write(&path, "old").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
        {
            let mut out = OutputFile::create(&path).unwrap();
            out.write_all(b"half").unwrap();
            // Dropped without a commit: an error on the way.
        }
        assert_eq!(fs::read_to_string(&path).unwrap(), "old");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
        write_output(&path, "new").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "new");
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640, "the replaced file's mode is kept");
    }

    #[test]
    fn a_file_handed_to_a_writer_appears_when_its_pending_part_commits() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("jobs.csv");
        let (file, pending) = OutputFile::create(&path).unwrap().into_parts();
        let mut writer = std::io::BufWriter::new(file);
        writer.write_all(b"task,job\n").unwrap();
        drop(writer);
        assert!(!path.exists());
        pending.commit().unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "task,job\n");
        let (_, pending) = OutputFile::create(&path).unwrap().into_parts();
        drop(pending);
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no partial left"
        );
        assert_eq!(fs::read_to_string(&path).unwrap(), "task,job\n");
    }

    #[test]
    fn a_link_is_followed_and_stays_a_link() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("sub")).unwrap();
        let target = dir.path().join("sub/real.txt");
        fs::write(&target, "old").unwrap();
        let link = dir.path().join("link");
        symlink("sub/real.txt", &link).unwrap();
        let chain = dir.path().join("chain");
        symlink("link", &chain).unwrap();
        write_output(&chain, "new").unwrap();
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert!(fs::symlink_metadata(&chain)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read_to_string(&target).unwrap(), "new");
        assert!(!dir.path().join("sub/real.txt.partial").exists());
    }

    #[test]
    fn a_link_to_nothing_a_loop_and_a_directory_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let dangling = dir.path().join("dangling");
        symlink("missing/file", &dangling).unwrap();
        let e = write_output(&dangling, "x").unwrap_err().to_string();
        assert!(
            e.starts_with("it is a symbolic link to")
                && e.ends_with("missing/file, which does not exist"),
            "{e}"
        );
        assert!(!dir.path().join("missing").exists());
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        symlink("b", &a).unwrap();
        symlink("a", &b).unwrap();
        let e = write_output(&a, "x").unwrap_err().to_string();
        assert!(e.contains("too many levels of symbolic links"), "{e}");
        let e = write_output(dir.path(), "x").unwrap_err().to_string();
        assert_eq!(
            e,
            "it is a directory (rtlab writes regular files, character devices and pipes)"
        );
        assert!(OutputFile::create("").is_err());
    }

    #[test]
    fn a_fifo_is_written_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || fs::read_to_string(fifo).unwrap())
        };
        write_output(&fifo, "through the pipe").unwrap();
        assert_eq!(reader.join().unwrap(), "through the pipe");
        assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
        assert!(!dir.path().join("fifo.partial").exists());
    }

    #[test]
    fn character_devices_are_written_in_place_and_never_replaced() {
        write_output("/dev/null", "gone").unwrap();
        let e = write_output("/dev/full", "no room").unwrap_err();
        assert_eq!(e.raw_os_error(), Some(28), "{e}");
        for device in ["/dev/null", "/dev/full"] {
            let kind = fs::symlink_metadata(device).unwrap().file_type();
            assert!(kind.is_char_device(), "{device}");
        }
        // A link to a device (as `/dev/stdout` is, through /proc).
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("null");
        symlink("/dev/null", &link).unwrap();
        write_output(&link, "gone").unwrap();
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
    }
}
