//! Reading ARPA files by the rules of the [module documentation](super), on all cores.
//!
//! A thread of its own reads (and decompresses) the file in blocks of whole lines
//! ([`super::lines`]). The header and `\end\` are read line by line; the n-grams of a block are
//! parsed on all cores (fields, floats, word ids, and the lookups of each n-gram's context and
//! suffix in the orders below, which do not change while a section is read; each task looks them
//! up one order at a time for all its lines, prefetching the slots a few lines ahead, since the
//! tables are larger than the caches),
//! then added to the model one by one in file order, so that errors are those of a line-by-line
//! reading, at the same lines, and every n-gram lands in the slot a line-by-line reading gives
//! it. While a block's n-grams are added, the next block is parsed beside them (see
//! [`read_section`] for when). A missing suffix adds KenLM's blank entries to the orders below,
//! which can move their entries: from such a line to the end of its block, contexts and suffixes
//! are looked up again as each n-gram is added, and the next block is parsed only after.

use std::f64::consts::LN_10;
use std::io::{BufRead, Read};
use std::path::Path;
use std::sync::mpsc::sync_channel;

use rayon::prelude::*;

use crate::corpus::vocab::{Vocab, BOS, EOS, UNK};
use crate::error::{Error, Result};
use crate::formats::ln_from_log10;
use crate::model::{Fallback, Model, OrderTable};
use crate::ngram::keys::{pack, MAX_ORDER, NONE};
use crate::ngram::probing::{Entry, ProbingTable};
use crate::util::compressed::open_read;
use crate::util::job::Job;

use super::lines::{error_at, read_blocks, utf8, Block, Lines, BLOCKS_AHEAD, BLOCK_BYTES};
use super::word_index::WordIndex;
use super::UNKNOWN_MISSING_LOG10;

/// Most n-grams of one order allocated for before any is read: the header's counts are hints,
/// never trusted for more room than this (tables grow as n-grams arrive).
const INITIAL_ENTRIES: u64 = 1 << 16;

/// Shortest n-gram line ("p\tw\n"), bounding how many n-grams a file of a given size can hold.
const MIN_LINE_BYTES: u64 = 4;

/// Compression ratio assumed when bounding the n-grams a file can hold by its size (xz reaches
/// 8 on ARPA text; plain files are overestimated, which the header's counts cap).
const COMPRESSION_RATIO: u64 = 16;

/// Lines between the prefetch of an n-gram's slot and its insertion.
const PREFETCH_AHEAD: usize = 16;

/// Lines parsed by one task: below this, splitting costs more than it saves.
const LINES_PER_TASK: usize = 2048;

/// Lines between the prefetch of a line's words and the line's parsing.
const WORDS_AHEAD: usize = 16;

/// N-grams between the prefetch of a slot that a context's or a suffix's lookup reads and the
/// lookup ([`Below::find_all`]).
const LOOKUPS_AHEAD: usize = 16;

/// Reads an ARPA file (plain, .gz, .xz or .bz2, detected from its first bytes), reporting
/// n-grams read to `job` (which can cancel it).
pub fn read_arpa(path: &Path, job: &Job) -> Result<Model> {
    let reader = open_read(path)?;
    // room for at most as many n-grams as the (possibly compressed) bytes could hold, taking a
    // compression ratio of COMPRESSION_RATIO: an underestimate only costs tables growing as lines
    // arrive
    let bytes = std::fs::metadata(path).map_err(Error::io(path))?.len();
    let hint = bytes.saturating_mul(COMPRESSION_RATIO) / MIN_LINE_BYTES + 1;
    let name = path.display().to_string();
    read_arpa_hinted(reader, &name, hint, BLOCK_BYTES, job)
}

/// Reads an ARPA model from `reader`; `path` names it in error messages.
pub fn read_arpa_from(reader: impl BufRead + Send, path: &str) -> Result<Model> {
    read_arpa_hinted(reader, path, INITIAL_ENTRIES, BLOCK_BYTES, &Job::none())
}

/// [`read_arpa_from`], allocating at most `room` entries per order from the header's counts and
/// parsing the file in blocks of about `block_bytes`.
pub(super) fn read_arpa_hinted(
    reader: impl Read + Send,
    path: &str,
    room: u64,
    block_bytes: usize,
    job: &Job,
) -> Result<Model> {
    std::thread::scope(|s| {
        let (blocks, received) = sync_channel(BLOCKS_AHEAD);
        s.spawn(move || read_blocks(reader, path, block_bytes, &blocks));
        // (the receiver is dropped on return, which stops the reader thread)
        read_model(&mut Lines::new(received, path), room, job)
    })
}

