//! Writing large files past the page cache: [`DirectWriter`] gathers what is written into an
//! aligned buffer and hands it to the file in whole blocks opened for direct I/O (`O_DIRECT`, on
//! Linux), so that the kernel moves the bytes to the device from this buffer instead of copying
//! them into page-cache pages it must first allocate and clear.
//!
//! That copy is most of the kernel's cost of writing a multi-gigabyte ARPA file on a virtual
//! machine, where every fresh page of the cache is a fault in the host too: on the 2-core
//! machines of this project, `dd` writes 4.2 GB at 354 MB/s through the cache (all of it system
//! time) and at 1.8 GB/s direct. The bytes written are the same either way.
//!
//! Direct I/O is an optimisation, never a requirement: where the file system refuses it (older
//! tmpfs, some network and overlay file systems) at the start or at any write, or on other
//! systems, the writer goes on through the page cache.

use std::io::{self, Write};

/// Alignment of the buffer, of the file offsets and of the lengths written directly: the page
/// size, a multiple of every device's logical block size.
const ALIGN: usize = 4096;

/// One aligned block of the buffer.
#[derive(Clone, Copy, bytemuck::Zeroable, bytemuck::Pod)]
#[repr(C, align(4096))]
struct Block([u8; ALIGN]);

/// A buffered writer to a file that writes whole blocks with direct I/O where it can.
pub struct DirectWriter<F: Write + std::os::fd::AsRawFd> {
    file: F,
    blocks: Vec<Block>,
    /// Bytes of `blocks` filled.
    len: usize,
    /// Whether the file is open for direct I/O (off once anything unaligned was written).
    direct: bool,
}

impl<F: Write + std::os::fd::AsRawFd> DirectWriter<F> {
    /// Buffers `capacity` bytes (rounded up to whole blocks) for `file`, which must be positioned
    /// at its start (an aligned offset), and asks for direct I/O on it.
    pub fn new(file: F, capacity: usize) -> Self {
        let direct = set_direct(&file, true);
        DirectWriter {
            file,
            blocks: vec![Block([0; ALIGN]); capacity.div_ceil(ALIGN).max(1)],
            len: 0,
            direct,
        }
    }

    /// Whether writes still bypass the page cache.
    #[cfg(test)]
    fn is_direct(&self) -> bool {
        self.direct
    }

    fn buffer(&mut self) -> &mut [u8] {
        bytemuck::cast_slice_mut(&mut self.blocks)
    }

    /// Writes the filled part of the buffer: its whole blocks directly, and a partial last block
    /// (only at a flush) through the page cache, after which the file stays cached (its offset
    /// is no longer aligned). After an error the file is to be abandoned (as the atomic output
    /// that owns it is).
    fn write_buffer(&mut self) -> io::Result<()> {
        let len = self.len;
        let whole = if self.direct { len / ALIGN * ALIGN } else { 0 };
        let mut done = 0;
        while done < whole {
            let written = {
                let (file, blocks) = (&mut self.file, &self.blocks);
                file.write(&bytemuck::cast_slice(blocks)[done..whole])
            };
            match written {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // refused (some file systems take the flag but not the write, and a partial
                // write leaves an unaligned offset): the rest goes through the cache
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => break,
                Err(e) => return Err(e),
            }
        }
        if done < len {
            if self.direct {
                self.direct = false;
                set_direct(&self.file, false);
            }
            let (file, blocks) = (&mut self.file, &self.blocks);
            file.write_all(&bytemuck::cast_slice(blocks)[done..len])?;
        }
        self.len = 0;
        Ok(())
    }

    /// Writes what is buffered and returns the file.
    pub fn into_inner(mut self) -> io::Result<F> {
        self.flush()?;
        Ok(self.file)
    }
}

impl<F: Write + std::os::fd::AsRawFd> Write for DirectWriter<F> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let capacity = self.blocks.len() * ALIGN;
        if self.len == capacity {
            self.write_buffer()?;
        }
        let n = data.len().min(capacity - self.len);
        let start = self.len;
        self.buffer()[start..start + n].copy_from_slice(&data[..n]);
        self.len += n;
        Ok(n)
    }

    /// Writes everything buffered; a partial block ends direct I/O for this file (see
    /// `DirectWriter::write_buffer`), so flush only at the end.
    fn flush(&mut self) -> io::Result<()> {
        self.write_buffer()?;
        self.file.flush()
    }
}

