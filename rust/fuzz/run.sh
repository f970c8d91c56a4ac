#!/usr/bin/env bash
# Builds the fuzz targets on the stable toolchain (libFuzzer from the libfuzzer-sys crate, with
# rustc's SanitizerCoverage passes for the coverage feedback: no nightly, no cargo-fuzz) and
# runs each for SECONDS seconds (default 20) from the seed corpora in seeds/<target>/ (copied to
# a scratch corpus, which grows). Exits non-zero on a crash, a leak of the time limit or an
# abort; the crashing input is saved in artifacts/<target>/ with the command to replay it.
#   rust/fuzz/run.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
seconds=${1:-20}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(arpa_reader binary_loader compressed_reader kenlm_reader tokenizers)

export RUSTFLAGS="--cfg fuzzing -Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares -Cdebug-assertions -Coverflow-checks"
# an explicit --target keeps these flags off build scripts and proc macros (host artifacts)
host=$(rustc -vV | sed -n 's/^host: //p')
cargo build --release --bins --target-dir target --target "$host"
bin=target/$host/release

status=0
for t in "${targets[@]}"; do
  corpus=$(mktemp -d)
  cp seeds/"$t"/* "$corpus"/
  mkdir -p artifacts/"$t"
  echo "== $t: ${seconds}s"
  # the targets that need a file write it under TMPDIR: a scratch folder removed with the corpus
  mkdir "$corpus.tmp"
  # -rss_limit_mb: a reader that allocates from an untrusted count fails here; -timeout: a hang
  if ! TMPDIR="$corpus.tmp" "$bin/$t" "$corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -max_len=65536 -artifact_prefix=artifacts/"$t"/ -print_final_stats=1 2>"$corpus.log"; then
    status=1
    tail -n 40 "$corpus.log"
    echo "fuzz target $t failed: replay with rust/fuzz/$bin/$t rust/fuzz/artifacts/$t/<file>" >&2
  fi
  grep -E "stat::number_of_executed_units|stat::new_units_added|cov:" "$corpus.log" | tail -n 3
  rm -rf "$corpus" "$corpus.log" "$corpus.tmp"
done
exit $status