/// Reads the whole file from `lines`.
fn read_model(lines: &mut Lines, room: u64, job: &Job) -> Result<Model> {
    read_data_line(lines)?;
    let announced = read_counts(lines)?;
    // (the header's counts are untrusted: for the progress bar only)
    let announced_total = announced.iter().fold(0u64, |t, &c| t.saturating_add(c));
    job.stage("reading ARPA", announced_total)?;
    let order = announced.len();
    if order == 0 {
        return Err(lines.fail("the \\data\\ header announces no n-gram count"));
    }
    if order > MAX_ORDER {
        return Err(lines.fail(format!("order {order} is above the maximum {MAX_ORDER}")));
    }
    let mut model = Model {
        order,
        bos_eos: true,
        vocab: Vocab::new(),
        unigram_logp: vec![f64::NAN; 3],
        unigram_weight: vec![0.0; 3],
        unigram_counts: Vec::new(),
        higher: Vec::with_capacity(order - 1),
        fallback: Fallback::Chain,
        missing_weight: 0.0,
        normalized: true,
        smoothing: "arpa".to_string(),
        discounts: Vec::new(),
    };
    // (the words of the unigrams, once they are read)
    let mut index = WordIndex::new(&model.vocab);
    for (m, &expected) in (1..=order).zip(&announced) {
        read_section_header(lines, m, order)?;
        if m >= 2 {
            model.higher.push(OrderTable {
                table: ProbingTable::with_entries(expected.min(room) as usize),
                counts: Vec::new(),
            });
        }
        read_section(lines, &mut model, &index, m, expected, job)?;
        if m == 1 {
            complete_unigrams(lines, &mut model)?;
            index = WordIndex::new(&model.vocab);
        }
    }
    read_end(lines, order)?;
    Ok(model)
}

fn is_blank(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_whitespace())
}

/// At most 60 characters of `s`, quoted, for messages.
fn quote(s: &str) -> String {
    match s.char_indices().nth(60) {
        Some((i, _)) => format!("{:?}...", &s[..i]),
        None => format!("{s:?}"),
    }
}

/// `\m-grams:` -> m.
fn section_order(s: &str) -> Option<usize> {
    s.strip_prefix('\\')?.strip_suffix("-grams:")?.parse().ok()
}

/// A log10 value from the file in natural log; -99 is log10 0.
fn parse_log10(field: &str) -> Option<f64> {
    // read as a float32, as KenLM stores ARPA values: the shortest digits that the writer prints
    // for a float32 then come back as that very float32 (read as a float64, a value halfway
    // between two float32s could round to the other one when written again)
    let v = field.parse::<f32>().ok()?;
    (!v.is_nan()).then(|| ln_from_log10(v))
}

/// Skips blank lines and `#` comments up to the `\data\` line.
fn read_data_line(lines: &mut Lines) -> Result<()> {
    loop {
        if !lines.advance()? {
            return Err(lines.fail("no \\data\\ line: the file is empty or holds only comments"));
        }
        let t = lines.text();
        if is_blank(t) || t.starts_with('#') {
            continue;
        }
        if t.trim_end() == "\\data\\" {
            return Ok(());
        }
        let hint = if lines.raw().starts_with(&[0x1f, 0x8b]) {
            " (this looks like gzip data inside a compressed file)"
        } else {
            ""
        };
        return Err(lines.fail(format!(
            "expected \\data\\ as the first line that is not blank or a # comment, got {}{hint}",
            quote(t)
        )));
    }
}

