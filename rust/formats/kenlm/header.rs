//! The fixed start of a KenLM binary file (`lm/binary_format.{hh,cc}`): the sanity header (magic
//! and test values), the fixed-width parameters and the n-gram counts.
//!
//! ```text
//! offset  size  field
//!      0    56  magic "mmap lm http://kheafield.com/code format version 5\n" then NULs
//!     56    12  test floats 0.0, 1.0, -0.5 (f32)
//!     68    12  test word indices 1, u32::MAX, then 0 (u32)
//!     80     8  test integer 1 (u64)
//!     88     1  order N (u8), then 3 bytes of padding
//!     92     4  probing multiplier (f32, >= 1)
//!     96     4  model type (u32, 0..=5: see SearchKind)
//!    100     1  has vocabulary (bool: the words follow the search structures), then padding
//!    104     4  search version (u32: 0 for probing, 1 for the trie)
//!    108   8 N  n-gram counts per order (u64, unaligned)
//! ```
//! and the data start at the next multiple of 8. Every number is in the byte order of the
//! machine that wrote the file; the test values tell which, and fastppl reads little-endian files
//! only (those of x86-64 and ARM64).

use super::{format_err, read_u32, read_u64};
use crate::error::Result;
use crate::ngram::keys::MAX_ORDER;

/// What every KenLM binary file starts with, whatever its version (also the start of the
/// "did not finish building" marker): how files are recognized.
pub const MAGIC_PREFIX: &[u8] = b"mmap lm http://kheafield.com/code";

/// The magic up to the version number.
const MAGIC_BEFORE_VERSION: &[u8] = b"mmap lm http://kheafield.com/code format version";

/// The magic of version 5, the one read here.
const MAGIC_V5: &[u8] = b"mmap lm http://kheafield.com/code format version 5\n\0";

/// What `build_binary` writes first and replaces with the magic when it succeeds.
const MAGIC_INCOMPLETE: &[u8] = b"mmap lm http://kheafield.com/code incomplete\n";

/// The binary format version read here.
const VERSION: u64 = 5;

/// Length of the sanity header (magic padded to 56 bytes, then the test values).
const SANITY_BYTES: usize = 88;

/// Length of the fixed-width parameters that follow it.
const PARAMETER_BYTES: usize = 20;

/// The search structure a file holds (KenLM's `ModelType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchKind {
    /// Hash tables of word-sequence hashes (`build_binary probing`, types 0 and 1); `rest`:
    /// type 1 (`rest`), whose values carry rest costs too.
    Probing { rest: bool },
    /// A trie; `quantized` (`-q`, `-b`): values are bin numbers, `array_pointers` (`-a`): the
    /// high bits of the child pointers are in a separate array (types 2 to 5).
    Trie {
        quantized: bool,
        array_pointers: bool,
    },
}

/// The parameters and counts of a file.
#[derive(Debug, Clone)]
pub struct Header {
    /// Number of n-grams of each order, unigrams (with `<unk>`) first.
    pub counts: Vec<u64>,
    pub search: SearchKind,
    /// Where the vocabulary's lookup structure starts (the end of the header, 8-aligned).
    pub data_start: usize,
    /// `build_binary -p`: probing tables have `max(n + 1, multiplier * n)` buckets for n entries.
    pub probing_multiplier: f32,
}

/// The sanity header KenLM writes on a little-endian 64-bit machine.
fn reference_sanity() -> [u8; SANITY_BYTES] {
    let mut s = [0u8; SANITY_BYTES];
    s[..MAGIC_V5.len()].copy_from_slice(MAGIC_V5);
    s[56..60].copy_from_slice(&0.0f32.to_le_bytes());
    s[60..64].copy_from_slice(&1.0f32.to_le_bytes());
    s[64..68].copy_from_slice(&(-0.5f32).to_le_bytes());
    s[68..72].copy_from_slice(&1u32.to_le_bytes());
    s[72..76].copy_from_slice(&u32::MAX.to_le_bytes());
    s[80..88].copy_from_slice(&1u64.to_le_bytes());
    s
}

