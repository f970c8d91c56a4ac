//! fastppl's own binary model format: written once, loaded by memory-mapping the file, so that
//! loading does no per-n-gram work (the probing tables are used in place, straight from the page
//! cache).
//!
//! Modules: `layout` (the byte layout, documented there, and the parsing of the header and
//! section table), `save`, `load`, `verify` (the checks beyond the header), `canonical` (the
//! table layout that depends on the n-grams alone: how distributed estimation builds a model,
//! and how two models are compared byte for byte).
//!
//! ## Loading
//! The file is mapped read-only; the slot tables become views into the mapping
//! ([`MappedSlice`](crate::util::mapped::MappedSlice)), and the small per-word arrays and the count arrays are copied. The
//! vocabulary's hash map is rebuilt (O(V)). Everything the code relies on is validated before a
//! view is made: magic, version, endianness, file length, section bounds, alignment and sizes,
//! element counts against V and against each other, UTF-8 and uniqueness of the words, and that
//! every slot table has at least one empty slot and at most `u32::MAX` slots (lookups stop at an
//! empty slot; slot numbers are `u32`). With `verify` (the default) the checksum is checked and
//! every occupied slot is checked too: its word is a vocabulary id, its prefix an occupied slot
//! of the order below, and the number of occupied slots the one the header states. Without
//! `verify` the body is trusted: a corrupted body then gives wrong numbers (or a clean error, or
//! a panic turned into an exception when writing it as ARPA, or, if corruption filled every
//! empty slot of a table, a lookup that never ends) but never undefined behavior, since every
//! access is bounds-checked.
//!
//! ## Safety
//! No `unsafe` block here: mapping the file (`FileBytes::map`, in [`crate::util::mapped`]) is
//! unsafe because the file could be changed by another process while mapped; [`save()`] writes a
//! temporary file and renames it over the target, so re-saving a model over the file it was
//! loaded from replaces the file rather than changing the mapped bytes. The views into the
//! mapping are `MappedSlice`s, whose one
//! `unsafe` block is explained in [`crate::util::mapped`].

mod canonical;
mod layout;
mod load;
mod save;
mod verify;

pub use canonical::{canonical, SortedOrder};
pub use layout::{ALIGN, MAGIC, VERSION};
pub use load::load;
pub use save::{check, save};

#[cfg(test)]
mod tests {
    use super::layout::{checksum, CHECKSUM_AT};
    use super::*;
    use crate::corpus::Corpus;
    use crate::error::{Error, Result};
    use crate::estimate::{fit, Pruning, Smoothing};
    use crate::model::scorer::Scorer;
    use crate::model::Model;
    use crate::ngram::keys::key_word;
    use crate::util::job::Job;
    use std::path::{Path, PathBuf};

    const TEXT: &str = "a b c a b\nb c d a\na a b c d e\nc d e f\nb c a d\n";

    fn fitted(order: usize, smoothing: Smoothing, bos_eos: bool) -> Model {
        let mut c = Corpus::new();
        c.push_whitespace_text(TEXT, crate::corpus::SentenceMode::Lines)
            .unwrap();
        c.finish();
        fit(
            &c,
            order,
            bos_eos,
            smoothing,
            &Pruning::none(),
            &Job::none(),
        )
        .unwrap()
    }

    /// A test's own scratch directory, removed with everything in it when the test ends.
    struct Scratch(PathBuf);

