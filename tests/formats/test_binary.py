"""fastppl's binary model format: exact round trips, and bad files raise instead of crashing."""

from __future__ import annotations

import struct
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastppl import Corpus, FastpplError, NGramModel
from fastppl.errors import InvalidArgumentError, ModelFileNotFoundError, ModelFormatError

MAGIC = b"\x89FPPL\r\n\x1a"
HEADER = 80  # fixed part of the header

TOY = [
    ["a", "b", "c", "a", "b"],
    ["b", "c", "d", "a"],
    ["a", "a", "b", "c", "d", "e"],
    ["c", "d", "e", "f"],
    ["b", "c", "a", "d"],
]


@pytest.fixture(scope="module")
def train(machado_train_head_path: Path) -> Corpus:
    lines = machado_train_head_path.read_text(encoding="utf-8").splitlines()
    return Corpus.from_sentences([line.split() for line in lines if line.split()])


Heldout = tuple[Corpus, list[list[str]]]


@pytest.fixture(scope="module")
def heldout(machado_test_head_path: Path) -> Heldout:
    lines = machado_test_head_path.read_text(encoding="utf-8").splitlines()[:400]
    sentences = [s.split() for s in lines if s.split()]
    return Corpus.from_sentences(sentences), sentences


def _bits(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a, dtype=np.float64).tobytes()


def assert_same_model(a: NGramModel, b: NGramModel, heldout: Heldout) -> None:
    """Everything observable is equal, floats bit for bit."""
    assert (a.order, a.bos_eos, a.smoothing, a.normalized, a.vocab_size) == (
        b.order,
        b.bos_eos,
        b.smoothing,
        b.normalized,
        b.vocab_size,
    )
    assert a.ngram_counts == b.ngram_counts
    assert a.discounts == b.discounts
    vocab = a.vocab()
    assert vocab == b.vocab()
    corpus, sentences = heldout
    for s in sentences[:50]:
        for i, w in enumerate(s[: a.order + 2]):
            ctx = s[max(0, i - a.order + 1) : i]
            assert a.logprob(w, ctx).hex() == b.logprob(w, ctx).hex()
            ngram = s[max(0, i - a.order + 1) : i + 1]
            assert a.count(ngram) == b.count(ngram)
            assert a.count(ngram[-2:]) == b.count(ngram[-2:])
        assert _bits(a.logprobs(s)) == _bits(b.logprobs(s))
    kw: dict[str, Any] = {"token_logprobs": True, "allow_unnormalized": True}
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for oov in ("unk", "skip"):
            ra, rb = a.evaluate(corpus, oov, **kw), b.evaluate(corpus, oov, **kw)
            assert ra.log_prob.hex() == rb.log_prob.hex()
            assert (ra.num_tokens, ra.num_oov) == (rb.num_tokens, rb.num_oov)
            assert _bits(ra.sentence_log_probs) == _bits(rb.sentence_log_probs)
            assert ra.token_logprobs is not None and rb.token_logprobs is not None
            assert _bits(ra.token_logprobs) == _bits(rb.token_logprobs)


FITS = [
    (3, "modified_kneser_ney", True, {}),
    (5, "modified_kneser_ney", True, {}),
    (4, "modified_kneser_ney", False, {}),
    (3, "kneser_ney", True, {"discount": 0.6}),
    (3, "witten_bell", True, {}),
    (3, "mle", True, {}),
    (2, "additive", False, {"k": 0.25}),
    (3, "stupid_backoff", True, {"alpha": 0.3}),
    (1, "laplace", True, {}),
]


@pytest.mark.parametrize(("order", "smoothing", "bos_eos", "params"), FITS)
def test_fitted_round_trip(
    order: int,
    smoothing: Any,
    bos_eos: bool,
    params: dict[str, Any],
    train: Corpus,
    heldout: Heldout,
    tmp_path: Path,
) -> None:
    model = NGramModel.fit(train, order=order, smoothing=smoothing, bos_eos=bos_eos, **params)
    path = tmp_path / "model.fppl"
    model.save(path)
    assert path.read_bytes()[:8] == MAGIC
    for verify in (True, False):
        assert_same_model(model, NGramModel.load(path, verify=verify), heldout)
    # training counts survive
    first = train[0]
    assert NGramModel.load(str(path)).count(first[:1]) == model.count(first[:1]) > 0
    # a loaded model saves to the very same bytes
    NGramModel.load(path).save(tmp_path / "again.fppl")
    assert (tmp_path / "again.fppl").read_bytes() == path.read_bytes()


@pytest.mark.parametrize("name", ["machado.o3.arpa.gz", "machado-small.o5.arpa.gz"])
def test_arpa_round_trip(name: str, heldout: Heldout, tmp_path: Path, arpa_dir: Path) -> None:
    model = NGramModel.from_arpa(arpa_dir / name)
    path = tmp_path / "model.fppl"
    model.save(path)
    loaded = NGramModel.load(path)
    assert_same_model(model, loaded, heldout)
    assert loaded.smoothing == "arpa" and loaded.count(["the"]) == 0
    # and it writes back the same ARPA text
    model.to_arpa(tmp_path / "a.arpa")
    loaded.to_arpa(tmp_path / "b.arpa")
    assert (tmp_path / "a.arpa").read_bytes() == (tmp_path / "b.arpa").read_bytes()