/// Why `bytes` (a file that does not start with the version 5 sanity header) cannot be read.
fn explain_bad_sanity(bytes: &[u8]) -> String {
    if !bytes.is_empty() && bytes.len() < SANITY_BYTES && reference_sanity().starts_with(bytes) {
        return format!(
            "truncated KenLM binary file: {} bytes, shorter than its {SANITY_BYTES}-byte header",
            bytes.len()
        );
    }
    if bytes.starts_with(MAGIC_INCOMPLETE) {
        return "this KenLM binary file did not finish building (build_binary failed or was \
                interrupted): rebuild it"
            .to_string();
    }
    let Some(rest) = bytes.strip_prefix(MAGIC_BEFORE_VERSION) else {
        return "not a KenLM binary file (it does not start with KenLM's magic \"mmap lm \
                http://kheafield.com/code format version\")"
            .to_string();
    };
    let digits: String = rest
        .iter()
        .skip_while(|&&b| b == b' ')
        .take_while(|b| b.is_ascii_digit())
        .map(|&b| char::from(b))
        .collect();
    match digits.parse::<u64>() {
        Ok(v) if v != VERSION => format!(
            "KenLM binary format version {v}, but fastppl reads version {VERSION} only: rebuild \
             the file with a current build_binary, or load the ARPA file"
        ),
        _ if bytes.len() < SANITY_BYTES => format!(
            "truncated KenLM binary file: {} bytes, shorter than its {SANITY_BYTES}-byte header",
            bytes.len()
        ),
        _ => "the KenLM header's test values (floats 0, 1, -0.5, integers 1) do not read back: \
              the file was written on a machine of another byte order or word size (fastppl \
              reads little-endian files, as written on x86-64 and ARM64), or its header is \
              corrupt"
            .to_string(),
    }
}

/// Parses the header of the file `bytes`, named `path` in errors.
pub fn parse_header(bytes: &[u8], path: &str) -> Result<Header> {
    if bytes.get(..SANITY_BYTES) != Some(&reference_sanity()[..]) {
        return Err(format_err(path, explain_bad_sanity(bytes)));
    }
    let fixed_end = SANITY_BYTES + PARAMETER_BYTES;
    let truncated = |what: &str| {
        format_err(
            path,
            format!(
                "truncated KenLM binary file: {} bytes, too short for its {what}",
                bytes.len()
            ),
        )
    };
    let fixed = bytes
        .get(SANITY_BYTES..fixed_end)
        .ok_or_else(|| truncated("parameters"))?;
    let order = usize::from(fixed[0]);
    let multiplier = f32::from_le_bytes([fixed[4], fixed[5], fixed[6], fixed[7]]);
    let model_type = read_u32(fixed, 8).unwrap_or(u32::MAX);
    let has_vocabulary = fixed[12];
    let search_version = read_u32(fixed, 16).unwrap_or(u32::MAX);
    if !(2..=MAX_ORDER).contains(&order) {
        return Err(format_err(
            path,
            format!("KenLM header: order {order}, expected 2 to {MAX_ORDER}"),
        ));
    }
    // KenLM refuses a multiplier below 1 (the NaN test too); only probing tables use it
    if multiplier.is_nan() || multiplier < 1.0 {
        return Err(format_err(
            path,
            format!("KenLM header: probing multiplier {multiplier}, expected at least 1"),
        ));
    }
    let search = search_kind(model_type, search_version, path)?;
    check_vocabulary_flag(has_vocabulary, path)?;
    let counts_end = fixed_end + 8 * order;
    let counts = (0..order)
        .map(|m| read_u64(bytes, fixed_end + 8 * m))
        .collect::<Option<Vec<u64>>>()
        .ok_or_else(|| truncated("n-gram counts"))?;
    check_counts(&counts, path)?;
    Ok(Header {
        counts,
        search,
        data_start: counts_end.div_ceil(8) * 8,
        probing_multiplier: multiplier,
    })
}

/// The search structure of KenLM's model type `model_type`, whose search version must be
/// `search_version`.
fn search_kind(model_type: u32, search_version: u32, path: &str) -> Result<SearchKind> {
    let (search, expected_version) = match model_type {
        0 | 1 => (
            SearchKind::Probing {
                rest: model_type == 1,
            },
            0,
        ),
        2..=5 => (
            SearchKind::Trie {
                quantized: model_type == 3 || model_type == 5,
                array_pointers: model_type >= 4,
            },
            1,
        ),
        t => {
            return Err(format_err(
                path,
                format!("KenLM header: unknown model type {t} (KenLM knows 0 to 5)"),
            ))
        }
    };
    if search_version != expected_version {
        return Err(format_err(
            path,
            format!(
                "KenLM header: search structure version {search_version}, expected \
                 {expected_version} for model type {model_type}"
            ),
        ));
    }
    Ok(search)
}