/// The `ngram m=count` lines of the header: the announced count of each order.
fn read_counts(lines: &mut Lines) -> Result<Vec<u64>> {
    let mut announced: Vec<u64> = Vec::new();
    loop {
        if !lines.advance()? {
            return Err(lines.fail("the file ends inside the \\data\\ header (truncated?)"));
        }
        let t = lines.text().trim();
        if t.is_empty() {
            return Ok(announced);
        }
        if t.starts_with('\\') {
            lines.hold();
            return Ok(announced);
        }
        let Some(rest) = t.strip_prefix("ngram") else {
            return Err(lines.fail(format!(
                "expected a count line \"ngram {}=<count>\" or a blank line, got {}",
                announced.len() + 1,
                quote(t)
            )));
        };
        let parsed = rest.split_once('=').and_then(|(m, c)| {
            Some((
                m.trim().parse::<usize>().ok()?,
                c.trim().parse::<u64>().ok()?,
            ))
        });
        match parsed {
            Some((m, c)) if m == announced.len() + 1 => announced.push(c),
            Some((m, _)) => {
                return Err(lines.fail(format!(
                    "count lines must be ngram 1=, ngram 2=, ... in order; expected ngram {}=, got \
                     ngram {m}=",
                    announced.len() + 1
                )))
            }
            None => {
                return Err(lines.fail(format!(
                    "bad count line {}: expected \"ngram {}=<count>\"",
                    quote(t),
                    announced.len() + 1
                )))
            }
        }
    }
}

/// The `\m-grams:` line (after blank lines) of the section of order `m` of `order`.
fn read_section_header(lines: &mut Lines, m: usize, order: usize) -> Result<()> {
    loop {
        if !lines.advance()? {
            return Err(lines.fail(format!(
                "the file ends before the \\{m}-grams: section (truncated?)"
            )));
        }
        if !is_blank(lines.text()) {
            break;
        }
    }
    let t = lines.text().trim_end();
    let message = match section_order(t) {
        Some(k) if k == m => return Ok(()),
        Some(k) => format!(
            "expected the \\{m}-grams: section, got \\{k}-grams:{}",
            if k > order {
                format!(" (the header announces {order} orders)")
            } else {
                String::new()
            }
        ),
        None if t == "\\end\\" => {
            format!("\\end\\ before the \\{m}-grams: section announced in the header")
        }
        None => format!(
            "expected the \\{m}-grams: section header, got {}{}",
            quote(t),
            if t.starts_with('\\') {
                " (unknown section)"
            } else {
                ""
            }
        ),
    };
    Err(lines.fail(message))
}

/// One line of a section, parsed on any thread.
enum Parsed {
    /// Not UTF-8 (the message says where).
    NotUtf8(String),
    /// A blank line or a `\` line: the end of the section.
    End,
    /// An n-gram line, or what is wrong with it.
    NGram(std::result::Result<Fields, String>),
}

/// What a parsed n-gram line holds, and where its context and suffix were found.
struct Fields {
    /// ln p.
    logp: f64,
    /// ln backoff weight (0 at the highest order).
    weight: f64,
    /// Order >= 2: the entry of the context (first m-1 words), `None` if missing.
    context: Option<u32>,
    /// Order >= 2: the id of the last word.
    word: u32,
    /// Whether the suffix (last m-1 words) is stored (orders >= 3; always for the others).
    suffix_known: bool,
}

/// The words of the previous line parsed by the same task: consecutive lines share words (lmplz
/// writes n-grams in suffix order, fastppl in context order), whose ids are kept rather than
/// looked up again.
struct Previous<'a> {
    /// Whether the fields below hold a line.
    valid: bool,
    words: Vec<&'a str>,
    ids: Vec<u32>,
}

impl Previous<'_> {
    /// No line yet, for n-grams of order `m`.
    fn new(m: usize) -> Self {
        Previous {
            valid: false,
            words: vec![""; m],
            ids: vec![0; m],
        }
    }
}

/// What parsing the lines of one section reads of the model: the order of the model, and the
/// tables of the orders below the section's (which adding the section's n-grams leaves alone,
/// so that a block can be parsed while the one before it is added).
struct Below<'a> {
    order: usize,
    vocab_len: usize,
    /// The tables of orders 2 to m-1.
    higher: &'a [OrderTable],
}