def test_saving_over_a_loaded_model_keeps_it_working(tmp_path: Path) -> None:
    corpus = Corpus.from_sentences(TOY)
    one = NGramModel.fit(corpus, order=3, smoothing="kneser_ney")
    other = NGramModel.fit(corpus, order=2, smoothing="mle")
    path = tmp_path / "m.fppl"
    one.save(path)
    loaded = NGramModel.load(path)
    expected = loaded.logprobs(["a", "b", "c"]).tolist()
    other.save(path)  # replaces the file; the mapped one stays intact
    assert loaded.logprobs(["a", "b", "c"]).tolist() == expected
    assert NGramModel.load(path).order == 2


@pytest.mark.parametrize("name", ["m.gz", "m.fppl.xz", "m.BZ2", "m.fppl.zst", "m.lz4", "m.7z"])
def test_a_compressed_name_is_refused(tmp_path: Path, name: str) -> None:
    """save wrote the uncompressed (memory-mappable) format under a name that says the file is
    compressed; now it refuses the name, before anything is written."""
    model = NGramModel.fit(Corpus.from_sentences(TOY), order=2, smoothing="mle")
    path = tmp_path / name
    with pytest.raises(InvalidArgumentError) as info:
        model.save(path)
    assert str(info.value) == (
        f"{path}: fastppl's binary models are not compressed (they are memory-mapped when "
        "loaded): name it .fppl, or write the model as ARPA, which .gz, .xz and .bz2 compress"
    )
    assert list(tmp_path.iterdir()) == []
    model.save(tmp_path / "m.gz.fppl")  # (a compression's name inside the name is no matter)


# ---- bad files ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def small_file(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    model = NGramModel.fit(Corpus.from_sentences(TOY), order=3, smoothing="modified_kneser_ney",
                           discount_fallback=True)  # fmt: skip
    path = tmp_path_factory.mktemp("bin") / "small.fppl"
    model.save(path)
    return path.read_bytes()


def _load_bytes(data: bytes, path: Path, verify: bool = True) -> NGramModel:
    path.write_bytes(data)
    return NGramModel.load(path, verify=verify)


def _format_error(data: bytes, path: Path, verify: bool = True) -> ModelFormatError:
    with pytest.raises(ModelFormatError) as info:
        _load_bytes(data, path, verify)
    assert info.value.path == str(path)
    assert str(path) in str(info.value)
    return info.value


def test_named_errors(small_file: bytes, tmp_path: Path) -> None:
    f = tmp_path / "bad.fppl"
    assert "empty" in str(_format_error(b"", f))
    assert "truncated" in str(_format_error(small_file[:40], f))
    assert "truncated" in str(_format_error(small_file[:-1], f))
    assert "magic" in str(_format_error(b"X" + small_file[1:], f))
    newer = small_file[:8] + struct.pack("<I", 2) + small_file[12:]
    assert "newer" in str(_format_error(newer, f))
    assert "newer" in str(_format_error(newer, f, verify=False))
    swapped = small_file[:12] + struct.pack(">I", 0x01020304) + small_file[16:]
    assert "endianness" in str(_format_error(swapped, f, verify=False))
    flipped = bytearray(small_file)
    flipped[-1] ^= 0xFF
    assert "checksum" in str(_format_error(bytes(flipped), f))
    longer = small_file + b"\0" * 64
    assert "says" in str(_format_error(longer, f))
    # an ARPA file is not a binary model
    arpa = tmp_path / "model.arpa"
    NGramModel.fit(Corpus.from_sentences(TOY), order=2, smoothing="witten_bell").to_arpa(arpa)
    with pytest.raises(ModelFormatError, match="magic"):
        NGramModel.load(arpa)
    with pytest.raises(IsADirectoryError) as raised:
        NGramModel.load(tmp_path)
    assert raised.value.filename == str(tmp_path)
    with pytest.raises(ModelFileNotFoundError):
        NGramModel.load(tmp_path / "missing.fppl")
    with pytest.raises(FastpplError):
        NGramModel.load(f, verify="yes")  # type: ignore[arg-type]


def test_every_truncation_and_header_flip_is_an_error(small_file: bytes, tmp_path: Path) -> None:
    f = tmp_path / "bad.fppl"
    for cut in range(len(small_file)):
        for verify in (True, False):
            with pytest.raises(ModelFormatError):
                _load_bytes(small_file[:cut], f, verify)
    for i in range(len(small_file)):
        data = bytearray(small_file)
        data[i] ^= 0x41
        with pytest.raises(ModelFormatError):
            _load_bytes(bytes(data), f)


def _slot_region(data: bytes) -> tuple[int, int]:
    """Byte range of the first slot table (section 5 of the section table)."""
    (header_len,) = struct.unpack_from("<Q", data, 32)
    (order, nsections) = struct.unpack_from("<II", data, 40)
    table = header_len - 40 * nsections
    _, _, offset, length, _, _ = struct.unpack_from("<IIQQQQ", data, table + 40 * 5)
    assert order >= 2 and length > 0
    return offset, offset + length