/// Checks the has-vocabulary flag: fastppl needs the words stored at the end of the file.
fn check_vocabulary_flag(has_vocabulary: u8, path: &str) -> Result<()> {
    match has_vocabulary {
        1 => Ok(()),
        0 => Err(format_err(
            path,
            "this KenLM binary file was built without its vocabulary's words \
             (build_binary -w none, or a very old build_binary): fastppl needs them; \
             rebuild it or load the ARPA file",
        )),
        b => Err(format_err(
            path,
            format!("KenLM header: has-vocabulary flag {b}, expected 0 or 1"),
        )),
    }
}

/// Checks the n-gram counts: `<unk>`, `<s>` and `</s>` at least, and ids and entry numbers
/// that fit in u32.
fn check_counts(counts: &[u64], path: &str) -> Result<()> {
    if counts[0] < 3 {
        return Err(format_err(
            path,
            format!(
                "KenLM header: {} unigrams, fewer than <unk>, <s> and </s>",
                counts[0]
            ),
        ));
    }
    if let Some(m) = counts.iter().position(|&c| c >= u64::from(u32::MAX)) {
        return Err(format_err(
            path,
            format!(
                "KenLM header: {} {}-grams, more than fastppl's tables hold (2^32 - 1)",
                counts[m],
                m + 1
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(order: u8, model_type: u32, version: u32, counts: &[u64]) -> Vec<u8> {
        let mut b = reference_sanity().to_vec();
        b.push(order);
        b.extend_from_slice(&[0; 3]);
        b.extend_from_slice(&1.5f32.to_le_bytes());
        b.extend_from_slice(&model_type.to_le_bytes());
        b.extend_from_slice(&[1, 0, 0, 0]);
        b.extend_from_slice(&version.to_le_bytes());
        for c in counts {
            b.extend_from_slice(&c.to_le_bytes());
        }
        b
    }

    fn message(bytes: &[u8]) -> String {
        parse_header(bytes, "f.bin").unwrap_err().to_string()
    }

    #[test]
    fn reads_the_parameters() {
        let h = parse_header(&header(3, 4, 1, &[10, 20, 30]), "f.bin").unwrap();
        assert_eq!(h.counts, vec![10, 20, 30]);
        assert_eq!(
            h.search,
            SearchKind::Trie {
                quantized: false,
                array_pointers: true
            }
        );
        // 88 + 20 + 24 = 132, aligned up
        assert_eq!(h.data_start, 136);
    }

    #[test]
    fn explains_what_is_wrong() {
        assert!(message(b"\\data\\\nngram 1=3\n").contains("not a KenLM binary file"));
        assert!(
            message(b"mmap lm http://kheafield.com/code incomplete\n\0\0")
                .contains("did not finish building")
        );
        let mut v4 = header(3, 2, 1, &[10, 20, 30]);
        v4[49] = b'4';
        assert!(message(&v4).contains("version 4"));
        let mut big_endian = header(3, 2, 1, &[10, 20, 30]);
        big_endian[60..64].copy_from_slice(&1.0f32.to_be_bytes());
        assert!(message(&big_endian).contains("byte order"));
        assert!(message(&header(3, 2, 1, &[10])).contains("truncated"));
        assert!(message(&header(3, 9, 1, &[10, 20, 30])).contains("unknown model type 9"));
        assert!(message(&header(3, 2, 0, &[10, 20, 30])).contains("version 0"));
        assert!(message(&header(1, 2, 1, &[10])).contains("order 1"));
        assert!(message(&header(2, 2, 1, &[2, 1])).contains("fewer than"));
        assert!(message(b"").contains("not a KenLM binary file"));
        for cut in [10, 60, 90, 120] {
            let h = header(3, 2, 1, &[10, 20, 30]);
            assert!(message(&h[..cut]).contains("truncated"), "cut at {cut}");
        }
    }
}
