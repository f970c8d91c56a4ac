//! Texts for the tests of the tokenizer's parts: pieces drawn at random and joined, so that
//! the characters a rule looks at fall at every place and beside each other.

/// `count` texts of 0 to 23 `pieces` each, drawn by a xorshift generator from a fixed seed (the
/// same texts on every run).
pub fn random_texts<'a>(pieces: &'a [&'a str], count: usize) -> impl Iterator<Item = String> + 'a {
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    (0..count).map(move |_| {
        let mut text = String::new();
        for _ in 0..(state % 24) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            text.push_str(pieces[(state % pieces.len() as u64) as usize]);
        }
        text
    })
}
