//! Streaming (de)compression of model files, all in pure Rust (no system library needed):
//! gzip (`flate2`/miniz_oxide, level 6), xz (`lzma-rust2`, preset 1 in 1 MiB blocks on all cores:
//! the pure-Rust encoder is slow at higher presets), bzip2 (`bzip2`/libbz2-rs-sys, level 6).
//!
//! Reading picks the codec from the file's first bytes (so a misnamed file still opens), writing
//! from the file name's extension (`.gz`, `.xz`, `.bz2`; anything else is plain text, except the
//! extension of a compression fastppl does not write, `.zst`, `.lz4`, `.7z`..., which is
//! refused). A file in a compression fastppl does not read (zstd, lz4...: known by its magic
//! number) is refused as such, not parsed as text. Concatenated members/streams are read as
//! one file, as `zcat`, `xzcat` and `bzcat` do.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::Path;

use crate::error::{Error, Result};
use crate::util::atomic::AtomicFile;
use crate::util::direct_write::DirectWriter;

/// A compression format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    /// No compression.
    Plain,
    /// gzip (`.gz`).
    Gzip,
    /// xz (`.xz`).
    Xz,
    /// bzip2 (`.bz2`).
    Bzip2,
}

/// What the error for a compression fastppl does not write lists.
const WRITTEN: &str = ".gz, .xz or .bz2";

/// Extensions (lowercase) of compressions fastppl does not write: a file named so is refused
/// rather than written as plain text under a name that says it is compressed.
const UNWRITTEN_EXTENSIONS: &[&str] = &[
    "zst", "zstd", "lz4", "lzma", "lz", "lzo", "z", "7z", "zip", "br", "sz",
];

/// Compressions fastppl does not read, by the magic number their files start with: the name and
/// the command that decompresses one. (lzip's includes its version byte, 1: a text may start
/// with the word "LZIP".)
const UNREAD_MAGIC: &[(&[u8], &str, &str)] = &[
    (&[0x28, 0xb5, 0x2f, 0xfd], "zstd", "zstd -d"),
    (&[0x04, 0x22, 0x4d, 0x18], "lz4", "lz4 -d"),
    (b"LZIP\x01", "lzip", "lzip -d"),
    (&[0x1f, 0x9d], "compress (.Z)", "uncompress"),
    (&[b'7', b'z', 0xbc, 0xaf, 0x27, 0x1c], "7-Zip", "7z x"),
    (b"PK\x03\x04", "zip", "unzip"),
];

impl Codec {
    /// The codec named by a path's extension (case-insensitive): gzip, xz or bzip2 for `.gz`,
    /// `.xz`, `.bz2`, plain text for any other name, and [`Error::InvalidArgument`] naming the
    /// path for the extension of a compression fastppl does not write (`.zst`, `.lz4`,
    /// `.7z`...: see `UNWRITTEN_EXTENSIONS`).
    pub fn from_extension(path: &Path) -> Result<Codec> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        Ok(match ext.as_deref() {
            Some("gz" | "gzip") => Codec::Gzip,
            Some("xz") => Codec::Xz,
            Some("bz2" | "bzip2") => Codec::Bzip2,
            Some(other) if UNWRITTEN_EXTENSIONS.contains(&other) => {
                return Err(Error::invalid(format!(
                    "{}: fastppl cannot write .{} compression: name the output {WRITTEN} to \
                     compress it, or without a compression extension for plain text",
                    path.display(),
                    path.extension().unwrap_or_default().to_string_lossy()
                )))
            }
            _ => Codec::Plain,
        })
    }

    /// The codec whose magic number starts `head` (its first 10 bytes or more, where the file
    /// has them). The signatures are strong enough that no plausible text is taken for a
    /// compressed file (text files are told so too, in `fastppl.text`): gzip's with its method
    /// byte (8, deflate: `1f 8b 08`), xz's six bytes, and bzip2's "BZh" and block size digit
    /// followed by the magic of its first block or, for an empty stream, of its end (a text may
    /// start with "BZh9").
    pub fn from_magic(head: &[u8]) -> Codec {
        const BZIP2_BLOCK: &[u8] = &[0x31, 0x41, 0x59, 0x26, 0x53, 0x59];
        const BZIP2_END: &[u8] = &[0x17, 0x72, 0x45, 0x38, 0x50, 0x90];
        if head.starts_with(&[0x1f, 0x8b, 0x08]) {
            Codec::Gzip
        } else if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0x00]) {
            Codec::Xz
        } else if head.len() >= 10
            && head.starts_with(b"BZh")
            && (b'1'..=b'9').contains(&head[3])
            && [BZIP2_BLOCK, BZIP2_END].contains(&&head[4..10])
        {
            Codec::Bzip2
        } else {
            Codec::Plain
        }
    }

    /// The name of the compression, `None` for plain text.
    pub fn name(self) -> Option<&'static str> {
        match self {
            Codec::Plain => None,
            Codec::Gzip => Some("gzip"),
            Codec::Xz => Some("xz"),
            Codec::Bzip2 => Some("bzip2"),
        }
    }
}