impl Below<'_> {
    /// For each n-gram `k` of `ids` (`stride` ids each), the entry of its words
    /// `offset..offset + len` (an n-gram of an order below m; `None` if not stored), as
    /// [`Model::find`] gives it. The lookups go one order at a time over all the n-grams, so that
    /// those of one order are independent and prefetched [`LOOKUPS_AHEAD`] n-grams ahead
    /// (looked up one n-gram after another, each waited for the miss of the order below).
    fn find_all(&self, ids: &[u32], stride: usize, offset: usize, len: usize) -> Vec<Option<u32>> {
        let word = |k: usize, j: usize| ids[k * stride + offset + j];
        let n = ids.len() / stride;
        let mut entry: Vec<u32> = (0..n)
            .map(|k| {
                let first = word(k, 0);
                if (first as usize) < self.vocab_len {
                    first
                } else {
                    NONE
                }
            })
            .collect();
        for j in 1..len {
            let table = &self.higher[j - 1].table;
            for k in 0..n {
                let ahead = k + LOOKUPS_AHEAD;
                if ahead < n && entry[ahead] != NONE {
                    table.prefetch(pack(entry[ahead], word(ahead, j)));
                }
                if entry[k] != NONE {
                    entry[k] = table.find(pack(entry[k], word(k, j))).unwrap_or(NONE);
                }
            }
        }
        entry
            .into_iter()
            .map(|e| (e != NONE).then_some(e))
            .collect()
    }
}

/// Parses lines `first..` of `block` as lines of the section of order `m`, on all cores, in
/// tasks of [`LINES_PER_TASK`] lines.
fn parse_block(
    block: &Block,
    first: usize,
    m: usize,
    below: &Below,
    index: &WordIndex,
) -> Vec<Parsed> {
    let tasks: Vec<Vec<Parsed>> = (first..block.len())
        .into_par_iter()
        .step_by(LINES_PER_TASK)
        .map(|start| {
            let end = (start + LINES_PER_TASK).min(block.len());
            parse_lines(block, start..end, m, below, index)
        })
        .collect();
    tasks.into_iter().flatten().collect()
}

/// Parses lines `range` of `block` in order (see [`parse_block`]): first each line's fields and
/// word ids (its words prefetched [`WORDS_AHEAD`] lines earlier), then the contexts and suffixes
/// of all its n-grams, one order at a time ([`Below::find_all`]).
fn parse_lines(
    block: &Block,
    range: std::ops::Range<usize>,
    m: usize,
    below: &Below,
    index: &WordIndex,
) -> Vec<Parsed> {
    let mut previous = Previous::new(m);
    let end = range.end;
    // the word ids of the n-grams that parsed, m each, and their places in `parsed`
    let (mut ids, mut places) = (Vec::new(), Vec::new());
    let mut parsed: Vec<Parsed> = range
        .enumerate()
        .map(|(place, i)| {
            if m >= 2 && i + WORDS_AHEAD < end {
                for word in raw_words(block.line(i + WORDS_AHEAD)) {
                    index.prefetch(word);
                }
            }
            let line = parse_line(block.line(i), m, below.order, index, &mut previous);
            if m >= 2 && matches!(line, Parsed::NGram(Ok(_))) {
                ids.extend_from_slice(&previous.ids);
                places.push(place);
            }
            line
        })
        .collect();
    if m >= 2 {
        let contexts = below.find_all(&ids, m, 0, m - 1);
        let suffixes = (m >= 3).then(|| below.find_all(&ids, m, 1, m - 1));
        for (k, &place) in places.iter().enumerate() {
            if let Parsed::NGram(Ok(fields)) = &mut parsed[place] {
                fields.context = contexts[k];
                fields.suffix_known = suffixes.as_ref().is_none_or(|s| s[k].is_some());
            }
        }
    }
    parsed
}

/// The words of n-gram line `raw` (between its first and second tab; none without a tab), for
/// prefetching: the line is checked when it is parsed.
fn raw_words(raw: &[u8]) -> impl Iterator<Item = &[u8]> {
    let words = match raw.iter().position(|&b| b == b'\t') {
        Some(tab) => {
            let rest = &raw[tab + 1..];
            &rest[..rest.iter().position(|&b| b == b'\t').unwrap_or(rest.len())]
        }
        None => &[],
    };
    words
        .split(u8::is_ascii_whitespace)
        .filter(|word| !word.is_empty())
}

/// Parses line `raw` of the section of order `m`, looking words up in `index` unless `previous`
/// has them; an n-gram's ids are left in `previous` (its context and suffix are looked up
/// later, [`parse_lines`]).
fn parse_line<'a>(
    raw: &'a [u8],
    m: usize,
    order: usize,
    index: &WordIndex,
    previous: &mut Previous<'a>,
) -> Parsed {
    let text = match utf8(raw) {
        Ok(text) => text,
        Err(message) => return Parsed::NotUtf8(message),
    };
    if is_blank(text) || text.starts_with('\\') {
        return Parsed::End;
    }
    Parsed::NGram(parse_fields(text, m, order, index, previous))
}

