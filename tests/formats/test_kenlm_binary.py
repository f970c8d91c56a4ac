"""KenLM's binary files (``build_binary`` output) against KenLM's own scores of them.

``../shared/arpa/kenlm-binary/`` holds ``machado.o3.arpa.gz`` built four ways (probing, trie,
quantized trie ``-q 8 -b 8``, trie with array-compressed pointers ``-a 22``) and ``query``'s
outputs on each; the ``kenlm`` module reads the same files, independently of fastppl. The
probing file is scored in place (see ``test_kenlm_binary_fixtures.py`` for the committed small
files of every kind). Without the
shared folder, small tries written by ``helpers.kenlm_trie`` (checked with the ``kenlm`` module)
from models fitted on ``tests/data`` test the reader and its errors.
"""

from __future__ import annotations

import math
import random
import re
from pathlib import Path

import numpy as np
import pytest

import fastppl.kenlm
from fastppl import Corpus, NGramModel
from fastppl.cli import main
from fastppl.errors import ModelFileNotFoundError, ModelFormatError
from helpers.arpa_text import read_arpa
from helpers.kenlm_trie import write_trie

LN10 = math.log(10.0)

#: The tries fastppl reads, and whether their values are the ARPA file's (not quantized).
TRIES = {"trie": True, "trie-a22": True, "trie-q8b8": False}

#: Bytes of the header of an order-3 file: 88 (magic and test values) + 20 (parameters) +
#: 3 x 8 (counts), aligned to 8.
HEADER_BYTES = 136

#: Sentences of ``tests/data/machado.test.head-500.txt`` the small models are fitted on (the
#: rest is scored).
SMALL_TRAIN = 300

#: Their estimator: Kneser-Ney (one discount per order: 300 sentences are too few for modified
#: Kneser-Ney's count-of-counts at order 5).
SMALL_SMOOTHING = "kneser_ney"


def _binary(arpa_dir: Path, kind: str) -> Path:
    return arpa_dir / "kenlm-binary" / f"machado.o3.{kind}.bin"


def _query_outputs(arpa_dir: Path, kind: str) -> tuple[dict[str, float], np.ndarray, np.ndarray]:
    """``query -v summary`` (as a dict) and ``query -v sentence`` (totals, OOVs) of one file."""
    stem = arpa_dir / "kenlm-binary" / f"machado.o3.{kind}"
    summary = {}
    for line in Path(f"{stem}.query-summary.txt").read_text().splitlines():
        key, value = line.split(":\t")
        summary[key] = float(value)
    totals, oovs = [], []
    for line in Path(f"{stem}.query-sentences.txt").read_text().splitlines():
        m = re.fullmatch(r"Total: (\S+) OOV: (\d+)", line)
        assert m, line
        totals.append(float(m[1]))
        oovs.append(int(m[2]))
    return summary, np.array(totals), np.array(oovs)


@pytest.fixture(scope="module")
def test_corpus(arpa_dir: Path) -> Corpus:
    return Corpus.from_file(
        arpa_dir / "machado.test.txt", tokenizer="whitespace", sentences="lines"
    )


@pytest.fixture(scope="module", params=sorted(TRIES))
def trie(request, arpa_dir: Path) -> tuple[str, NGramModel]:
    return request.param, NGramModel.from_kenlm_binary(_binary(arpa_dir, request.param))


@pytest.fixture(scope="module", params=["probing", *sorted(TRIES)])
def scored(request, arpa_dir: Path) -> tuple[str, NGramModel]:
    """Every shared file: the probing one scored in place, the tries converted."""
    return request.param, NGramModel.from_kenlm_binary(_binary(arpa_dir, request.param))


