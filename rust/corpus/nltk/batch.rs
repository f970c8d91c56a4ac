//! The tokens of a batch of pieces (sentences or lines), as one worker thread makes them: each
//! distinct token (a type of the batch) is stored once, and the tokens are indices of types.
//!
//! Interning within the batch runs on the worker threads, in parallel; the corpus's vocabulary,
//! which one thread fills in text order, then meets each type of a batch once instead of each
//! token (a few tens of thousands of types for a megabyte of text, against about 200,000
//! tokens).

use std::hash::BuildHasher;

use hashbrown::{DefaultHashBuilder, HashTable};

/// Tokens of consecutive pieces, with their types interned.
#[derive(Default)]
pub struct Batch {
    /// The spellings of the types, one after the other.
    bytes: String,
    /// End of each type in `bytes`.
    type_ends: Vec<usize>,
    /// Each token, as its type.
    tokens: Vec<u32>,
    /// For each piece: its end in `tokens`, and whether it ends a group.
    piece_ends: Vec<(usize, bool)>,
    /// Types by the hash of their spelling.
    index: HashTable<Entry>,
    hasher: DefaultHashBuilder,
}

/// A type in the index, with the place of its spelling in `bytes` (a probe compares the
/// lengths, then the bytes, without looking `type_ends` up).
#[derive(Clone, Copy)]
struct Entry {
    start: usize,
    len: u32,
    id: u32,
}

impl Entry {
    #[inline]
    fn spelling(self, bytes: &str) -> &[u8] {
        &bytes.as_bytes()[self.start..self.start + self.len as usize]
    }
}

/// Type `i` in `bytes` ended by `ends`.
#[inline]
fn spelling<'a>(bytes: &'a str, ends: &[usize], i: u32) -> &'a str {
    let i = i as usize;
    let start = if i == 0 { 0 } else { ends[i - 1] };
    &bytes[start..ends[i]]
}

impl Batch {
    /// An empty batch with room for the tokens of about `text_bytes` bytes of text.
    pub fn with_capacity(text_bytes: usize, pieces: usize) -> Self {
        Batch {
            bytes: String::with_capacity(text_bytes / 4),
            type_ends: Vec::with_capacity(text_bytes / 32),
            tokens: Vec::with_capacity(text_bytes / 4),
            piece_ends: Vec::with_capacity(pieces),
            index: HashTable::with_capacity(text_bytes / 32),
            ..Batch::default()
        }
    }

    /// Appends a token to the current piece.
    pub fn push_token(&mut self, token: &str) {
        let key = token.as_bytes();
        let hash = self.hasher.hash_one(key);
        let bytes = &self.bytes;
        let found = self
            .index
            .find(hash, |e| {
                e.len as usize == key.len() && e.spelling(bytes) == key
            })
            .map(|e| e.id);
        let id = if let Some(id) = found {
            id
        } else {
            let entry = Entry {
                start: self.bytes.len(),
                len: u32::try_from(token.len()).expect("a token under 4 GiB"),
                id: u32::try_from(self.type_ends.len()).expect("fewer than 2^32 types"),
            };
            self.bytes.push_str(token);
            self.type_ends.push(self.bytes.len());
            let (bytes, hasher) = (&self.bytes, &self.hasher);
            self.index
                .insert_unique(hash, entry, |e| hasher.hash_one(e.spelling(bytes)));
            entry.id
        };
        self.tokens.push(id);
    }

    /// Closes the current piece; `ends_group` is given back by [`Batch::pieces`].
    pub fn end_piece(&mut self, ends_group: bool) {
        self.piece_ends.push((self.tokens.len(), ends_group));
    }

    /// Number of types.
    pub fn num_types(&self) -> usize {
        self.type_ends.len()
    }

    /// Number of tokens.
    pub fn num_tokens(&self) -> usize {
        self.tokens.len()
    }

    /// The tokens of all pieces, as types.
    pub fn tokens(&self) -> &[u32] {
        &self.tokens
    }

    /// The spelling of type `i`.
    #[inline]
    pub fn spelling(&self, i: u32) -> &str {
        spelling(&self.bytes, &self.type_ends, i)
    }

    /// The pieces in order: their tokens (as types) and whether each ends a group.
    pub fn pieces(&self) -> impl Iterator<Item = (&[u32], bool)> {
        let mut start = 0;
        self.piece_ends.iter().map(move |&(end, ends_group)| {
            let tokens = &self.tokens[start..end];
            start = end;
            (tokens, ends_group)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_are_stored_once_and_tokens_keep_their_order() {
        let mut b = Batch::with_capacity(64, 2);
        for t in ["a", "b", "a"] {
            b.push_token(t);
        }
        b.end_piece(false);
        b.end_piece(true);
        for t in ["b", "ab", "a"] {
            b.push_token(t);
        }
        b.end_piece(true);
        assert_eq!(b.num_types(), 3);
        let pieces: Vec<(Vec<&str>, bool)> = b
            .pieces()
            .map(|(tokens, ends)| (tokens.iter().map(|&t| b.spelling(t)).collect(), ends))
            .collect();
        assert_eq!(
            pieces,
            [
                (vec!["a", "b", "a"], false),
                (vec![], true),
                (vec!["b", "ab", "a"], true)
            ]
        );
    }
}
