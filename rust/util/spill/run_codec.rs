//! The compact form of a sorted run on disk: records in frames, each key stored as what differs
//! from the record before.
//!
//! Sorted records share their leading key words (in the layout's comparison order) with the
//! record before them: a 5-gram run in suffix order repeats its last word or two from record to
//! record, and word ids take three bytes or fewer. A record is written as
//!
//! - one byte: how many leading key words (in comparison order) equal the previous record's;
//! - the first word that differs, as its difference from the previous record's (wrapping), in
//!   LEB128 (one to five bytes; small in a sorted run);
//! - the other key words in LEB128;
//! - the payload words, each column of a frame either in LEB128 (counts) or as four raw bytes
//!   (the bits of floats, which LEB128 would lengthen), whichever is shorter for the frame.
//!
//! A frame is a 12-byte header (body bytes, records, the raw-column mask; little-endian `u32`s)
//! and its body; its first record is coded against a record of zeros, so each frame decodes on
//! its own. Any records round-trip, sorted or not; sorted ones take about half the bytes of their
//! fixed-width form, which halves the bytes a budgeted estimation writes to and reads from its
//! work directory.

use std::io::{self, Read, Write};

use super::Layout;
use crate::util::prefetch::prefetch_ahead;
use crate::util::words::with_fixed_len;

/// Records per frame: what a reader decodes at a time (about 50 KB of 5-gram records, and as
/// much again of frame bytes, per run being merged).
pub const FRAME_RECORDS: usize = 2048;

/// Bytes of a frame's header.
const HEADER: usize = 12;

/// The positions of the key words in comparison order, the most significant first.
fn key_positions(layout: &Layout) -> Vec<usize> {
    (0..layout.key_len)
        .map(|k| layout.key_position(k))
        .collect()
}

/// Bytes past a frame's longest body that its buffer keeps: [`put_varint`] stores 8 bytes at a
/// time.
const SLACK: usize = 8;

/// Writes `x` in LEB128 at `bytes[*at..]` (which has room for 8 bytes) and moves `at` past it:
/// its 7-bit groups spread into bytes by shifts, the continuation bits set on all but the last,
/// stored as one 8-byte word of which the bytes past the varint are overwritten later (no branch
/// on the varint's length, which in a sorted run's keys changes from word to word).
#[inline(always)]
fn put_varint(bytes: &mut [u8], at: &mut usize, x: u32) {
    let len = varint_len(x);
    let x = u64::from(x);
    let spread = (x & 0x7f)
        | (x & 0x3f80) << 1
        | (x & 0x1f_c000) << 2
        | (x & 0xfe0_0000) << 3
        | (x & 0xf000_0000) << 4;
    let continued = 0x80_8080_8080 & ((1u64 << (8 * (len - 1))) - 1);
    bytes[*at..*at + 8].copy_from_slice(&(spread | continued).to_le_bytes());
    *at += len;
}

#[inline]
fn varint_len(x: u32) -> usize {
    (32 - (x | 1).leading_zeros() as usize).div_ceil(7)
}

/// The width of `layout`'s records: `W`, or `layout.width` where `W` is 0. The coding functions
/// are instances for each small width (see [`with_fixed_len`]), so that a record's copies are
/// moves of a known size.
#[inline(always)]
fn width_of<const W: usize>(layout: &Layout) -> usize {
    debug_assert!(W == 0 || W == layout.width);
    if W == 0 {
        layout.width
    } else {
        W
    }
}