/// [`parse_line`] for an n-gram line of order `m` in a model of order `order`.
fn parse_fields<'a>(
    text: &'a str,
    m: usize,
    order: usize,
    index: &WordIndex,
    previous: &mut Previous<'a>,
) -> std::result::Result<Fields, String> {
    let (logp, words, backoff) = split_fields(text, m)?;
    let logp = parse_log10(logp).ok_or_else(|| format!("bad log10 probability {}", quote(logp)))?;
    if logp > 0.0 {
        return Err(format!(
            "positive log10 probability {} (a probability above 1)",
            logp / LN_10
        ));
    }
    let weight = match backoff {
        None => 0.0,
        Some(b) => match parse_log10(b) {
            Some(w) if w != f64::INFINITY => w,
            _ => return Err(format!("bad log10 backoff {}", quote(b))),
        },
    };
    if m == order && weight != 0.0 {
        return Err(format!(
            "non-zero backoff {} on an n-gram of the highest order",
            quote(backoff.unwrap_or(""))
        ));
    }
    let mut word = 0;
    if m >= 2 {
        let mut ids = [0u32; MAX_ORDER];
        for (j, w) in words.split_ascii_whitespace().enumerate() {
            ids[j] = if previous.valid && previous.words[j] == w {
                previous.ids[j]
            } else {
                word_id(index, w)?
            };
        }
        let ids = &ids[..m];
        for (j, w) in words.split_ascii_whitespace().enumerate() {
            previous.words[j] = w;
        }
        previous.ids.copy_from_slice(ids);
        previous.valid = true;
        word = ids[m - 1];
    }
    // (an n-gram's context and suffix are looked up by `parse_lines`)
    Ok(Fields {
        logp,
        weight,
        context: None,
        word,
        suffix_known: true,
    })
}

/// The id of word `w` of an n-gram (order >= 2), which must be a unigram.
fn word_id(index: &WordIndex, w: &str) -> std::result::Result<u32, String> {
    index.get(w).ok_or_else(|| {
        format!(
            "word {} is not among the unigrams (which must list the whole vocabulary)",
            quote(w)
        )
    })
}

/// The section being read, for [`add_lines`].
struct Section<'a> {
    path: &'a str,
    /// Its order.
    m: usize,
    /// The n-grams the header announces.
    expected: u64,
}

/// Reads the n-gram lines of the section of order `m` (which must hold `expected` of them) into
/// `model` (words looked up in `index`), a block at a time, reporting them to `job`; stops before
/// the line that ends the section (read again by [`Lines::advance`]).
///
/// Each block is parsed on all cores, then its n-grams are added one by one in file order. While
/// they are, the next block is parsed beside them, unless the section ends in the block or adding
/// it may change the orders below m, which parsing reads: unigrams never do; a higher order's
/// block does when a line needs blank suffixes, or when its table might grow (which renumbers
/// nothing below m but is left to [`Model::insert_ngram`]). Each table therefore gets the same
/// insertions in the same order as from a line-by-line reading, and so the same slots.
fn read_section(
    lines: &mut Lines,
    model: &mut Model,
    index: &WordIndex,
    m: usize,
    expected: u64,
    job: &Job,
) -> Result<()> {
    let section = Section {
        path: lines.path(),
        m,
        expected,
    };
    let mut seen: u64 = 0;
    // the current block's lines, parsed while the block before was added
    let mut parsed_ahead: Option<Vec<Parsed>> = None;
    loop {
        let Some((block, first)) = lines.pending()? else {
            return Err(lines.fail(format!(
                "the file ends inside \\{m}-grams: after {seen} of the {expected} n-grams \
                 announced (truncated?)"
            )));
        };
        let parsed = parsed_ahead.take().unwrap_or_else(|| {
            let below = below_of(model, &model.higher[..m.max(2) - 2]);
            parse_block(block, first, m, &below, index)
        });
        let (block, next) = lines.with_next();
        let batch = Batch {
            block,
            first,
            parsed: &parsed,
        };
        let (read, ended, ahead) = add_block(model, index, &batch, next, &section, &mut seen)?;
        parsed_ahead = ahead;
        if ended {
            // the line that ends the section becomes the current line, to be read again
            lines.skip(read + 1);
            lines.hold();
        } else {
            lines.skip(read);
        }
        job.step(read as u64)?;
        if ended {
            if seen != expected {
                return Err(lines.fail(format!(
                    "\\{m}-grams: holds {seen} n-grams but the header announces {expected}"
                )));
            }
            return Ok(());
        }
    }
}