    impl std::ops::Deref for Scratch {
        type Target = Path;
        fn deref(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// A fresh scratch directory named after `test` (tests run in parallel in one process).
    fn dir(test: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!("fastppl-binary-{}-{test}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        Scratch(d)
    }

    fn scores(m: &Model) -> Vec<u64> {
        let mut out = Vec::new();
        for line in TEXT.lines().chain(["f e d c b a", "z a b q"]) {
            let ids: Vec<u32> = line.split(' ').map(|w| m.id(w)).collect();
            out.extend(
                m.score_sentence_full(&ids, true, true)
                    .iter()
                    .map(|(x, _)| x.to_bits()),
            );
        }
        out
    }

    fn assert_same(a: &Model, b: &Model) {
        assert_eq!(a.order, b.order);
        assert_eq!(a.bos_eos, b.bos_eos);
        assert_eq!(a.fallback, b.fallback);
        assert_eq!(a.normalized, b.normalized);
        assert_eq!(a.smoothing, b.smoothing);
        assert_eq!(a.discounts, b.discounts);
        assert_eq!(a.missing_weight.to_bits(), b.missing_weight.to_bits());
        assert_eq!(
            a.vocab.words().collect::<Vec<_>>(),
            b.vocab.words().collect::<Vec<_>>()
        );
        assert_eq!(a.unigram_counts, b.unigram_counts);
        assert_eq!(a.ngram_counts(), b.ngram_counts());
        for (x, y) in a.higher.iter().zip(&b.higher) {
            assert_eq!(x.counts, y.counts);
            assert_eq!(x.table.slot_bytes(), y.table.slot_bytes());
            assert!(y.table.is_mapped());
        }
        assert_eq!(scores(a), scores(b));
    }

    #[test]
    fn round_trips_every_estimator() {
        let d = dir("round-trips");
        let cases = [
            (
                3,
                Smoothing::ModifiedKneserNey {
                    discount_fallback: true,
                },
                true,
            ),
            (4, Smoothing::KneserNey { discount: 0.75 }, false),
            (2, Smoothing::Mle, true),
            (3, Smoothing::Additive { k: 0.5 }, false),
            (3, Smoothing::StupidBackoff { alpha: 0.4 }, true),
            (1, Smoothing::WittenBell, true),
        ];
        for (i, (order, s, bos_eos)) in cases.into_iter().enumerate() {
            let m = fitted(order, s, bos_eos);
            let path = d.join(format!("m{i}.fppl"));
            save(&m, &path, &Job::none()).unwrap();
            for verify in [true, false] {
                assert_same(&m, &load(&path, verify, true, &Job::none()).unwrap());
            }
            // a loaded model saves to the same bytes
            let again = d.join(format!("m{i}.again.fppl"));
            save(
                &load(&path, true, true, &Job::none()).unwrap(),
                &again,
                &Job::none(),
            )
            .unwrap();
            assert_eq!(
                std::fs::read(&path).unwrap(),
                std::fs::read(&again).unwrap()
            );
        }
    }

    #[test]
    fn a_compressed_name_is_refused_before_anything_is_written() {
        let d = dir("compressed-name");
        let m = fitted(2, Smoothing::Mle, true);
        for name in [
            "m.gz",
            "m.fppl.xz",
            "m.BZ2",
            "m.fppl.zst",
            "m.lz4",
            "m.7z",
            "m.Z",
        ] {
            let path = d.join(name);
            for err in [
                check(&path).expect_err(name),
                save(&m, &path, &Job::none()).expect_err(name),
            ] {
                let text = err.to_string();
                assert!(matches!(err, Error::InvalidArgument(_)), "{name}: {text}");
                assert!(
                    text.starts_with(&format!(
                        "{}: fastppl's binary models are not compressed",
                        path.display()
                    )),
                    "{text}"
                );
                assert!(text.contains("name it .fppl"), "{text}");
            }
        }
        // nothing was written, not even a temporary file
        assert_eq!(std::fs::read_dir(&*d).unwrap().count(), 0);
        for name in ["m.fppl", "m.bin", "m", "m.gz.fppl"] {
            check(&d.join(name)).expect(name);
        }
    }

    #[test]
    fn a_mapped_table_copies_itself_when_written() {
        let d = dir("copy-on-write");
        let m = fitted(2, Smoothing::Mle, true);
        let path = d.join("cow.fppl");
        save(&m, &path, &Job::none()).unwrap();
        let mut loaded = load(&path, true, true, &Job::none()).unwrap();
        let t = &mut loaded.higher[0].table;
        assert!(t.is_mapped());
        let key = crate::ngram::keys::pack(5, 5);
        if t.find(key).is_none() && t.has_room() {
            t.insert(key, crate::ngram::probing::Entry::default());
            assert!(!t.is_mapped());
            assert!(t.find(key).is_some());
        }
    }

    fn expect_error(bytes: &[u8], name: &str, verify: bool) -> String {
        let d = dir(&format!("error-{name}"));
        let path = d.join(name);
        std::fs::write(&path, bytes).unwrap();
        match load(&path, verify, true, &Job::none()) {
            Err(Error::BinaryFormat { message, .. }) => message,
            Err(other) => panic!("unexpected error {other}"),
            Ok(_) => panic!("loaded a bad file"),
        }
    }

    #[test]
    fn rejects_bad_files_without_panicking() {
        let d = dir("bad-files");
        let m = fitted(
            3,
            Smoothing::ModifiedKneserNey {
                discount_fallback: true,
            },
            true,
        );
        let path = d.join("good.fppl");
        save(&m, &path, &Job::none()).unwrap();
        let good = std::fs::read(&path).unwrap();
        assert!(expect_error(&[], "empty", true).contains("empty"));
        assert!(expect_error(&good[..good.len() - 1], "short", true).contains("truncated"));
        let mut bad = good.clone();
        bad[0] = b'X';
        assert!(expect_error(&bad, "magic", true).contains("magic"));
        let mut bad = good.clone();
        bad[8] = 2;
        assert!(expect_error(&bad, "version", true).contains("newer"));
        let mut bad = good.clone();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        assert!(expect_error(&bad, "sum", true).contains("checksum"));
        // every truncation and every single-byte flip: an error or (unverified body) a model
        for cut in 0..good.len() {
            assert!(load_bytes(&good[..cut], true).is_err());
        }
        for i in 0..good.len() {
            let mut bad = good.clone();
            bad[i] ^= 0x5a;
            assert!(
                load_bytes(&bad, true).is_err(),
                "flip at {i} was not detected"
            );
            if let Ok(model) = load_bytes(&bad, false) {
                let _ = scores(&model);
            }
        }
    }

    fn load_bytes(bytes: &[u8], verify: bool) -> Result<Model> {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let d = dir(&format!("bytes-{n}"));
        let path = d.join("model.fppl");
        std::fs::write(&path, bytes).unwrap();
        load(&path, verify, true, &Job::none())
    }

    #[test]
    fn checks_slots_when_verifying() {
        let d = dir("slots");
        let m = fitted(3, Smoothing::KneserNey { discount: 0.5 }, true);
        let path = d.join("slots.fppl");
        save(&m, &path, &Job::none()).unwrap();
        let good = std::fs::read(&path).unwrap();
        let loaded = load(&path, true, true, &Job::none()).unwrap();
        // point the key of the first occupied order-3 slot to a prefix beyond order 2's table
        let (_, key, _) = loaded.higher[1].table.iter().next().unwrap();
        let off = good
            .windows(8)
            .position(|w| w == key.to_le_bytes())
            .filter(|o| o % 8 == 0)
            .unwrap();
        let mut bad = good.clone();
        let bogus = crate::ngram::keys::pack(u32::MAX - 1, key_word(key));
        bad[off..off + 8].copy_from_slice(&bogus.to_le_bytes());
        // fix the checksum so that only the slot check can catch it
        let sum = checksum(&bad);
        bad[CHECKSUM_AT..CHECKSUM_AT + 8].copy_from_slice(&sum.to_le_bytes());
        let msg = expect_error(&bad, "prefix", true);
        assert!(msg.contains("prefix"), "{msg}");
        // unverified, it loads; lookups stay in bounds
        let model = load_bytes(&bad, false).unwrap();
        let _ = scores(&model);
    }

    #[test]
    fn a_directory_and_a_missing_file_are_errors() {
        let d = dir("directory");
        match load(&d, true, true, &Job::none()) {
            Err(Error::Io { source, .. }) => {
                assert_eq!(source.raw_os_error(), Some(libc::EISDIR));
            }
            _ => panic!("expected an is-a-directory error"),
        }
        match load(&d.join("missing"), true, true, &Job::none()) {
            Err(Error::Io { source, .. }) => {
                assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
            }
            _ => panic!("expected a not-found error"),
        }
    }
}