/// Gathers the records `index` (record numbers) of `records` and appends their frame to `out`;
/// with `prefixes` (see [`PrefixValues`]: each record of `records` then has one word more than
/// `layout`'s, left out of the frame), appends the frame of the records' prefix values to its
/// buffer too.
fn encode_gathered<const W: usize>(
    records: &[u32],
    index: &[u32],
    layout: &Layout,
    out: &mut Vec<u8>,
    prefixes: Option<(&Layout, &mut Vec<u8>)>,
) {
    let width = width_of::<W>(layout);
    let stride = width + usize::from(prefixes.is_some());
    let prefix_len = prefixes.as_ref().map_or(0, |(p, _)| p.key_len);
    let mut gathered = Vec::with_capacity(index.len() * width);
    // each distinct prefix of the frame's records (in a sorted run, those sharing one are
    // side by side) and the value its records carry in their last word
    let mut values: Vec<u32> = Vec::new();
    for (k, &i) in index.iter().enumerate() {
        // read from all over `records`: fetch ahead
        prefetch_ahead(k, index.len(), |ahead| {
            records.get(index[ahead] as usize * stride)
        });
        let record = &records[i as usize * stride..][..stride];
        gathered.extend_from_slice(&record[..width]);
        if prefixes.is_some() {
            let prefix = &record[..prefix_len];
            if values.is_empty() || values[values.len() - prefix_len - 1..][..prefix_len] != *prefix
            {
                values.extend_from_slice(prefix);
                values.push(record[width]);
            }
        }
    }
    encode_frame::<W>(&gathered, layout, out);
    if let Some((prefix_layout, prefix_out)) = prefixes {
        encode_frame::<0>(&values, prefix_layout, prefix_out);
    }
}

/// Appends the frame of `records` (whole records of `layout`, at most `u32::MAX` of them) to
/// `out`.
fn encode_frame<const W: usize>(records: &[u32], layout: &Layout, out: &mut Vec<u8>) {
    let (width, key_len) = (width_of::<W>(layout), layout.key_len);
    let count = records.len() / width;
    // payload columns kept raw: those whose LEB128 form would take more than 4 bytes a record
    let mut raw_mask = 0u32;
    for j in 0..(width - key_len).min(32) {
        let varint: usize = records
            .chunks_exact(width)
            .map(|r| varint_len(r[key_len + j]))
            .sum();
        if varint > 4 * count {
            raw_mask |= 1 << j;
        }
    }
    // written into room for the longest frame (1 + 5 bytes a word per record), cut to size
    // after: stores into a slice, not pushes that each check the vector's capacity
    let start = out.len();
    out.resize(start + HEADER + count * (1 + 5 * width) + SLACK, 0);
    let bytes = &mut out[start + HEADER..];
    let mut at = 0;
    let zeros = vec![0u32; width];
    let mut previous: &[u32] = &zeros;
    let positions = key_positions(layout);
    for record in records.chunks_exact(width) {
        let shared = positions
            .iter()
            .take_while(|&&i| record[i] == previous[i])
            .count();
        bytes[at] = shared as u8;
        at += 1;
        if shared < key_len {
            let i = positions[shared];
            put_varint(bytes, &mut at, record[i].wrapping_sub(previous[i]));
            for &i in &positions[shared + 1..] {
                put_varint(bytes, &mut at, record[i]);
            }
        }
        for (j, &w) in record[key_len..].iter().enumerate() {
            if j < 32 && raw_mask >> j & 1 == 1 {
                bytes[at..at + 4].copy_from_slice(&w.to_le_bytes());
                at += 4;
            } else {
                put_varint(bytes, &mut at, w);
            }
        }
        previous = record;
    }
    out.truncate(start + HEADER + at);
    let body = (out.len() - start - HEADER) as u32;
    let header = &mut out[start..start + HEADER];
    header[..4].copy_from_slice(&body.to_le_bytes());
    header[4..8].copy_from_slice(&(count as u32).to_le_bytes());
    header[8..].copy_from_slice(&raw_mask.to_le_bytes());
}

/// Where [`write_run`] writes the prefix values of a run: each record then carries
/// one word after those of its layout, a value of its first `layout.key_len` key words (the
/// same in every record that shares them: the weight of an n-gram's context, say), left out of
/// the run. For each prefix of the run's records, in the run's order, the prefix and its value
/// go to `out` as a record of `layout` (`[prefix, value]`, prefix order), a run of their own. A
/// prefix whose records span two frames of the run is written twice.
pub struct PrefixValues<'w> {
    pub layout: Layout,
    pub out: &'w mut dyn Write,
}