/// Whether `path`'s extension (case-insensitive) is that of a compression, one fastppl writes
/// (`.gz`, `.xz`, `.bz2`) or not (`.zst`, `.lz4`, `.7z`...: see `UNWRITTEN_EXTENSIONS`).
pub fn names_compression(path: &Path) -> bool {
    !matches!(Codec::from_extension(path), Ok(Codec::Plain))
}

/// The compression fastppl does not read (see `UNREAD_MAGIC`) of a file whose first bytes are
/// `head`, as its name and the command that decompresses it; `None` for any other file. Model
/// files are refused so here (`open_read`), and so are text files, read in Python
/// (`fastppl.text`).
pub fn unread_compression(head: &[u8]) -> Option<(&'static str, &'static str)> {
    UNREAD_MAGIC
        .iter()
        .find(|(magic, ..)| head.starts_with(magic))
        .map(|&(_, name, command)| (name, command))
}

/// Refuses a file (`head`: its first bytes) in a compression fastppl does not read
/// ([`unread_compression`]), rather than reading its bytes as text, with [`Error::BinaryFormat`]
/// naming the compression and the ones read.
fn refuse_unread(path: &Path, head: &[u8]) -> Result<()> {
    match unread_compression(head) {
        None => Ok(()),
        Some((name, command)) => Err(Error::BinaryFormat {
            path: path.display().to_string(),
            message: format!(
                "compressed with {name}, which fastppl does not read (it reads gzip, xz and \
                 bzip2 compressed files, and plain ones): decompress it first ({command})"
            ),
        }),
    }
}

/// Refuses a path that is not a regular file once symbolic links are followed: a directory (see
/// [`Error::is_a_directory`]), or with [`Error::InvalidArgument`] a FIFO, socket or device.
pub fn check_regular(path: &Path) -> Result<()> {
    let meta = std::fs::metadata(path).map_err(Error::io(path))?;
    if meta.is_file() {
        Ok(())
    } else if meta.is_dir() {
        Err(Error::is_a_directory(path))
    } else {
        Err(Error::invalid(format!(
            "{}: is not a regular file (a FIFO, socket or device); fastppl reads model files \
             from regular files only",
            path.display()
        )))
    }
}

/// Opens `path` for buffered reading, decompressing on the fly.
/// Only regular files are opened (a FIFO or a device could block or never end): anything else
/// is refused before it is opened; so is a file in a compression that is not read
/// (`refuse_unread`).
pub fn open_read(path: &Path) -> Result<Box<dyn BufRead + Send>> {
    const CAP: usize = 1 << 16;
    check_regular(path)?;
    let file = File::open(path).map_err(Error::io(path))?;
    let mut raw = BufReader::with_capacity(1 << 16, file);
    let head = raw.fill_buf().map_err(Error::io(path))?;
    refuse_unread(path, head)?;
    let codec = Codec::from_magic(head);
    Ok(match codec {
        Codec::Plain => Box::new(raw),
        Codec::Gzip => Box::new(BufReader::with_capacity(
            CAP,
            flate2::bufread::MultiGzDecoder::new(raw),
        )),
        Codec::Xz => Box::new(BufReader::with_capacity(
            CAP,
            lzma_rust2::XzReader::new(raw, true),
        )),
        Codec::Bzip2 => Box::new(BufReader::with_capacity(
            CAP,
            bzip2::bufread::MultiBzDecoder::new(raw),
        )),
    })
}

/// A file being written, compressed by its extension, atomically (see [`AtomicFile`]): call
/// [`Output::finish`] to write the compressed stream's trailer and replace the target; dropping
/// it unfinished leaves the target untouched and removes the temporary file.
pub struct Output {
    inner: Sink,
    path: String,
}

