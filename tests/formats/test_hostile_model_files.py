"""Hostile model files (issue 10, "bounded resources from untrusted files").

Each case runs in a subprocess, under a memory limit where the attack is about memory, and the
test asserts on its exit status and message: a crash (SIGABRT, a panic) or a hang is a failure,
a clear ``FastpplError`` is a pass.
"""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

TINY = (
    "\\data\\\nngram 1=5\nngram 2=4\n\n\\1-grams:\n-1.0\t<unk>\t0\n-99\t<s>\t-0.5\n"
    "-0.5\t</s>\t0\n-0.4\ta\t-0.3\n-0.6\tb\t-0.2\n\n\\2-grams:\n-0.2\t<s> a\n"
    "-0.3\ta b\n-0.1\tb </s>\n-0.4\ta </s>\n\n\\end\\\n"
)

#: Address-space limit for the memory attacks: ample for the interpreter and the extension,
#: far below what the attacks used to allocate.
MEMORY_LIMIT = 1536 << 20

SCRIPT = textwrap.dedent(
    """
    import resource, sys
    from fastppl import NGramModel
    from fastppl.errors import FastpplError
    kind, path, limit = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if limit:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    try:
        NGramModel.from_arpa(path) if kind == "arpa" else NGramModel.load(path)
    except (FastpplError, OSError) as e:
        print("refused:", type(e).__name__, e)
    else:
        print("loaded")
    """
)


def _load_in_subprocess(kind: str, path: Path, limit: int = 0) -> tuple[str, float]:
    """Loads `path` in a fresh interpreter; returns its output and the seconds it took."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, kind, str(path), str(limit)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    elapsed = time.perf_counter() - start
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr[-2000:]}"
    return done.stdout.strip(), elapsed


@pytest.mark.parametrize("count", ["999999999999", "18446744073709551615", "100000000"])
def test_huge_header_count_is_a_clear_error(tmp_path: Path, count: str) -> None:
    """The SIGABRT, capacity-overflow and 3.6 GB headers: a quick format error in bounded memory."""
    path = tmp_path / "huge.arpa"
    path.write_text(TINY.replace("ngram 2=4", f"ngram 2={count}"))
    out, elapsed = _load_in_subprocess("arpa", path, MEMORY_LIMIT)
    assert out.startswith("refused: ModelFormatError"), out
    assert f"the header announces {count}" in out
    assert elapsed < 20


def test_header_count_below_the_truth_still_reads(tmp_path: Path) -> None:
    """Counts are hints for allocation only: a right count still reads."""
    path = tmp_path / "tiny.arpa"
    path.write_text(TINY)
    out, _ = _load_in_subprocess("arpa", path)
    assert out == "loaded"


def test_one_line_gzip_bomb_is_refused_under_a_memory_limit(tmp_path: Path) -> None:
    """2 GiB of one line (32 gzip members of 64 MiB each, 2 MB on disk) under a 1.5 GiB limit."""
    member = gzip.compress(b"x" * (64 << 20), compresslevel=1)
    path = tmp_path / "bomb.arpa.gz"
    path.write_bytes(member * 32)
    out, _ = _load_in_subprocess("arpa", path, MEMORY_LIMIT)
    assert out.startswith("refused: ModelFormatError"), out
    assert "line 1: line longer than 1048576 bytes" in out


@pytest.mark.parametrize("kind", ["arpa", "binary"])
def test_fifo_and_directory_are_refused_at_once(tmp_path: Path, kind: str) -> None:
    """Opening a FIFO would block until a writer comes: it is refused before it is opened."""
    fifo = tmp_path / "model.fifo"
    os.mkfifo(fifo)
    for path in (fifo, tmp_path):
        out, elapsed = _load_in_subprocess(kind, path)
        assert out.startswith("refused:"), out
        assert "regular file" in out or "IsADirectoryError" in out, out
        assert elapsed < 10  # interpreter start-up included; the refusal itself is immediate


def test_sparse_file_with_a_wrong_magic_is_refused_within_a_second(tmp_path: Path) -> None:
    """6 GB of holes after a wrong magic: the header is read before anything is mapped."""
    path = tmp_path / "sparse.bin"
    with path.open("wb") as f:
        f.write(b"NOTMODEL" + bytes(120))
        f.truncate(6 << 30)
    if os.stat(path).st_blocks * 512 > 1 << 30:
        pytest.skip("this file system does not keep sparse files sparse")
    out, elapsed = _load_in_subprocess("binary", path, MEMORY_LIMIT)
    assert out.startswith("refused: ModelFormatError"), out
    assert "wrong magic" in out
    assert elapsed < 1 + _startup_seconds()


def _startup_seconds() -> float:
    """Seconds a fresh interpreter takes to import fastppl (subtracted from the 1 s budget)."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import fastppl"], check=True)
    return time.perf_counter() - start


def test_memory_limit_is_effective() -> None:
    """The limit used above really binds: allocating 2 GiB under it fails."""
    code = (
        "import resource;"
        f"resource.setrlimit(resource.RLIMIT_AS, ({MEMORY_LIMIT}, {MEMORY_LIMIT}));"
        "b = bytearray(2 << 30)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, check=False)
    assert done.returncode != 0
    assert b"MemoryError" in done.stderr