/// Turns direct I/O on or off for `file`; returns whether it is on.
#[cfg(target_os = "linux")]
fn set_direct(file: &impl std::os::fd::AsRawFd, on: bool) -> bool {
    let fd = file.as_raw_fd();
    // SAFETY: fcntl with F_GETFL/F_SETFL on a descriptor this process owns (borrowed from the
    // open file) reads and sets its status flags; it touches no memory of ours.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 {
            return false;
        }
        let flags = if on {
            flags | libc::O_DIRECT
        } else {
            flags & !libc::O_DIRECT
        };
        libc::fcntl(fd, libc::F_SETFL, flags) == 0 && on
    }
}

/// Direct I/O is used on Linux only.
#[cfg(not(target_os = "linux"))]
fn set_direct(_file: &impl std::os::fd::AsRawFd, _on: bool) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    fn path(name: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("fastppl-direct-{name}-{}", std::process::id()))
    }

    /// Pseudo-random bytes, so that a block written twice or out of place shows.
    fn bytes(n: usize) -> Vec<u8> {
        let mut x = 0x9e37_79b9_u32;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x as u8
            })
            .collect()
    }

    #[test]
    fn writes_the_same_bytes_for_any_sizes_of_writes_and_buffer() {
        let data = bytes(3 * ALIGN * 5 + 1234);
        for capacity in [1, ALIGN, 3 * ALIGN, 1 << 20] {
            for piece in [1, 7, ALIGN - 1, ALIGN, 5 * ALIGN + 3, data.len()] {
                let p = path("sizes");
                let mut w = DirectWriter::new(std::fs::File::create(&p).unwrap(), capacity);
                for chunk in data.chunks(piece) {
                    w.write_all(chunk).unwrap();
                }
                drop(w.into_inner().unwrap());
                assert_eq!(
                    std::fs::read(&p).unwrap(),
                    data,
                    "capacity {capacity}, writes of {piece}"
                );
                std::fs::remove_file(&p).unwrap();
            }
        }
    }

    #[test]
    fn a_flush_midway_keeps_every_byte_in_place() {
        let data = bytes(10 * ALIGN + 99);
        let p = path("flush");
        let mut w = DirectWriter::new(std::fs::File::create(&p).unwrap(), 2 * ALIGN);
        w.write_all(&data[..ALIGN + 5]).unwrap();
        w.flush().unwrap();
        // after an unaligned flush the file is written through the cache
        assert!(!w.is_direct());
        w.write_all(&data[ALIGN + 5..]).unwrap();
        drop(w.into_inner().unwrap());
        assert_eq!(std::fs::read(&p).unwrap(), data);
        std::fs::remove_file(&p).unwrap();
    }

    /// A file on a file system that takes the `O_DIRECT` flag but refuses direct writes at an
    /// unaligned offset (as every one does), and either every direct write (`short`: false) or
    /// none but writes only 1000 bytes of each (`short`: true). The flag is read from a real
    /// file's descriptor; the bytes land in `data`.
    struct PickyFile {
        flags_of: std::fs::File,
        data: Vec<u8>,
        short: bool,
    }

    impl Write for PickyFile {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            // SAFETY: F_GETFL on a descriptor this test owns reads its flags only.
            let flags = unsafe { libc::fcntl(self.flags_of.as_raw_fd(), libc::F_GETFL) };
            let n = if flags & libc::O_DIRECT == 0 {
                bytes.len()
            } else if self.short && self.data.len() % ALIGN == 0 {
                bytes.len().min(1000)
            } else {
                return Err(io::Error::from_raw_os_error(libc::EINVAL));
            };
            self.data.extend_from_slice(&bytes[..n]);
            Ok(n)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl AsRawFd for PickyFile {
        fn as_raw_fd(&self) -> std::os::fd::RawFd {
            self.flags_of.as_raw_fd()
        }
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn refused_and_partial_direct_writes_go_on_through_the_cache() {
        let data = bytes(7 * ALIGN + 5);
        for short in [false, true] {
            let p = path(&format!("picky-{short}"));
            let file = PickyFile {
                flags_of: std::fs::File::create(&p).unwrap(),
                data: Vec::new(),
                short,
            };
            let mut w = DirectWriter::new(file, 2 * ALIGN);
            // where the temporary directory's file system takes the flag (ext4, xfs, recent
            // tmpfs), the first whole blocks are refused or cut short, and the writer turns
            // direct I/O off
            let direct_at_first = w.is_direct();
            w.write_all(&data).unwrap();
            assert!(!w.is_direct(), "direct at first: {direct_at_first}");
            assert_eq!(w.into_inner().unwrap().data, data, "short: {short}");
            std::fs::remove_file(&p).unwrap();
        }
    }
}
