//! Atomic file replacement: every output of fastppl is written to a temporary file beside its
//! target (same directory, so that the rename is atomic), synced, then renamed over the target.
//! Until [`AtomicFile::commit`] succeeds the target is untouched; a failure, a panic or an early
//! return drops the [`AtomicFile`], which removes the temporary. Renaming also gives the new file
//! a new inode, so a model that a process has memory-mapped is never written in place.

use std::fs::{File, OpenOptions};
use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, Result};

/// A file being written that replaces `target` only when committed.
///
/// ```
/// use std::io::Write;
/// use fastppl::util::atomic::AtomicFile;
/// let dir = std::env::temp_dir().join(format!("fastppl-atomic-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let target = dir.join("out.txt");
/// std::fs::write(&target, "old").unwrap();
/// let mut f = AtomicFile::create(&target).unwrap();
/// f.write_all(b"new").unwrap();
/// assert_eq!(std::fs::read(&target).unwrap(), b"old"); // untouched until committed
/// f.commit().unwrap();
/// assert_eq!(std::fs::read(&target).unwrap(), b"new");
/// std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub struct AtomicFile {
    file: File,
    tmp: PathBuf,
    target: PathBuf,
    committed: bool,
}

impl AtomicFile {
    /// Creates a fresh temporary file beside `target` (named `.<name>.<pid>-<n>.tmp`, unique to
    /// this process and call; created exclusively, never following an existing file).
    pub fn create(target: &Path) -> Result<AtomicFile> {
        static CALLS: AtomicU64 = AtomicU64::new(0);
        let name = target.file_name().ok_or_else(|| {
            Error::invalid(format!("{}: not a file name to write", target.display()))
        })?;
        match std::fs::metadata(target) {
            Ok(meta) if meta.is_dir() => return Err(Error::is_a_directory(target)),
            // a device, FIFO or socket (`/dev/stdout`, `/dev/null`): the rename would replace
            // it (as root, the device node itself) with a regular file
            Ok(meta) if !meta.is_file() => {
                return Err(Error::invalid(format!(
                    "{}: is not a regular file (a device, FIFO or socket); fastppl writes an \
                     output by renaming a finished file over it, which would replace it: write \
                     to a regular file (the command line's train copies one to '-' or a device)",
                    target.display()
                )))
            }
            _ => {}
        }
        loop {
            let call = CALLS.fetch_add(1, Ordering::Relaxed);
            let tmp = target.with_file_name(format!(
                ".{}.{}-{call}.tmp",
                name.to_string_lossy(),
                std::process::id()
            ));
            match OpenOptions::new().write(true).create_new(true).open(&tmp) {
                Ok(file) => {
                    return Ok(AtomicFile {
                        file,
                        tmp,
                        target: target.to_path_buf(),
                        committed: false,
                    })
                }
                // a stale temporary of an earlier process with the same id: take the next name
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(Error::io(target)(e)),
            }
        }
    }

    /// Gives the error [`AtomicFile::create`] would give for `target` (a directory, a device,
    /// a folder that does not exist or cannot be written...), by creating its temporary file
    /// and removing it at once: for a long computation whose result goes to `target`, to fail
    /// before it starts rather than once it is done.
    pub fn check(target: &Path) -> Result<()> {
        AtomicFile::create(target).map(drop)
    }

    /// The temporary file's path (removed on drop unless committed).
    pub fn temp_path(&self) -> &Path {
        &self.tmp
    }

    /// The file this one replaces when committed.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Syncs the data to disk and renames the temporary over the target (then syncs the
    /// directory so that the rename itself survives a crash).
    pub fn commit(mut self) -> Result<()> {
        let wrap = Error::io(&self.target);
        self.file.sync_all().map_err(wrap)?;
        std::fs::rename(&self.tmp, &self.target).map_err(wrap)?;
        self.committed = true;
        if let Some(dir) = self.target.parent() {
            let dir = if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            };
            // best effort: some file systems refuse to sync a directory
            if let Ok(d) = File::open(dir) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl std::os::fd::AsRawFd for AtomicFile {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.file.as_raw_fd()
    }
}

impl Seek for AtomicFile {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.file.seek(pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("fastppl-atomic-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn entries(d: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_device_is_refused_not_replaced() {
        let err = AtomicFile::create(Path::new("/dev/null"))
            .err()
            .expect("refused");
        assert!(err.to_string().contains("is not a regular file"), "{err}");
        assert!(!err.to_string().contains("  "), "{err}");
        assert!(!std::fs::metadata("/dev/null").unwrap().is_file());
    }

    #[test]
    fn check_gives_the_error_of_create_and_leaves_nothing() {
        let d = dir("check");
        let file = d.join("file");
        std::fs::write(&file, "old").unwrap();
        for target in [
            d.clone(),
            d.join("missing").join("m.arpa"),
            file.join("m.arpa"),
            PathBuf::from("/dev/null"),
        ] {
            let checked = AtomicFile::check(&target).expect_err("refused");
            let created = AtomicFile::create(&target).err().expect("refused");
            assert_eq!(checked.to_string(), created.to_string());
        }
        AtomicFile::check(&file).unwrap();
        AtomicFile::check(&d.join("new")).unwrap();
        assert_eq!(entries(&d), vec!["file".to_string()]);
        assert_eq!(std::fs::read(&file).unwrap(), b"old");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn dropped_uncommitted_keeps_the_old_file_and_removes_the_temporary() {
        let d = dir("drop");
        let target = d.join("m.arpa");
        std::fs::write(&target, "old").unwrap();
        {
            let mut f = AtomicFile::create(&target).unwrap();
            f.write_all(b"half").unwrap();
            assert_eq!(entries(&d).len(), 2);
        }
        assert_eq!(std::fs::read(&target).unwrap(), b"old");
        assert_eq!(entries(&d), vec!["m.arpa".to_string()]);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn commit_gives_a_new_inode_and_temporaries_are_unique() {
        use std::os::unix::fs::MetadataExt;
        let d = dir("commit");
        let target = d.join("m.bin");
        std::fs::write(&target, "old").unwrap();
        let before = std::fs::metadata(&target).unwrap().ino();
        let a = AtomicFile::create(&target).unwrap();
        let mut b = AtomicFile::create(&target).unwrap();
        assert_ne!(a.temp_path(), b.temp_path());
        drop(a);
        b.write_all(b"new").unwrap();
        b.commit().unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        assert_ne!(std::fs::metadata(&target).unwrap().ino(), before);
        assert_eq!(entries(&d), vec!["m.bin".to_string()]);
        std::fs::remove_dir_all(&d).unwrap();
    }
}
