//! The compressed-file reader (gzip, xz, bzip2 or plain, detected from the first bytes) on
//! arbitrary bytes, read line by line as the ARPA reader does: data or an `Io` error, never a
//! panic; the line-length limit holds.
#![no_main]

use std::io::{BufRead, Read};

use fastppl::util::compressed::open_read;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = std::env::temp_dir().join(format!("fastppl-fuzz-{}.bin", std::process::id()));
    std::fs::write(&path, data).expect("scratch file");
    let Ok(mut reader) = open_read(&path) else {
        return;
    };
    let mut line = Vec::new();
    // (bounded: a small input may inflate a lot; 64 MiB of output is enough to exercise it)
    let mut total = 0usize;
    while total < 64 << 20 {
        line.clear();
        match reader.by_ref().take(1 << 20).read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(n) => total += n,
        }
    }
});