/// Writes the records of `records` (sorted or not) in the order of `index` (record numbers) as
/// frames of [`FRAME_RECORDS`] records, and their prefix values to `prefixes` when given (see
/// [`PrefixValues`]); returns the bytes written to both. Frames are gathered and encoded on all
/// cores, a few at a time (the memory of a few frames).
pub fn write_run(
    records: &[u32],
    index: &[u32],
    layout: &Layout,
    out: &mut impl Write,
    mut prefixes: Option<PrefixValues<'_>>,
) -> io::Result<usize> {
    use rayon::prelude::*;
    let width = layout.width;
    let count = index.len();
    let frames = count.div_ceil(FRAME_RECORDS);
    let batch = 4 * rayon::current_num_threads();
    let prefix_layout = prefixes.as_ref().map(|p| p.layout);
    let mut written = 0;
    for first in (0..frames).step_by(batch) {
        let encoded: Vec<(Vec<u8>, Vec<u8>)> = (first..(first + batch).min(frames))
            .into_par_iter()
            .map(|f| {
                let span = f * FRAME_RECORDS..((f + 1) * FRAME_RECORDS).min(count);
                let mut bytes = Vec::with_capacity(HEADER + span.len() * (1 + 5 * width) + SLACK);
                let mut prefix_bytes = Vec::new();
                let index = &index[span];
                let values = prefix_layout.as_ref().map(|l| (l, &mut prefix_bytes));
                with_fixed_len!(
                    width,
                    encode_gathered(records, index, layout, &mut bytes, values)
                );
                (bytes, prefix_bytes)
            })
            .collect();
        for (bytes, prefix_bytes) in &encoded {
            out.write_all(bytes)?;
            written += bytes.len();
            if let Some(p) = prefixes.as_mut() {
                p.out.write_all(prefix_bytes)?;
                written += prefix_bytes.len();
            }
        }
    }
    Ok(written)
}

fn corrupt(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("a sorted run is corrupt: {what} (was the work directory changed?)"),
    )
}

/// Reads the frames of a run, one at a time.
pub struct FrameReader {
    body: Vec<u8>,
}

impl FrameReader {
    pub fn new() -> Self {
        FrameReader { body: Vec::new() }
    }