def test_scores_are_kenlm_query_on_the_same_file(scored, arpa_dir: Path, test_corpus) -> None:
    kind, model = scored
    summary, totals, oovs = _query_outputs(arpa_dir, kind)
    incl = model.evaluate(test_corpus, oov="unk")
    excl = model.evaluate(test_corpus, oov="skip")
    assert incl.num_tokens == summary["Tokens"]
    assert incl.num_oov == excl.num_oov == summary["OOVs"]
    assert incl.perplexity == pytest.approx(summary["Perplexity including OOVs"], rel=1e-6)
    assert excl.perplexity == pytest.approx(summary["Perplexity excluding OOVs"], rel=1e-6)
    # KenLM sums a sentence in float32 (see tests/parity/test_kenlm_parity.py for the tolerance)
    assert len(totals) == len(test_corpus)
    np.testing.assert_allclose(incl.sentence_log_probs / LN10, totals, rtol=1e-6, atol=1e-5)
    np.testing.assert_array_equal(incl.sentence_num_tokens - excl.sentence_num_tokens, oovs)


def test_the_quantized_file_scores_differently_from_the_arpa(arpa_dir: Path) -> None:
    """The quantized trie's scores are its own (bin centers), not the ARPA file's."""
    quantized = _query_outputs(arpa_dir, "trie-q8b8")[0]["Perplexity including OOVs"]
    exact = _query_outputs(arpa_dir, "trie")[0]["Perplexity including OOVs"]
    assert abs(quantized - exact) / exact > 1e-3


@pytest.fixture(scope="module")
def arpa_ngrams(arpa_dir: Path):
    """The header counts and n-grams of the ARPA file the binaries were built from."""
    return read_arpa(arpa_dir / "machado.o3.arpa.gz")


def test_ngrams_are_those_of_the_arpa_file(trie, arpa_ngrams, tmp_path: Path) -> None:
    kind, model = trie
    header, want = arpa_ngrams
    out = tmp_path / f"{kind}.arpa"
    model.to_arpa(out)
    got_header, got = read_arpa(out)
    assert got_header == header
    assert model.ngram_counts == [header[1] - 1, header[2], header[3]]
    for m in (1, 2, 3):
        assert got[m].keys() == want[m].keys(), m
    if not TRIES[kind]:
        return
    # float32 values written with the shortest digits: equal strings, equal floats
    for m in (1, 2, 3):
        assert got[m] == want[m], m


def test_kenlm_module_full_scores_on_the_same_file(scored, arpa_dir: Path) -> None:
    kenlm = pytest.importorskip("kenlm")
    kind, _ = scored
    path = str(_binary(arpa_dir, kind))
    ours, theirs = fastppl.kenlm.Model(path), kenlm.Model(path)
    assert ours.order == theirs.order == 3
    lines = (arpa_dir / "machado.test.txt").read_text(encoding="utf-8").splitlines()
    for line in [*lines[:500], "xyzzy palavra_nenhuma ."]:
        got = list(ours.full_scores(line))
        want = list(theirs.full_scores(line))
        assert [(n, oov) for _, n, oov in got] == [(n, oov) for _, n, oov in want], line
        np.testing.assert_allclose([p for p, _, _ in got], [p for p, _, _ in want], atol=1e-6)


def test_files_of_every_kind_are_recognized(arpa_dir: Path, capsys) -> None:
    path = _binary(arpa_dir, "trie")
    model = NGramModel.from_file(path)
    assert model.ngram_counts == NGramModel.from_kenlm_binary(path).ngram_counts
    assert main(["eval", str(path), str(arpa_dir / "machado.test.txt")]) == 0
    out = dict(line.split(":\t") for line in capsys.readouterr().out.strip().splitlines())
    summary = _query_outputs(arpa_dir, "trie")[0]
    assert float(out["Perplexity including OOVs"]) == pytest.approx(
        summary["Perplexity including OOVs"], rel=1e-6
    )


def test_probing_files_cannot_be_converted(arpa_dir: Path, tmp_path: Path) -> None:
    """A probing file is scored in place; writing it in another format says why it cannot."""
    path = _binary(arpa_dir, "probing")
    model = NGramModel.from_file(path)
    with pytest.raises(ModelFormatError, match=r"probing binary .* rebuild the binary as a trie"):
        model.to_arpa(tmp_path / "m.arpa")