/// Bytes gathered before a write to the file (in whole blocks, past the page cache: see
/// [`DirectWriter`]).
const FILE_BUFFER: usize = 4 << 20;

type FileWriter = DirectWriter<AtomicFile>;

/// Bytes of an xz block, compressed on its own by one thread. A cancelled write waits for the
/// blocks being compressed: 8 MiB blocks (about a second each here) held Ctrl-C of `to_arpa` to
/// an `.xz` for 0.7-1.3 s, 1 MiB blocks for 0.1-0.6 s, at the same speed and 1 % more bytes
/// (preset 1's dictionary is 1 MiB).
const XZ_BLOCK: u64 = 1 << 20;

enum Sink {
    Plain(FileWriter),
    Gzip(flate2::write::GzEncoder<FileWriter>),
    Xz(Box<lzma_rust2::XzWriterMt<FileWriter>>),
    Bzip2(bzip2::write::BzEncoder<FileWriter>),
}

impl Output {
    /// Starts replacing `path`, compressing by its extension ([`Codec::from_extension`], whose
    /// error comes first).
    pub fn create(path: &Path) -> Result<Output> {
        let codec = Codec::from_extension(path)?;
        let file = AtomicFile::create(path)?;
        let buf = DirectWriter::new(file, FILE_BUFFER);
        let inner = match codec {
            Codec::Plain => Sink::Plain(buf),
            Codec::Gzip => Sink::Gzip(flate2::write::GzEncoder::new(
                buf,
                flate2::Compression::default(),
            )),
            Codec::Xz => {
                // preset 1 in independent blocks compressed in parallel (as `xz -T0`
                // does): the pure-Rust encoder is slow on one core
                let mut options = lzma_rust2::XzOptions::with_preset(1);
                options.set_block_size(std::num::NonZeroU64::new(XZ_BLOCK));
                let workers =
                    std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
                Sink::Xz(Box::new(
                    lzma_rust2::XzWriterMt::new(buf, options, workers.min(256) as u32)
                        .map_err(Error::io(path))?,
                ))
            }
            Codec::Bzip2 => Sink::Bzip2(bzip2::write::BzEncoder::new(
                buf,
                bzip2::Compression::default(),
            )),
        };
        Ok(Output {
            inner,
            path: path.display().to_string(),
        })
    }

    /// Gives the error [`Output::create`] would give for `path` (a compression not written, and
    /// those of [`AtomicFile::check`]: a directory, a device, a missing or read-only folder),
    /// and writes nothing: for a long computation whose result goes to `path`, to fail before
    /// it starts rather than once it is done.
    pub fn check(path: &Path) -> Result<()> {
        Codec::from_extension(path)?;
        AtomicFile::check(path)
    }

    /// Ends the compressed stream, flushes everything to disk and replaces the target.
    pub fn finish(self) -> Result<()> {
        let path = self.path;
        let wrap = Error::io(&path);
        let buf = match self.inner {
            Sink::Plain(b) => b,
            Sink::Gzip(e) => e.finish().map_err(wrap)?,
            Sink::Xz(e) => e.finish().map_err(wrap)?,
            Sink::Bzip2(e) => e.finish().map_err(wrap)?,
        };
        buf.into_inner().map_err(wrap)?.commit()
    }