/// Adds the n-grams of `batch` (lines of `section`, whose n-grams so far `seen` counts) to
/// `model`, parsing the block `next` beside them when adding leaves alone what parsing reads
/// (see [`read_section`]) and the section does not end in `batch`: the lines added, whether the
/// section ended, and the parse of `next` if it was parsed.
fn add_block(
    model: &mut Model,
    index: &WordIndex,
    batch: &Batch,
    next: Option<&Block>,
    section: &Section,
    seen: &mut u64,
) -> Result<(usize, bool, Option<Vec<Parsed>>)> {
    let m = section.m;
    let parsed = batch.parsed;
    let next = next.filter(|_| !parsed.iter().any(|p| matches!(p, Parsed::End)));
    if m == 1 {
        // (parsing unigrams reads nothing of the model)
        let below = below_of(model, &[]);
        let (added, ahead) = rayon::join(
            || {
                add_lines(batch, section, seen, |text, f, _| {
                    add_unigram(model, text, f)
                })
            },
            || next.map(|b| parse_block(b, 0, m, &below, index)),
        );
        return added.map(|(read, ended)| (read, ended, ahead));
    }
    if needs_no_blanks(parsed) && model.higher[m - 2].table.has_room_for(parsed.len()) {
        let order = model.order;
        let vocab_len = model.vocab.len();
        let (lower, rest) = model.higher.split_at_mut(m - 2);
        let below = Below {
            order,
            vocab_len,
            higher: lower,
        };
        let table = &mut rest[0].table;
        let (added, ahead) = rayon::join(
            || {
                add_lines(batch, section, seen, |text, f, ahead| {
                    prefetch_slot(table, ahead);
                    insert_parsed(table, m, order, text, f)
                })
            },
            || next.map(|b| parse_block(b, 0, m, &below, index)),
        );
        return added.map(|(read, ended)| (read, ended, ahead));
    }
    let mut blanks_added = false;
    let (read, ended) = add_lines(batch, section, seen, |text, f, ahead| {
        prefetch_slot(&model.higher[m - 2].table, ahead);
        add_ngram(model, index, m, text, f, &mut blanks_added)
    })?;
    Ok((read, ended, None))
}

/// What parsing reads of `model`: its order, its vocabulary's size and the tables `higher` (of
/// orders 2 to m-1 for a section of order m).
fn below_of<'a>(model: &Model, higher: &'a [OrderTable]) -> Below<'a> {
    Below {
        order: model.order,
        vocab_len: model.vocab.len(),
        higher,
    }
}

/// Whether no line of `parsed` up to the end of the section has a suffix missing from the
/// orders below (whose blank entries would change those orders).
fn needs_no_blanks(parsed: &[Parsed]) -> bool {
    parsed
        .iter()
        .take_while(|p| !matches!(p, Parsed::End))
        .all(|p| !matches!(p, Parsed::NGram(Ok(fields)) if !fields.suffix_known))
}

/// The lines of a block from `first` on, and their parse.
struct Batch<'a> {
    block: &'a Block,
    first: usize,
    parsed: &'a [Parsed],
}

/// Adds the n-grams of `batch` to the section with `add` (given each line, its fields and the
/// parse of the line [`PREFETCH_AHEAD`] lines on), in file order, up to the end of the section or
/// the first error (at its line); `seen` counts the section's n-grams. The lines added, and
/// whether the section ended in the block.
fn add_lines(
    batch: &Batch,
    section: &Section,
    seen: &mut u64,
    mut add: impl FnMut(&str, &Fields, Option<&Parsed>) -> std::result::Result<(), String>,
) -> Result<(usize, bool)> {
    let Section { path, m, expected } = *section;
    for (k, parsed) in batch.parsed.iter().enumerate() {
        let i = batch.first + k;
        let fail = |message: &String| error_at(path, batch.block.line_number(i), message.clone());
        let fields = match parsed {
            Parsed::NotUtf8(message) => return Err(fail(message)),
            Parsed::End => return Ok((k, true)),
            Parsed::NGram(fields) => fields,
        };
        if *seen == expected {
            return Err(fail(&format!(
                "\\{m}-grams: holds more n-grams than the {expected} announced in the header"
            )));
        }
        let fields = fields.as_ref().map_err(fail)?;
        // (checked UTF-8 by parse_line)
        let text = std::str::from_utf8(batch.block.line(i)).unwrap_or("");
        add(text, fields, batch.parsed.get(k + PREFETCH_AHEAD))
            .map_err(|message| fail(&message))?;
        *seen += 1;
    }
    Ok((batch.parsed.len(), false))
}

