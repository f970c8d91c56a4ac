//! The tokens of a batch of pieces (sentences or lines), as one worker thread makes them: each
//! distinct token (a type of the batch) is stored once, and the tokens are indices of types.
//!
//! Interning within the batch runs on the worker threads, in parallel; the corpus's vocabulary,
//! which one thread fills in text order, then meets each type of a batch once instead of each
//! token (a few tens of thousands of types for a megabyte of text, against about 200,000
//! tokens).

use crate::util::interner::Interner;

/// Bytes of text up to which a text is sized as a short one (see [`type_room`]).
const SHORT_TEXT: usize = 4096;

/// Room for the tokens of `text_bytes` bytes of text: a token per 4 bytes (Machado has one per
/// 4.9), and for a short text (a sentence a call) one per 2 bytes, so that its vector does not
/// grow.
pub fn token_room(text_bytes: usize) -> usize {
    (text_bytes / 4).max(text_bytes.min(SHORT_TEXT) / 2 + 8)
}

/// Room for the types of `text_bytes` bytes of text with a type per `bytes_per_type` bytes (a
/// long text repeats its words), and for a short text, whose tokens are nearly all distinct, one
/// per 3 bytes: its table then holds them without being rebuilt (grown from a few entries, the
/// tables of a call on one sentence were rebuilt three or four times each, 12 % of the call).
pub fn type_room(text_bytes: usize, bytes_per_type: usize) -> usize {
    (text_bytes / bytes_per_type).max(text_bytes.min(SHORT_TEXT) / 3)
}

/// Tokens of consecutive pieces, with their types interned.
#[derive(Default)]
pub struct Batch {
    /// The types, by id.
    types: Interner,
    /// Each token, as its type.
    tokens: Vec<u32>,
    /// For each piece: its end in `tokens`, and whether it ends a group.
    piece_ends: Vec<(usize, bool)>,
}

impl Batch {
    /// An empty batch with room for the tokens of about `text_bytes` bytes of text.
    pub fn with_capacity(text_bytes: usize, pieces: usize) -> Self {
        let types = type_room(text_bytes, 32);
        Batch {
            types: Interner::with_capacity(types, 8 * types),
            tokens: Vec::with_capacity(token_room(text_bytes)),
            piece_ends: Vec::with_capacity(pieces),
        }
    }

    /// Appends a token to the current piece.
    pub fn push_token(&mut self, token: &str) {
        let id = self.types.intern(token);
        self.tokens.push(id);
    }

    /// Closes the current piece; `ends_group` is given back by [`Batch::pieces`].
    pub fn end_piece(&mut self, ends_group: bool) {
        self.piece_ends.push((self.tokens.len(), ends_group));
    }

    /// Number of types.
    pub fn num_types(&self) -> usize {
        self.types.len()
    }

    /// The tokens of all pieces, as types.
    pub fn tokens(&self) -> &[u32] {
        &self.tokens
    }

    /// The spelling of type `i`.
    #[inline]
    pub fn spelling(&self, i: u32) -> &str {
        self.types.spelling(i)
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