def test_progress_is_reported(arpa_dir: Path, tmp_path: Path) -> None:
    """Opening maps the file (nothing to report); writing it as ARPA converts it first."""
    seen = []
    model = NGramModel.from_kenlm_binary(_binary(arpa_dir, "trie"))
    model.to_arpa(tmp_path / "m.arpa", progress=lambda stage, done, total: seen.append(stage))
    assert "reading KenLM binary" in seen


# ---- malformed files ---------------------------------------------------------------------


def _load_bytes(tmp_path: Path, data: bytes, name: str = "m.bin") -> NGramModel:
    path = tmp_path / name
    path.write_bytes(data)
    return NGramModel.from_kenlm_binary(path)


# ---- small tries written here (no shared data needed) --------------------------------------


@pytest.fixture(scope="module")
def small_text(machado_test_head_path: Path) -> list[str]:
    return machado_test_head_path.read_text(encoding="utf-8").splitlines()


@pytest.fixture(scope="module", params=[2, 3, 4, 5])
def small_arpa(request, small_text, tmp_path_factory) -> tuple[Path, dict]:
    """An ARPA file of order ``request.param`` and its n-grams."""
    folder = tmp_path_factory.mktemp(f"order{request.param}")
    corpus = Corpus.from_sentences([line.split() for line in small_text[:SMALL_TRAIN]])
    arpa = folder / "m.arpa"
    NGramModel.fit(corpus, order=request.param, smoothing=SMALL_SMOOTHING).to_arpa(arpa)
    return arpa, read_arpa(arpa)[1]


#: build_binary's trie options the writer reproduces: quantization bits (-q, -b), pointer
#: compression budget (-a); "q4b3-a3" has few bins and pointers compressed to a few low bits.
VARIANTS = {
    "plain": {},
    "q8b8": {"quantize": (8, 8)},
    "a22": {"array_bits": 22},
    "q4b3-a3": {"quantize": (4, 3), "array_bits": 3},
}


def _write(arpa: tuple[Path, dict], tmp_path: Path, variant: str) -> Path:
    path = tmp_path / f"{variant}.bin"
    path.write_bytes(write_trie(arpa[1], **VARIANTS[variant]))
    return path


def test_written_tries_are_what_kenlm_reads(small_arpa, small_text, tmp_path: Path) -> None:
    """The writer's unquantized files score in the kenlm module exactly as their ARPA files."""
    kenlm = pytest.importorskip("kenlm")
    for variant in ("plain", "a22"):
        from_trie = kenlm.Model(str(_write(small_arpa, tmp_path, variant)))
        from_arpa = kenlm.Model(str(small_arpa[0]))
        for line in small_text[SMALL_TRAIN:]:
            assert list(from_trie.full_scores(line)) == list(from_arpa.full_scores(line)), line


def test_a_trie_reads_as_its_arpa_file(small_arpa, small_text, tmp_path: Path) -> None:
    for variant in ("plain", "a22"):
        ours = NGramModel.from_kenlm_binary(_write(small_arpa, tmp_path, variant))
        reference = NGramModel.from_arpa(small_arpa[0])
        assert ours.order == reference.order
        assert ours.ngram_counts == reference.ngram_counts
        ours.to_arpa(tmp_path / "back.arpa")
        assert read_arpa(tmp_path / "back.arpa") == read_arpa(small_arpa[0])
        # (the trie is scored in place, summing float32 values as KenLM does)
        for line in small_text[SMALL_TRAIN:]:
            words = line.split()
            np.testing.assert_allclose(
                ours.full_scores(words, 10).logprob,
                reference.full_scores(words, 10).logprob,
                rtol=0,
                atol=1e-6,
            )


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_every_variant_scores_as_the_kenlm_module(
    small_arpa, small_text, tmp_path: Path, variant: str
) -> None:
    """Each kind of trie (quantized and compressed together too, which the shared files lack),
    read by fastppl and by the kenlm module: the same scores per token."""
    kenlm = pytest.importorskip("kenlm")
    path = str(_write(small_arpa, tmp_path, variant))
    ours, theirs = fastppl.kenlm.Model(path), kenlm.Model(path)
    arpa_model = NGramModel.from_arpa(small_arpa[0])
    quantized_away = 0
    for line in small_text[SMALL_TRAIN:]:
        got, want = list(ours.full_scores(line)), list(theirs.full_scores(line))
        assert [(n, oov) for _, n, oov in got] == [(n, oov) for _, n, oov in want], line
        np.testing.assert_allclose([p for p, _, _ in got], [p for p, _, _ in want], atol=1e-6)
        exact = arpa_model.full_scores(line.split(), 10).logprob
        quantized_away += not np.allclose([p for p, _, _ in got], exact, atol=1e-6)
    assert (quantized_away > 0) == ("quantize" in VARIANTS[variant])


