//! Floats as KenLM prints them in ARPA files, without allocating: shortest round-trip digits of
//! the float32 log10 value (double-conversion's `ToShortestSingle`), decimal notation for decimal
//! exponents in [-6, 21) and `d.ddde-7` otherwise, `-99` for log 0.

use std::f64::consts::LN_10;

/// Appends a natural-log value as KenLM prints the float32 log10 of it (`0` for 0, `-99` for
/// log 0).
pub fn push_log10(out: &mut Vec<u8>, ln_value: f64) {
    push_f32(out, log10_f32(ln_value));
}

/// The float32 log10 of a natural-log value, the number KenLM prints ([`push_f32`] writes it).
#[inline]
pub fn log10_f32(ln_value: f64) -> f32 {
    (ln_value / LN_10) as f32
}

/// Appends a float32 log10 value as KenLM prints it (`0` for 0, `-99` for log 0 and NaN).
pub fn push_f32(out: &mut Vec<u8>, v: f32) {
    if v.is_nan() || v == f32::NEG_INFINITY {
        out.extend_from_slice(b"-99");
    } else if v == 0.0 {
        out.push(b'0');
    } else {
        push_f32_shortest(out, v);
    }
}

/// [`push_f32`] that remembers the text of the last values it formatted, for columns where few
/// values recur (the backoff weights of an ARPA section: a few hundred distinct ones in a million
/// lines), at `Recent::SLOTS` values by their bits.
pub struct Recent {
    /// (bits of the value, its text's length, its text) by `bits % SLOTS`; length 0: empty.
    slots: Vec<(u32, u8, [u8; Recent::TEXT])>,
}

impl Default for Recent {
    fn default() -> Self {
        Recent {
            slots: vec![(0, 0, [0; Recent::TEXT]); Recent::SLOTS],
        }
    }
}

impl Recent {
    /// Values remembered (direct-mapped by bits).
    const SLOTS: usize = 256;
    /// Bytes of text remembered per value: a float32 in scientific notation (sign, 9 digits,
    /// point, `e-45`) fits.
    const TEXT: usize = 16;

    /// Appends `v` as [`push_f32`] does.
    #[inline]
    pub fn push(&mut self, out: &mut Vec<u8>, v: f32) {
        let bits = v.to_bits();
        let (key, len, text) = &mut self.slots[bits as usize % Self::SLOTS];
        if *len == 0 || *key != bits {
            let start = out.len();
            push_f32(out, v);
            let shown = &out[start..];
            // (decimal notation reaches 22 bytes for |v| near 1e21: those are not remembered)
            if let Some(room) = text.get_mut(..shown.len()) {
                room.copy_from_slice(shown);
                (*key, *len) = (bits, shown.len() as u8);
            }
            return;
        }
        out.extend_from_slice(&text[..usize::from(*len)]);
    }
}

/// Appends a finite nonzero `v`: the shortest digits that read back to `v`; when two such digit
/// strings are equally near `v`, the one ending in an even digit, as double-conversion picks.
///
/// Most values are written as ryu writes them: where `v` cannot be a tie ([`never_a_tie`]) and
/// ryu chose decimal notation (for decimal exponents in [-6, 13), all within KenLM's [-6, 21)),
/// ryu's text is KenLM's (the same digits, placed the same way, no trailing zero: `v` is not an
/// integer). The rest take [`push_f32_general`].
fn push_f32_shortest(out: &mut Vec<u8>, v: f32) {
    if never_a_tie(v) {
        let mut buffer = ryu::Buffer::new();
        let text = buffer.format_finite(v).as_bytes();
        if !text.contains(&b'e') {
            out.extend_from_slice(text);
            return;
        }
    }
    push_f32_general(out, v);
}