/// Asks the CPU to load the slot of `table` where the n-gram of `parsed` (if any) goes: the
/// table is larger than the caches, and the n-gram is added a few lines later.
fn prefetch_slot(table: &ProbingTable, parsed: Option<&Parsed>) {
    if let Some(Parsed::NGram(Ok(Fields {
        context: Some(context),
        word,
        ..
    }))) = parsed
    {
        table.prefetch(pack(*context, *word));
    }
}

/// Inserts the n-gram of line `text` of order `m >= 2` (of a model of order `order`) into its
/// order's `table` (which has room) with the lookups made while parsing (its suffix is known),
/// as [`Model::insert_ngram`] does.
fn insert_parsed(
    table: &mut ProbingTable,
    m: usize,
    order: usize,
    text: &str,
    fields: &Fields,
) -> std::result::Result<(), String> {
    let context = fields
        .context
        .ok_or_else(|| missing_context(m, words_of(text, m)))?;
    let weight = if m < order { fields.weight } else { 0.0 };
    let entry = Entry {
        logp: fields.logp,
        weight,
    };
    match table.insert_new(pack(context, fields.word), entry) {
        Some(_) => Ok(()),
        None => Err(duplicate(m, text)),
    }
}

/// The words of n-gram line `text` of order `m` (parsed once already), for messages.
fn words_of(text: &str, m: usize) -> &str {
    split_fields(text, m).map_or(text, |(_, words, _)| words)
}

/// Adds the unigram of line `text`.
fn add_unigram(model: &mut Model, text: &str, fields: &Fields) -> std::result::Result<(), String> {
    // ASCII whitespace only, as KenLM: U+00A0 and friends are part of words
    let word = words_of(text, 1).trim_matches(|c: char| c.is_ascii_whitespace());
    let before = model.vocab.len();
    let id = model.vocab.intern(word);
    if (id as usize) < before {
        if !model.unigram_logp[id as usize].is_nan() {
            return Err(format!("duplicate unigram {}", quote(word)));
        }
    } else {
        model.unigram_logp.push(f64::NAN);
        model.unigram_weight.push(0.0);
    }
    model.unigram_logp[id as usize] = fields.logp;
    model.unigram_weight[id as usize] = fields.weight;
    Ok(())
}

/// Adds the n-gram of line `text` of order `m >= 2` with the lookups made while parsing,
/// unless `blanks_added` (then, or when its suffix is missing, looking everything up again and
/// setting `blanks_added`).
fn add_ngram(
    model: &mut Model,
    index: &WordIndex,
    m: usize,
    text: &str,
    fields: &Fields,
    blanks_added: &mut bool,
) -> std::result::Result<(), String> {
    let context = if *blanks_added || !fields.suffix_known {
        *blanks_added = true;
        add_blanks(model, index, m, words_of(text, m))?
    } else {
        fields
            .context
            .ok_or_else(|| missing_context(m, words_of(text, m)))?
    };
    if model.insert_ngram(m, context, fields.word, fields.logp, fields.weight) {
        Ok(())
    } else {
        Err(duplicate(m, text))
    }
}

/// The message for a second line `text` of order `m` with the words of an earlier one.
fn duplicate(m: usize, text: &str) -> String {
    format!("duplicate {m}-gram {}", quote(words_of(text, m)))
}

/// Looks up the context of the n-gram `words` of order `m` and adds the blank entries its suffix
/// needs (as KenLM does for missing suffixes); returns the context's entry.
fn add_blanks(
    model: &mut Model,
    index: &WordIndex,
    m: usize,
    words: &str,
) -> std::result::Result<u32, String> {
    let ids = words
        .split_ascii_whitespace()
        .map(|w| word_id(index, w))
        .collect::<std::result::Result<Vec<u32>, String>>()?;
    let Some(context) = model.find(&ids[..m - 1]) else {
        return Err(missing_context(m, words));
    };
    if m >= 3 {
        if let Err(ln_p) = model.ensure_ngram(&ids[1..]) {
            return Err(format!(
                "the {m}-gram {} has a suffix missing from the file, whose probability by \
                 backing off is above 1 (log10 {}): the file's backoff weights are not those of \
                 a probability model",
                quote(words),
                ln_p / LN_10
            ));
        }
    }
    // inserting a blank suffix may have moved the context to a new slot
    Ok(model.find(&ids[..m - 1]).unwrap_or(context))
}