    /// The path, for error messages.
    pub fn path(&self) -> &str {
        &self.path
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.inner {
            Sink::Plain(w) => w.write(buf),
            Sink::Gzip(w) => w.write(buf),
            Sink::Xz(w) => w.write(buf),
            Sink::Bzip2(w) => w.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match &mut self.inner {
            Sink::Plain(w) => w.write_all(buf),
            Sink::Gzip(w) => w.write_all(buf),
            Sink::Xz(w) => w.write_all(buf),
            Sink::Bzip2(w) => w.write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.inner {
            Sink::Plain(w) => w.flush(),
            Sink::Gzip(w) => w.flush(),
            Sink::Xz(w) => w.flush(),
            Sink::Bzip2(w) => w.flush(),
        }
    }
}

/// Reads all of `path` (decompressed), for tests and small files.
pub fn read_to_end(path: &Path) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    open_read(path)?
        .read_to_end(&mut out)
        .map_err(Error::io(path))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_every_codec() {
        let dir = std::env::temp_dir().join(format!("fastppl-compressed-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let text: Vec<u8> = (0..50_000u32)
            .flat_map(|i| format!("line {i}\n").into_bytes())
            .collect();
        for name in ["a.txt", "a.gz", "a.xz", "a.bz2"] {
            let path = dir.join(name);
            let mut out = Output::create(&path).unwrap();
            out.write_all(&text).unwrap();
            out.finish().unwrap();
            let raw = std::fs::read(&path).unwrap();
            assert_eq!(
                Codec::from_magic(&raw),
                Codec::from_extension(&path).unwrap(),
                "{name}"
            );
            assert_eq!(read_to_end(&path).unwrap(), text, "{name}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn magic_numbers_are_strong_enough_for_text() {
        assert_eq!(Codec::from_magic(b"\x1f\x8b\x08\x00"), Codec::Gzip);
        assert_eq!(Codec::from_magic(b"\x1f\x8b\x01\x00"), Codec::Plain);
        assert_eq!(Codec::from_magic(b"\xfd7zXZ\x00\x00"), Codec::Xz);
        assert_eq!(Codec::from_magic(b"BZh91AY&SY\x00"), Codec::Bzip2);
        let empty_stream = b"BZh9\x17\x72\x45\x38\x50\x90\x00\x00\x00\x00";
        assert_eq!(Codec::from_magic(empty_stream), Codec::Bzip2);
        // a text may start so: "BZh9" then anything but a block's (or the end's) magic
        for text in [
            &b"BZh9 is a header\n"[..],
            b"BZh91AY&S",
            b"BZh0\x31\x41\x59\x26\x53\x59",
        ] {
            assert_eq!(Codec::from_magic(text), Codec::Plain, "{text:?}");
        }
        assert_eq!(Codec::Plain.name(), None);
        assert_eq!(Codec::Bzip2.name(), Some("bzip2"));
    }

    #[test]
    fn a_compression_not_written_is_refused_before_anything_is_written() {
        let dir = std::env::temp_dir().join(format!("fastppl-unwritten-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for name in [
            "m.arpa.zst",
            "m.arpa.ZSTD",
            "m.lz4",
            "m.lzma",
            "m.arpa.Z",
            "m.7z",
            "m.zip",
            "m.br",
        ] {
            let path = dir.join(name);
            for err in [
                Output::check(&path).expect_err(name),
                Output::create(&path).err().expect(name),
            ] {
                let text = err.to_string();
                assert!(matches!(err, Error::InvalidArgument(_)), "{name}: {text}");
                assert!(text.starts_with(&path.display().to_string()), "{text}");
                assert!(text.contains(".gz, .xz or .bz2"), "{text}");
            }
        }
        // nothing was written, not even a temporary file
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        for name in [
            "m.arpa",
            "m.gz",
            "m.XZ",
            "m.bzip2",
            "m.txt",
            "zst",
            "m.zst.arpa",
        ] {
            Output::check(&dir.join(name)).expect(name);
        }
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_compression_not_read_is_named_not_parsed() {
        let dir = std::env::temp_dir().join(format!("fastppl-unread-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (head, name) in [
            (&[0x28, 0xb5, 0x2f, 0xfd, 0x24, 0x05][..], "zstd"),
            (&[0x04, 0x22, 0x4d, 0x18, 0x64, 0x40][..], "lz4"),
            (&b"PK\x03\x04\x14\x00"[..], "zip"),
            (&b"LZIP\x01\x0c\x00"[..], "lzip"),
        ] {
            let path = dir.join(format!("m.arpa.{name}"));
            std::fs::write(&path, head).unwrap();
            let err = open_read(&path).err().expect(name);
            let text = err.to_string();
            assert!(matches!(err, Error::BinaryFormat { .. }), "{text}");
            assert!(text.contains(&format!("compressed with {name}")), "{text}");
            assert!(text.contains("gzip, xz and bzip2"), "{text}");
            assert_eq!(unread_compression(head).map(|(n, _)| n), Some(name));
        }
        // a text that starts with the word is no lzip file
        let path = dir.join("lzip.txt");
        std::fs::write(&path, "LZIP is a compressor\n").unwrap();
        assert_eq!(read_to_end(&path).unwrap(), b"LZIP is a compressor\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn missing_file_is_an_io_error() {
        let err = open_read(Path::new("/nonexistent/fastppl/x.arpa"))
            .err()
            .unwrap();
        assert!(
            matches!(err, Error::Io { ref source, .. } if source.kind() == io::ErrorKind::NotFound)
        );
    }
}
