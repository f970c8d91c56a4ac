//! The ARPA reader on arbitrary bytes: a model or a `ModelFormat`/`Io` error, never a panic, an
//! abort or a hang; a model it accepts writes back to ARPA and reads again to the same text.
#![no_main]

use fastppl::formats::arpa::{read_arpa_from, write_arpa_to};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(model) = read_arpa_from(data, "fuzz.arpa") {
        let mut text = Vec::new();
        if write_arpa_to(&model, &mut text).is_ok() {
            let again = read_arpa_from(&text[..], "again.arpa").expect("written ARPA reads back");
            let mut text2 = Vec::new();
            write_arpa_to(&again, &mut text2).expect("written twice");
            assert_eq!(text, text2, "ARPA round trip changed the file");
        }
    }
});