/// The message for an n-gram whose context is not in the file.
fn missing_context(m: usize, words: &str) -> String {
    format!(
        "the context of the {m}-gram {} is not among the {}-grams (KenLM refuses such files too: \
         \"the context of every n-gram should appear as an (n-1)-gram\")",
        quote(words),
        m - 1
    )
}

/// After the unigrams: refuses a file without `<s>` or `</s>`, gives `<unk>` KenLM's
/// probability when missing, and `<s>` probability 0 (it is never predicted).
fn complete_unigrams(lines: &Lines, model: &mut Model) -> Result<()> {
    for (id, name) in [(BOS, "<s>"), (EOS, "</s>")] {
        if model.unigram_logp[id as usize].is_nan() {
            return Err(lines.fail(format!(
                "the unigrams have no {name}: fastppl, like KenLM by default, needs the sentence \
                 markers <s> and </s>"
            )));
        }
    }
    if model.unigram_logp[UNK as usize].is_nan() {
        model.unigram_logp[UNK as usize] = UNKNOWN_MISSING_LOG10 * LN_10;
        model.unigram_weight[UNK as usize] = 0.0;
    }
    model.unigram_logp[BOS as usize] = f64::NEG_INFINITY;
    Ok(())
}

/// The `\end\` line (after blank lines), then nothing but blank lines.
fn read_end(lines: &mut Lines, order: usize) -> Result<()> {
    loop {
        if !lines.advance()? {
            return Err(lines.fail("the file ends without \\end\\ (truncated?)"));
        }
        if !is_blank(lines.text()) {
            break;
        }
    }
    let t = lines.text().trim_end();
    if t != "\\end\\" {
        let message = match section_order(t) {
            Some(k) => format!(
                "section \\{k}-grams: is not announced in the \\data\\ header (which stops at \
                 order {order})"
            ),
            None => format!("expected \\end\\, got {}", quote(t)),
        };
        return Err(lines.fail(message));
    }
    while lines.advance()? {
        if !is_blank(lines.text()) {
            return Err(lines.fail(format!(
                "unexpected line after \\end\\: {}",
                quote(lines.text())
            )));
        }
    }
    Ok(())
}

/// Splits an n-gram line of order `m` into (log10 p, words, backoff).
fn split_fields(line: &str, m: usize) -> std::result::Result<(&str, &str, Option<&str>), String> {
    let wrong_length =
        |k: usize| format!("an n-gram of {k} word(s) in the \\{m}-grams: section (expected {m})");
    if line.contains('\t') {
        let mut parts = line.split('\t');
        let logp = parts.next().unwrap_or("").trim();
        let Some(words) = parts.next() else {
            return Err("expected <log10 p>\\t<words>[\\t<backoff>]".into());
        };
        let backoff = parts.next().map(str::trim);
        if parts.next().is_some() {
            return Err(
                "too many tab-separated fields: expected <log10 p>\\t<words>[\\t<backoff>]".into(),
            );
        }
        let k = words.split_ascii_whitespace().count();
        if k != m {
            return Err(wrong_length(k));
        }
        let backoff = backoff.filter(|b| !b.is_empty());
        Ok((logp, words, backoff))
    } else {
        // whitespace-separated: p w1 .. wm [backoff]
        let fields: Vec<&str> = line.split_ascii_whitespace().collect();
        if fields.len() != m + 1 && fields.len() != m + 2 {
            return Err(format!(
                "{} field(s) where a {m}-gram line has {} or {}: <log10 p> <{m} words> [<backoff>]",
                fields.len(),
                m + 1,
                m + 2
            ));
        }
        // words as a sub-slice of the line
        let start = fields[1].as_ptr() as usize - line.as_ptr() as usize;
        let last = fields[m];
        let end = last.as_ptr() as usize - line.as_ptr() as usize + last.len();
        Ok((fields[0], &line[start..end], fields.get(m + 1).copied()))
    }
}