def _mutants(small_file: bytes, which: str) -> list[bytes]:
    """Corrupt copies of a saved model: a flipped byte every 7 in the header or the first slot
    table, or ("full") that table overwritten with occupied slots only, so that a lookup finds
    no empty slot to stop at."""
    if which == "full":
        start, end = _slot_region(small_file)
        data = bytearray(small_file)
        data[start:end] = b"\x01" * (end - start)
        return [bytes(data)]
    start, end = (0, HEADER + 200) if which == "header" else _slot_region(small_file)
    mutants = []
    for k, i in enumerate(range(start, min(end, len(small_file)), 7)):
        data = bytearray(small_file)
        data[i] ^= 0x10 << (k % 4)
        mutants.append(bytes(data))
    return mutants


@pytest.mark.parametrize("which", ["header", "slots", "full"])
def test_unverified_corruption_loads_or_raises_in_a_subprocess(
    which: str, small_file: bytes, tmp_path: Path
) -> None:
    """verify=False trusts the body: a corrupt file loads (wrong numbers) or raises a
    FastpplError, in every later call too (scoring, to_arpa, save, count): no panic, no crash,
    no endless lookup."""
    paths = []
    for k, data in enumerate(_mutants(small_file, which)):
        p = tmp_path / f"flip{k}.fppl"
        p.write_bytes(data)
        paths.append(str(p))
    script = textwrap.dedent(
        """
        import sys, warnings
        from fastppl import Corpus, NGramModel, FastpplError
        warnings.simplefilter("ignore")
        out = sys.argv[1]
        text = Corpus.from_sentences([["a", "b", "c"], ["zzz", "d", "a", "b"]])
        loaded = failed = 0
        for p in sys.argv[2:]:
            try:
                m = NGramModel.load(p, verify=False)
            except FastpplError:
                failed += 1
                continue
            loaded += 1
            m.logprobs(["a", "b", "c", "zzz", "d"])
            m.logprob("c", ["a", "b"])
            m.count(["a", "b"])
            m.evaluate(text)
            m.save(out + ".fppl")
            try:
                m.to_arpa(out + ".arpa")
            except FastpplError:
                pass
        print(loaded, failed)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "out"), *paths],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    loaded, failed = map(int, out.stdout.split())
    assert loaded + failed == len(paths)
    if which != "header":
        assert loaded > 0  # the body is not checked without verify


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    edits=st.lists(
        st.tuples(st.integers(0, 10**6), st.binary(min_size=1, max_size=8)), min_size=1, max_size=4
    ),
    cut=st.none() | st.integers(0, 10**6),
)
def test_fuzz_mutations_are_caught(
    edits: list[tuple[int, bytes]], cut: int | None, small_file: bytes, tmp_path: Path
) -> None:
    data = bytearray(small_file)
    for at, patch in edits:
        i = at % len(data)
        data[i : i + len(patch)] = patch[: len(data) - i]
    if cut is not None:
        del data[cut % (len(data) + 1) :]
    path = tmp_path / "fuzz.fppl"
    if bytes(data) == small_file:
        NGramModel.load(_write(path, data))
        return
    with pytest.raises(ModelFormatError):
        _load_bytes(bytes(data), path)
    # unverified, a mutation of the header alone is still caught or harmless
    header_only = bytearray(small_file)
    for at, patch in edits:
        i = at % HEADER
        header_only[i : i + len(patch)] = patch[: HEADER - i]
    try:
        model = _load_bytes(bytes(header_only), path, verify=False)
    except FastpplError:
        return
    model.logprobs(["a", "b", "c"])


def _write(path: Path, data: bytes | bytearray) -> Path:
    path.write_bytes(bytes(data))
    return path


def test_mmap_false_survives_the_file_being_rewritten_in_place(tmp_path: Path) -> None:
    """load(mmap=False) reads the file into memory: truncating or overwriting it in place
    afterwards (what another tool might do) changes nothing, where a mapping would fault."""
    corpus = Corpus.from_sentences([["a", "b", "c"], ["b", "c", "d", "a"]] * 5)
    model = NGramModel.fit(corpus, order=3, smoothing="kneser_ney")
    path = tmp_path / "m.fppl"
    model.save(path)
    expected = model.logprobs(["a", "b", "c", "d"])
    for verify in (True, False):
        loaded = NGramModel.load(path, verify=verify, mmap=False)
        size = path.stat().st_size
        with open(path, "r+b") as f:  # in place: same inode
            f.truncate(0)
            f.write(b"\xff" * size)
        np.testing.assert_array_equal(loaded.logprobs(["a", "b", "c", "d"]), expected)
        assert loaded.evaluate(corpus).perplexity == model.evaluate(corpus).perplexity
        model.save(path)
    assert NGramModel.from_file(path, mmap=False).order == 3
    with pytest.raises(FastpplError):
        NGramModel.load(path, mmap="no")