/// Whether no decimal string of 9 digits or fewer lies exactly halfway between two others around
/// `v` (finite): `v = m * 2^-k` with `m` odd has the exact decimal digits of `m * 5^k`, which end
/// in 5 and number more than 10 when `k >= 15` (`5^15 > 10^10`), while a tie of float32's
/// shortest strings (9 digits at most) has 10 at most.
fn never_a_tie(v: f32) -> bool {
    let bits = v.to_bits();
    let (biased, fraction) = ((bits >> 23) & 0xFF, bits & 0x7F_FFFF);
    let (m, e2) = if biased == 0 {
        (fraction, -149)
    } else {
        (fraction | 1 << 23, biased as i32 - 150)
    };
    m != 0 && -(e2 + m.trailing_zeros() as i32) >= 15
}

/// [`push_f32_shortest`] for any finite nonzero `v`, from the digits and exponent of ryu's text.
fn push_f32_general(out: &mut Vec<u8>, v: f32) {
    let (mut digits, n, exp) = shortest_digits(v);
    let digits = &mut digits[..n];
    if is_near_tie(v, digits, exp) {
        round_tie_to_even(v, digits, exp);
    }
    if v < 0.0 {
        out.push(b'-');
    }
    if !(-6..21).contains(&exp) {
        out.push(digits[0]);
        if n > 1 {
            out.push(b'.');
            out.extend_from_slice(&digits[1..]);
        }
        out.push(b'e');
        out.extend_from_slice(format_i32(exp, &mut [0; 12]));
    } else if exp < 0 {
        out.extend_from_slice(b"0.");
        out.extend(std::iter::repeat_n(b'0', (-exp - 1) as usize));
        out.extend_from_slice(digits);
    } else {
        let int_len = exp as usize + 1;
        if n <= int_len {
            out.extend_from_slice(digits);
            out.extend(std::iter::repeat_n(b'0', int_len - n));
        } else {
            out.extend_from_slice(&digits[..int_len]);
            out.push(b'.');
            out.extend_from_slice(&digits[int_len..]);
        }
    }
}

/// The shortest round-trip decimal digits of `|v|` (finite, nonzero), how many there are, and
/// the decimal exponent of the first: |v| ~ d.ddd x 10^exp. From ryu's output ("0.001",
/// "12.5", "1.5e-7", "1e16"), normalized.
fn shortest_digits(v: f32) -> ([u8; 16], usize, i32) {
    let mut buffer = ryu::Buffer::new();
    let text = buffer.format_finite(v.abs()).as_bytes();
    let (mantissa, exponent) = match text.iter().position(|&b| b == b'e' || b == b'E') {
        Some(e) => (&text[..e], parse_i32(&text[e + 1..])),
        None => (text, 0),
    };
    let point = mantissa
        .iter()
        .position(|&b| b == b'.')
        .unwrap_or(mantissa.len());
    let mut all = [0u8; 16];
    let mut len = 0;
    for &b in mantissa.iter().filter(|b| b.is_ascii_digit()) {
        all[len] = b;
        len += 1;
    }
    let leading = all[..len].iter().take_while(|&&d| d == b'0').count();
    let trailing = all[leading..len]
        .iter()
        .rev()
        .take_while(|&&d| d == b'0')
        .count();
    let mut digits = [0u8; 16];
    let n = len - leading - trailing;
    digits[..n].copy_from_slice(&all[leading..len - trailing]);
    (digits, n, exponent + point as i32 - 1 - leading as i32)
}

fn parse_i32(text: &[u8]) -> i32 {
    let (sign, digits) = match text.first() {
        Some(b'-') => (-1, &text[1..]),
        _ => (1, text),
    };
    sign * digits
        .iter()
        .fold(0i32, |acc, &d| acc * 10 + i32::from(d - b'0'))
}