    /// Decodes the next frame of `input` into `records` (replacing its contents); false at the
    /// end of the run.
    pub fn next_frame(
        &mut self,
        input: &mut impl Read,
        layout: &Layout,
        records: &mut Vec<u32>,
    ) -> io::Result<bool> {
        let mut header = [0u8; HEADER];
        let got = read_full(input, &mut header)?;
        if got == 0 {
            return Ok(false);
        }
        if got < HEADER {
            return Err(corrupt("it ends inside a frame header (was it truncated?)"));
        }
        let word = |i: usize| u32::from_le_bytes(header[i..i + 4].try_into().unwrap());
        let (body, count, raw_mask) = (word(0) as usize, word(4) as usize, word(8));
        if count > FRAME_RECORDS || body > count * (1 + 5 * layout.width) {
            return Err(corrupt("a frame header holds impossible sizes"));
        }
        self.body.resize(body, 0);
        if read_full(input, &mut self.body)? < body {
            return Err(corrupt("it ends inside a frame (was it truncated?)"));
        }
        with_fixed_len!(
            layout.width,
            decode_frame(&self.body, count, raw_mask, layout, records)
        )
        .ok_or_else(|| corrupt("a frame does not decode to its records"))?;
        Ok(true)
    }
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
fn read_full(input: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match input.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// A frame's body cursor.
struct Bytes<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Bytes<'_> {
    #[inline(always)]
    fn byte(&mut self) -> Option<u8> {
        let b = *self.bytes.get(self.at)?;
        self.at += 1;
        Some(b)
    }

    #[inline(always)]
    fn varint(&mut self) -> Option<u32> {
        // where 8 bytes are left: one load, the varint's end found from its stop bit and its
        // 7-bit groups gathered by shifts (no branch on its length, which changes from word to
        // word); bits past the 32nd are dropped, as below
        if let Some(word) = self.bytes.get(self.at..self.at + 8) {
            let word = u64::from_le_bytes(word.try_into().ok()?);
            let stops = !word & 0x80_8080_8080;
            if stops == 0 {
                return None;
            }
            let len = stops.trailing_zeros() / 8 + 1;
            let w = word & (u64::MAX >> (64 - 8 * len));
            let x = (w & 0x7f)
                | (w >> 1 & 0x3f80)
                | (w >> 2 & 0x1f_c000)
                | (w >> 3 & 0xfe0_0000)
                | (w >> 4 & 0x7_f000_0000);
            self.at += len as usize;
            return Some(x as u32);
        }
        let mut x = 0u32;
        for shift in (0..35).step_by(7) {
            let b = self.byte()?;
            x |= u32::from(b & 0x7f).checked_shl(shift)?;
            if b < 0x80 {
                return Some(x);
            }
        }
        None
    }

    #[inline(always)]
    fn raw(&mut self) -> Option<u32> {
        let b = self.bytes.get(self.at..self.at + 4)?;
        self.at += 4;
        Some(u32::from_le_bytes(b.try_into().ok()?))
    }
}

/// Decodes `count` records from `body` into `records`; `None` if the body is not such a frame.
fn decode_frame<const W: usize>(
    body: &[u8],
    count: usize,
    raw_mask: u32,
    layout: &Layout,
    records: &mut Vec<u32>,
) -> Option<()> {
    let (width, key_len) = (width_of::<W>(layout), layout.key_len);
    records.clear();
    records.resize(count * width, 0);
    let mut input = Bytes { bytes: body, at: 0 };
    let positions = key_positions(layout);
    for r in 0..count {
        let (before, rest) = records.split_at_mut(r * width);
        let record = &mut rest[..width];
        // the words this record shares with the one before (zeros before the first), copied one
        // by one: a wider copy of the record just written would wait for its word-wide stores
        let previous = before
            .get(before.len().wrapping_sub(width)..)
            .unwrap_or(&[]);
        let previous = |i: usize| previous.get(i).copied().unwrap_or(0);
        let shared = usize::from(input.byte()?);
        if shared > key_len {
            return None;
        }
        for &i in &positions[..shared] {
            record[i] = previous(i);
        }
        if shared < key_len {
            let i = positions[shared];
            record[i] = previous(i).wrapping_add(input.varint()?);
            for &i in &positions[shared + 1..] {
                record[i] = input.varint()?;
            }
        }
        for (j, w) in record[key_len..].iter_mut().enumerate() {
            *w = if j < 32 && raw_mask >> j & 1 == 1 {
                input.raw()?
            } else {
                input.varint()?
            };
        }
    }
    (input.at == body.len()).then_some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::spill::KeyOrder;
    use crate::util::spill::PAD;

    fn round_trip(records: &[u32], layout: &Layout) -> (Vec<u32>, usize) {
        let mut file = Vec::new();
        let written =
            write_run(records, &in_order(records, layout), layout, &mut file, None).unwrap();
        assert_eq!(written, file.len());
        let mut reader = FrameReader::new();
        let (mut input, mut frame, mut back) = (file.as_slice(), Vec::new(), Vec::new());
        while reader.next_frame(&mut input, layout, &mut frame).unwrap() {
            back.extend_from_slice(&frame);
        }
        (back, written)
    }

    /// The index of `records` in their own order.
    fn in_order(records: &[u32], layout: &Layout) -> Vec<u32> {
        (0..(records.len() / layout.width) as u32).collect()
    }

    /// Pseudo-random records of `layout` (word ids below `ids`, some `PAD`s, counts and float
    /// bits as payload), sorted in its order when `sorted`.
    fn records(n: usize, layout: &Layout, ids: u32, sorted: bool) -> Vec<u32> {
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut rows: Vec<Vec<u32>> = (0..n)
            .map(|_| {
                let mut r: Vec<u32> = (0..layout.key_len)
                    .map(|_| match next() % 16 {
                        0 => PAD,
                        x if x < 8 => (next() % 8) as u32,
                        _ => (next() % u64::from(ids)) as u32,
                    })
                    .collect();
                r.push((next() % 5) as u32 + 1);
                while r.len() < layout.width {
                    r.push(next() as u32);
                }
                r
            })
            .collect();
        if sorted {
            rows.sort_by(|a, b| layout.compare(a, b));
        }
        rows.concat()
    }

    /// Every layout and order, sorted or not, across frame boundaries, with `PAD`s, equal keys,
    /// and ids as large as `u32` holds: what goes in comes out.
    #[test]
    fn records_come_back_as_written() {
        for order in [KeyOrder::Prefix, KeyOrder::Suffix, KeyOrder::Context] {
            for (key_len, payload) in [(1, 1), (3, 1), (5, 1), (4, 3), (2, 0)] {
                let layout = Layout::new(key_len, payload, order);
                for n in [0, 1, 7, FRAME_RECORDS, 2 * FRAME_RECORDS + 5] {
                    for (ids, sorted) in [(50, true), (1 << 20, true), (u32::MAX, false)] {
                        let mut input = records(n, &layout, ids, sorted);
                        if payload == 0 {
                            input = input
                                .chunks_exact(layout.width + 1)
                                .flat_map(|r| r[..key_len].to_vec())
                                .collect();
                        }
                        let (back, _) = round_trip(&input, &layout);
                        assert_eq!(back, input, "{order:?} {key_len}+{payload} n={n} ids={ids}");
                    }
                }
            }
        }
    }

    /// Records written in the order of an index (a permutation, across several frames) come
    /// back in that order, as the same bytes as the records copied into that order first.
    #[test]
    fn records_written_by_index_come_back_in_its_order() {
        for order in [KeyOrder::Prefix, KeyOrder::Suffix, KeyOrder::Context] {
            let layout = Layout::new(4, 3, order);
            let input = records(3 * FRAME_RECORDS + 11, &layout, 1 << 20, false);
            let n = (input.len() / layout.width) as u32;
            let mut index: Vec<u32> = (0..n).collect();
            index.sort_by(|&a, &b| {
                let w = layout.width;
                layout.compare(&input[a as usize * w..][..w], &input[b as usize * w..][..w])
            });
            let copied: Vec<u32> = index
                .iter()
                .flat_map(|&i| input[i as usize * layout.width..][..layout.width].to_vec())
                .collect();
            let mut by_index = Vec::new();
            let written = write_run(&input, &index, &layout, &mut by_index, None).unwrap();
            assert_eq!(written, by_index.len());
            let mut reader = FrameReader::new();
            let (mut bytes, mut frame, mut back) = (by_index.as_slice(), Vec::new(), Vec::new());
            while reader.next_frame(&mut bytes, &layout, &mut frame).unwrap() {
                back.extend_from_slice(&frame);
            }
            assert_eq!(back, copied, "{order:?}");
            let mut copied_file = Vec::new();
            write_run(
                &copied,
                &in_order(&copied, &layout),
                &layout,
                &mut copied_file,
                None,
            )
            .unwrap();
            assert!(by_index == copied_file, "{order:?}: other bytes");
        }
    }

    /// A sorted 5-gram run with counts takes well under half its fixed-width bytes, and float
    /// payloads are kept raw rather than lengthened.
    #[test]
    fn sorted_runs_take_fewer_bytes() {
        let layout = Layout::new(5, 1, KeyOrder::Suffix);
        let input = records(50_000, &layout, 100_000, true);
        let (_, written) = round_trip(&input, &layout);
        assert!(
            written * 2 < input.len() * 4,
            "{written} of {}",
            input.len() * 4
        );
        let floats = Layout::new(2, 2, KeyOrder::Prefix);
        let input = records(50_000, &floats, 100_000, true);
        let (back, written) = round_trip(&input, &floats);
        assert_eq!(back, input);
        assert!(
            written < input.len() * 4,
            "{written} of {}",
            input.len() * 4
        );
    }

    /// Truncated or altered runs give an error, never a panic or wrong records.
    #[test]
    fn damaged_runs_are_errors() {
        let layout = Layout::new(3, 1, KeyOrder::Prefix);
        let input = records(100, &layout, 1000, true);
        let mut file = Vec::new();
        write_run(&input, &in_order(&input, &layout), &layout, &mut file, None).unwrap();
        for cut in [5, HEADER, HEADER + 10, file.len() - 1] {
            let mut reader = FrameReader::new();
            let mut frame = Vec::new();
            let err = reader
                .next_frame(&mut &file[..cut], &layout, &mut frame)
                .unwrap_err();
            assert!(err.to_string().contains("truncated"), "{cut}: {err}");
        }
        // a shared-word count beyond the key
        let mut bad = file.clone();
        bad[HEADER] = 9;
        let err = FrameReader::new()
            .next_frame(&mut bad.as_slice(), &layout, &mut Vec::new())
            .unwrap_err();
        assert!(err.to_string().contains("corrupt"), "{err}");
        // impossible sizes in the header
        let mut bad = file;
        bad[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(FrameReader::new()
            .next_frame(&mut bad.as_slice(), &layout, &mut Vec::new())
            .is_err());
    }
}