@pytest.fixture(scope="module")
def trie_bytes(small_text, tmp_path_factory) -> bytes:
    """An order-3 trie (the header layout the tests below name bytes of)."""
    folder = tmp_path_factory.mktemp("trie-bytes")
    corpus = Corpus.from_sentences([line.split() for line in small_text[:SMALL_TRAIN]])
    NGramModel.fit(corpus, order=3, smoothing=SMALL_SMOOTHING).to_arpa(folder / "m.arpa")
    return write_trie(read_arpa(folder / "m.arpa")[1])


def test_truncated_files(trie_bytes: bytes, tmp_path: Path) -> None:
    n = len(trie_bytes)
    unigrams = int.from_bytes(trie_bytes[108:116], "little")
    vocab_end = HEADER_BYTES + 8 + 8 * unigrams
    for cut in [1, 50, 100, 120, HEADER_BYTES, vocab_end, n // 2, n - 100, n - 10, n - 1]:
        with pytest.raises(ModelFormatError, match=r"m\.bin") as e:
            _load_bytes(tmp_path, trie_bytes[:cut])
        assert "truncated" in str(e.value) or "words" in str(e.value), (cut, str(e.value))
    # every cut in the word list, between two words too, and a word added: refused when opened
    # (opening counts the words: one NUL after each)
    words = trie_bytes.index(b"<unk>\0", vocab_end)
    for cut in [words, *(i + 1 for i in range(words, n - 1) if trie_bytes[i] == 0), n + 6]:
        with pytest.raises(ModelFormatError, match=r"m\.bin.*(truncated|words in the word list)"):
            _load_bytes(tmp_path, (trie_bytes + b"extra\0")[:cut])


def test_wrong_magic_version_and_byte_order(trie_bytes: bytes, tmp_path: Path) -> None:
    cases = {
        "not a KenLM binary file": b"MMAP" + trie_bytes[4:],
        "version 4": trie_bytes.replace(b"format version 5", b"format version 4", 1),
        "did not finish building": b"mmap lm http://kheafield.com/code incomplete\n"
        + bytes(HEADER_BYTES),
        # the test value 1.0f written big-endian: a file from a big-endian machine
        "byte order": trie_bytes[:60] + bytes([0x3F, 0x80, 0, 0]) + trie_bytes[64:],
        "unknown model type 7": trie_bytes[:96] + bytes([7]) + trie_bytes[97:],
        "search structure version 2": trie_bytes[:104] + bytes([2]) + trie_bytes[105:],
        "order 0": trie_bytes[:88] + bytes([0]) + trie_bytes[89:],
        "without its vocabulary": trie_bytes[:100] + bytes([0]) + trie_bytes[101:],
    }
    for expected, data in cases.items():
        with pytest.raises(ModelFormatError, match=expected):
            _load_bytes(tmp_path, data)


def test_every_header_byte_flipped(trie_bytes: bytes, tmp_path: Path) -> None:
    """Each header byte inverted: a clear error, except in the padding and the two low bytes of
    the probing multiplier (1.5 stays >= 1; tries do not use it), where the file still reads."""
    loaded = set()
    for at in range(HEADER_BYTES):
        data = bytearray(trie_bytes)
        data[at] ^= 0xFF
        try:
            _load_bytes(tmp_path, bytes(data))
            loaded.add(at)
        except ModelFormatError as e:
            assert "m.bin" in str(e)
    padding = {89, 90, 91, 101, 102, 103, 132, 133, 134, 135}
    assert loaded == padding | {92, 93}


def test_random_mutations_never_crash(trie_bytes: bytes, tmp_path: Path) -> None:
    """Bytes overwritten anywhere: a model (a changed value or word) or a ModelFormatError,
    never another exception, a crash or a hang."""
    rng = random.Random(12)
    outcomes = {"loaded": 0, "refused": 0}
    for _ in range(200):
        data = bytearray(trie_bytes)
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(data)) if rng.random() < 0.7 else rng.randrange(HEADER_BYTES)
            data[at] = rng.randrange(256)
        try:
            _load_bytes(tmp_path, bytes(data))
            outcomes["loaded"] += 1
        except ModelFormatError:
            outcomes["refused"] += 1
    assert outcomes["refused"] > 0
    assert outcomes["loaded"] + outcomes["refused"] == 200