/// `x` in decimal, written at the end of `buffer`.
fn format_i32(x: i32, buffer: &mut [u8; 12]) -> &[u8] {
    let mut i = buffer.len();
    let mut rest = x.unsigned_abs();
    loop {
        i -= 1;
        buffer[i] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    if x < 0 {
        i -= 1;
        buffer[i] = b'-';
    }
    &buffer[i..]
}

/// Whether `v` may lie exactly halfway between the shortest `digits` (decimal exponent `exp`) and
/// their neighbour: a cheap float test that never misses a tie (the error of the scaling is far
/// below the 1e-3 margin), so the exact test below runs for only a few values in a million.
fn is_near_tie(v: f32, digits: &[u8], exp: i32) -> bool {
    let n = digits.len() as i32;
    let shown = digits
        .iter()
        .fold(0f64, |acc, d| acc * 10.0 + f64::from(d - b'0'));
    let scaled = f64::from(v.abs()) * 10f64.powi(n - 1 - exp);
    ((scaled - shown).abs() - 0.5).abs() < 1e-3
}

/// Replaces `digits` by the even one of two equally near candidates when `v` is an exact tie.
fn round_tie_to_even(v: f32, digits: &mut [u8], exp: i32) {
    let n = digits.len();
    // exact decimal expansion of v (f32 -> f64 is exact): a tie is "<n digits>5000..."
    let exact = format!("{:.*e}", n + 45, f64::from(v.abs()));
    let (exact_mantissa, exact_exp) = exact.split_once('e').unwrap_or((&exact, "0"));
    let exact_digits: Vec<u8> = exact_mantissa.bytes().filter(u8::is_ascii_digit).collect();
    if exact_exp.parse::<i32>().ok() == Some(exp)
        && exact_digits.len() > n
        && exact_digits[n] == b'5'
        && exact_digits[n + 1..].iter().all(|&d| d == b'0')
        && (exact_digits[n - 1] - b'0') % 2 == 0
    {
        digits.copy_from_slice(&exact_digits[..n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(v: f32) -> String {
        let mut out = Vec::new();
        push_f32_shortest(&mut out, v);
        String::from_utf8(out).unwrap()
    }

    fn log10(x: f64) -> String {
        let mut out = Vec::new();
        push_log10(&mut out, x * LN_10);
        String::from_utf8(out).unwrap()
    }

    #[test]
    #[allow(clippy::unreadable_literal)] // the values as KenLM prints them
    fn formats_like_kenlm() {
        assert_eq!(log10(-0.0000978082), "-0.0000978082");
        assert_eq!(log10(-5.302619), "-5.302619");
        assert_eq!(log10(-1.5e-7), "-1.5e-7");
        assert_eq!(log10(0.0), "0");
        assert_eq!(log10(-0.0), "0");
        let mut out = Vec::new();
        push_log10(&mut out, f64::NEG_INFINITY);
        assert_eq!(out, b"-99");
        // a tie between two shortest strings goes to the even digit, as double-conversion does
        assert_eq!(shown(-1.0 - 5.0 / 256.0), "-1.0195312");
        assert_eq!(shown(-1.0 - 37.0 / 256.0), "-1.1445312");
        assert_eq!(shown(-12.5), "-12.5");
        assert_eq!(shown(-100.0), "-100");
        assert_eq!(shown(3e-7), "3e-7");
        assert_eq!(shown(-0.000_001), "-0.000001");
        assert_eq!(shown(1e21), "1e21");
        assert_eq!(shown(-1.25e-12), "-1.25e-12");
        for x in [-0.1f32, -5.302_619, -0.006_887_945, -1e-5, -37.25, -1e-9] {
            assert_eq!(shown(x).parse::<f32>().unwrap(), x);
        }
    }

    /// Remembered texts are the ones [`push_f32`] writes, whatever the values that share a slot.
    #[test]
    fn recent_values_print_as_push_f32() {
        let mut recent = Recent::default();
        let values = (0..20_000u32).map(|i| match i % 4 {
            0 => -0.25,
            1 => f32::from_bits(0xBF00_0000 | (i * 7919 % (1 << 23))),
            2 => f32::from_bits(0xBF00_0000 | ((i % 300) << 8)),
            _ => [0.0, f32::NEG_INFINITY, -1.5e-7, -1.234_567_9e20][(i / 4 % 4) as usize],
        });
        for v in values {
            let (mut expected, mut got) = (Vec::new(), b"x".to_vec());
            push_f32(&mut expected, v);
            recent.push(&mut got, v);
            assert_eq!(&got[1..], &expected[..], "{v:e}");
        }
    }

    /// The digits and exponent from Rust's own shortest formatting (an independent algorithm).
    fn std_digits(v: f32) -> (Vec<u8>, i32) {
        let sci = format!("{:e}", v.abs());
        let (mantissa, exp) = sci.split_once('e').unwrap();
        let digits = mantissa.bytes().filter(u8::is_ascii_digit).collect();
        (digits, exp.parse().unwrap())
    }

    #[test]
    fn ryu_digits_are_the_shortest_ones() {
        // a sweep over every exponent of f32, and values near log10 probabilities
        let values = (0u32..1 << 22)
            .map(|i| f32::from_bits(i.wrapping_mul(2_654_435_761) & 0x7F7F_FFFF))
            .chain((1..200_000).map(|i| -(i as f32) * 3.7e-5));
        for v in values.filter(|v| *v != 0.0) {
            let (digits, n, exp) = shortest_digits(v);
            let (expected, expected_exp) = std_digits(v);
            // equal, except at ties (where either shortest string is right before the fix-up)
            if digits[..n] != expected[..] || exp != expected_exp {
                let (mut a, mut b) = (digits[..n].to_vec(), expected.clone());
                round_tie_to_even(v, &mut a, exp);
                round_tie_to_even(v, &mut b, expected_exp);
                assert_eq!((a, exp), (b, expected_exp), "{v:e}");
            }
        }
    }

    #[test]
    fn the_tie_prefilter_misses_no_tie() {
        // every f32 in [-128, 0) whose low mantissa bits make a tie possible, plus a sweep of all
        // exponents: where the exact test changes the digits, the float test must have fired
        let mut changed = 0;
        let bits = (0u32..1 << 20)
            .map(|i| 0xC000_0000 | (i << 3))
            .chain((0u32..1 << 16).map(|i| 0xB000_0000 | (i * 12_345)));
        for b in bits {
            let v = f32::from_bits(b);
            let (digits, exp) = std_digits(v);
            let mut even = digits.clone();
            round_tie_to_even(v, &mut even, exp);
            if even != digits {
                changed += 1;
                assert!(is_near_tie(v, &digits, exp), "missed the tie at {v:e}");
            }
        }
        assert!(changed > 0, "the sweep should meet some ties");
    }

    /// The fast path writes what the general one does, wherever it applies.
    #[test]
    fn ryu_text_is_kenlm_text_where_taken() {
        let values = (0u32..1 << 22)
            .map(|i| f32::from_bits(i.wrapping_mul(2_654_435_761)))
            .chain((1..200_000).map(|i| -(i as f32) * 3.7e-5))
            .chain([
                -1.0 - 5.0 / 256.0,
                0.1,
                -1e-6,
                -9.99e-7,
                1e13,
                1.5e-45,
                -3.4e38,
            ]);
        let mut fast_taken = 0;
        for v in values.filter(|v| v.is_finite() && *v != 0.0) {
            let (mut got, mut expected) = (Vec::new(), Vec::new());
            push_f32_shortest(&mut got, v);
            push_f32_general(&mut expected, v);
            assert_eq!(got, expected, "{v:e}");
            fast_taken += usize::from(never_a_tie(v));
        }
        assert!(fast_taken > 1_000_000, "{fast_taken}");
        // ties are never taken for the fast path
        assert!(!never_a_tie(-1.0 - 5.0 / 256.0) && !never_a_tie(-12.5) && !never_a_tie(-100.0));
    }
}