def test_other_files_are_refused(tmp_path: Path) -> None:
    fitted = NGramModel.fit(Corpus.from_sentences([["a", "b"]]), order=2, smoothing="kneser_ney")
    fitted.save(tmp_path / "m.fppl")
    fitted.to_arpa(tmp_path / "m.arpa")
    for name in ("m.fppl", "m.arpa"):
        with pytest.raises(ModelFormatError, match="not a KenLM binary file"):
            NGramModel.from_kenlm_binary(tmp_path / name)
    with pytest.raises(IsADirectoryError) as raised:
        NGramModel.from_kenlm_binary(tmp_path)
    assert raised.value.filename == str(tmp_path)
    with pytest.raises(ModelFileNotFoundError):
        NGramModel.from_kenlm_binary(tmp_path / "missing.bin")


def test_load_points_kenlm_files_to_their_reader(trie_bytes: bytes, tmp_path: Path) -> None:
    path = tmp_path / "m.bin"
    path.write_bytes(trie_bytes)
    with pytest.raises(ModelFormatError, match="KenLM binary files with from_kenlm_binary"):
        NGramModel.load(path)
    assert NGramModel.from_file(path).order == 3


@pytest.mark.parametrize("kind", ["trie", "trie-a22"])
def test_a_nan_value_in_the_file_is_a_format_error(
    kind, kenlm_binary_fixture, lmplz_o4_arpa_path, tmp_path, capsys
) -> None:
    """A binary scored in place is not read whole at load, so a corrupt value (here log10 p(o),
    a unigram, overwritten with NaN) is met when scored: every scoring call then raises
    ModelFormatError naming the file, never returns NaN; other words still score."""
    import struct

    binary, _ = kenlm_binary_fixture(kind)
    _, grams = read_arpa(lmplz_o4_arpa_path)
    data = binary.read_bytes()
    stored = struct.pack("<f", grams[1][("o",)][0])
    assert data.count(stored) == 1
    corrupt = tmp_path / "nan.bin"
    corrupt.write_bytes(data.replace(stored, struct.pack("<f", math.nan)))
    model = NGramModel.from_kenlm_binary(corrupt)
    assert math.isfinite(model.logprob("de"))
    calls = [
        lambda: model.logprob("o"),
        lambda: model.logprobs(["x", "o"]),
        lambda: model.full_scores(["x", "o"]),
        lambda: model.evaluate(Corpus.from_sentences([["x", "o"]])),
        lambda: model.evaluate_texts(["x o"], tokenizer="whitespace"),
        lambda: fastppl.kenlm.Model(str(corrupt)).perplexity("x o"),
        lambda: fastppl.kenlm.Model(str(corrupt)).score("o", bos=False, eos=False),
    ]
    for call in calls:
        with pytest.raises(ModelFormatError, match="NaN") as raised:
            call()
        assert str(corrupt) in str(raised.value)
    lm = fastppl.kenlm.Model(str(corrupt))
    state, out = fastppl.kenlm.State(), fastppl.kenlm.State()
    lm.NullContextWrite(state)
    with pytest.raises(ModelFormatError, match="NaN"):
        lm.BaseScore(state, "o", out)
    text = tmp_path / "t.txt"
    text.write_text("x o\n")
    assert main(["eval", str(corrupt), str(text), "-q"]) == 1
    assert "NaN" in capsys.readouterr().err
