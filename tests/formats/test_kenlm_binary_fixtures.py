"""KenLM's binary files of a small model, committed in ``tests/data``, against ``query``'s word by
word output on them (runs on a fresh clone).

Every kind is scored in place on the mapped file; a trie is converted when its n-grams are asked
for (``to_arpa``, ``save``), a probing file cannot be (its tables hold hashes, not words).
``query -v word`` gives each token's log10 probability (float32, printed with its shortest
digits) and the length of the n-gram matched, which fastppl must give exactly (to 1e-6 in
log10); the ``kenlm`` module, where installed, reads the same files independently.
"""

from __future__ import annotations

import math
import random
import re
import struct
from pathlib import Path

import numpy as np
import pytest

import fastppl.kenlm
from conftest import KENLM_BINARY_KINDS
from fastppl import Corpus, NGramModel
from fastppl.cli import main
from fastppl.errors import FastpplError, ModelFormatError
from helpers.arpa_text import read_arpa

LN10 = math.log(10.0)

#: Where the probing vocabulary's header (version, bound) starts in an order-4 file: 88 + 20 +
#: 4 x 8 = 140, aligned to 8.
PROBING_DATA_START = 144

#: Byte 96 of a KenLM header: the model type (0 probing, 1 rest probing, 2..5 tries).
MODEL_TYPE_AT = 96


def _query_words(path: Path) -> tuple[list[list[tuple[float, int, bool]]], dict[str, float]]:
    """Per sentence, ``(log10 p, ngram_length, oov)`` of each token, and the summary."""
    sentences, summary = [], {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if ":\t" in line:
            key, value = line.split(":\t")
            summary[key] = float(value)
            continue
        words, total = line.rsplit("\tTotal: ", 1)
        assert re.fullmatch(r"\S+ OOV: \d+", total), total
        tokens = []
        for token in words.split("\t"):
            m = re.fullmatch(r".*=(\d+) (\d+) (\S+)", token)
            assert m, token
            tokens.append((float(m[3]), int(m[2]), m[1] == "0"))
        sentences.append(tokens)
    return sentences, summary


@pytest.fixture(scope="module", params=KENLM_BINARY_KINDS)
def kind(request) -> str:
    return request.param


def test_every_token_is_querys(kind, kenlm_binary_fixture, machado_test_head_path) -> None:
    binary, query = kenlm_binary_fixture(kind)
    want, _ = _query_words(query)
    model = fastppl.kenlm.Model(binary)
    lines = machado_test_head_path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(want)
    for line, expected in zip(lines, want, strict=True):
        got = list(model.full_scores(line))
        assert [(n, oov) for _, n, oov in got] == [(n, oov) for _, n, oov in expected], line
        np.testing.assert_allclose(
            [p for p, _, _ in got], [p for p, _, _ in expected], rtol=0, atol=1e-6
        )


def test_corpus_perplexity_is_querys(kind, kenlm_binary_fixture, machado_test_head_path) -> None:
    binary, query = kenlm_binary_fixture(kind)
    sentences, summary = _query_words(query)
    model = NGramModel.from_kenlm_binary(binary)
    corpus = Corpus.from_file(machado_test_head_path, tokenizer="whitespace", sentences="lines")
    incl = model.evaluate(corpus, oov="unk")
    excl = model.evaluate(corpus, oov="skip")
    assert incl.num_tokens == summary["Tokens"]
    assert incl.num_oov == summary["OOVs"]
    assert incl.perplexity == pytest.approx(summary["Perplexity including OOVs"], rel=1e-6)
    assert excl.perplexity == pytest.approx(summary["Perplexity excluding OOVs"], rel=1e-6)
    totals = [sum(p for p, _, _ in s) for s in sentences]
    np.testing.assert_allclose(incl.sentence_log_probs / LN10, totals, rtol=1e-6, atol=1e-5)


def test_kenlm_module_on_the_same_file(kind, kenlm_binary_fixture, machado_test_head_path) -> None:
    kenlm = pytest.importorskip("kenlm")
    binary, _ = kenlm_binary_fixture(kind)
    ours, theirs = fastppl.kenlm.Model(str(binary)), kenlm.Model(str(binary))
    assert ours.order == theirs.order == 4
    lines = machado_test_head_path.read_text(encoding="utf-8").splitlines()[:200]
    for line in [*lines, "xyzzy palavra_nenhuma .", ""]:
        for bos, eos in [(True, True), (False, False)]:
            got = list(ours.full_scores(line, bos=bos, eos=eos))
            want = list(theirs.full_scores(line, bos=bos, eos=eos))
            assert [g[1:] for g in got] == [w[1:] for w in want], line
            np.testing.assert_allclose([g[0] for g in got], [w[0] for w in want], atol=1e-6)
    for word in ["de", "<s>", "</s>", "<unk>", "xyzzy"]:
        assert (word in ours) == (word in theirs), word


def test_state_api_is_the_kenlm_modules(kind, kenlm_binary_fixture, machado_test_head_path):
    """Chained states: the same scores, n-gram lengths, and the same states (equal exactly when
    kenlm's are) word after word, ``<s>`` and ``</s>`` as words included."""
    kenlm = pytest.importorskip("kenlm")
    binary, _ = kenlm_binary_fixture(kind)
    ours, theirs = fastppl.kenlm.Model(str(binary)), kenlm.Model(str(binary))
    lines = machado_test_head_path.read_text(encoding="utf-8").splitlines()[:60]
    for line in [*lines, "<s> a </s> de xyzzy"]:
        pairs = []
        for model, state_type in [(ours, fastppl.kenlm.State), (theirs, kenlm.State)]:
            state, out = state_type(), state_type()
            model.BeginSentenceWrite(state)
            seen = []
            for word in line.split():
                r = model.BaseFullScore(state, word, out)
                seen.append((r.log_prob, r.ngram_length, r.oov, out.__copy__()))
                state, out = out, state
            pairs.append(seen)
        states_ours = [s for *_, s in pairs[0]]
        states_theirs = [s for *_, s in pairs[1]]
        for (p, n, o, _), (q, m, v, _) in zip(*pairs, strict=True):
            assert (n, o) == (m, v), line
            assert p == pytest.approx(q, abs=1e-6), line
        for i in range(len(states_ours)):
            for j in range(len(states_ours)):
                same = states_theirs[i] == states_theirs[j]
                assert (states_ours[i] == states_ours[j]) == same, (line, i, j)


def test_probing_is_scored_in_place(kenlm_binary_fixture, lmplz_o4_arpa_path) -> None:
    """No n-gram is read at load: the counts come from the header, the words from the end of the
    file when asked for; what needs the n-grams' words says why it cannot be done."""
    binary, _ = kenlm_binary_fixture("probing")
    model = NGramModel.from_kenlm_binary(binary)
    from_arpa = NGramModel.from_arpa(lmplz_o4_arpa_path)
    assert model.ngram_counts == from_arpa.ngram_counts
    assert (model.order, model.vocab_size, model.bos_eos) == (4, from_arpa.vocab_size, True)
    assert model.smoothing == "arpa" and model.normalized and model.discounts == []
    assert sorted(model.vocab()) == sorted(from_arpa.vocab())
    assert model.vocab()[0] == "<unk>"
    assert "de" in model and "xyzzy" not in model
    context = ["não", "é"]
    assert model.logprob("de", context) == pytest.approx(from_arpa.logprob("de", context), abs=1e-6)
    for refused in (
        lambda: model.to_arpa(binary.with_suffix(".arpa")),
        lambda: model.save(binary.with_suffix(".fppl")),
        lambda: model.count(["de"]),
    ):
        with pytest.raises(ModelFormatError, match=r"probing binary .* cannot be listed") as e:
            refused()
        assert e.value.path == str(binary)
    assert not binary.with_suffix(".arpa").exists()


def test_a_trie_converts_when_its_ngrams_are_asked_for(
    kenlm_binary_fixture, lmplz_o4_arpa_path, tmp_path: Path
) -> None:
    binary, _ = kenlm_binary_fixture("trie")
    model = NGramModel.from_kenlm_binary(binary)
    model.to_arpa(tmp_path / "back.arpa")
    assert read_arpa(tmp_path / "back.arpa") == read_arpa(lmplz_o4_arpa_path)
    model.save(tmp_path / "m.fppl")
    saved = NGramModel.load(tmp_path / "m.fppl")
    assert saved.ngram_counts == model.ngram_counts
    assert model.count(["de"]) == 0  # KenLM files hold no training counts
    words = ["não", "é", "de", "xyzzy"]
    np.testing.assert_allclose(saved.logprobs(words), model.logprobs(words), atol=1e-6)


def test_probing_files_through_from_file_and_the_cli(
    kenlm_binary_fixture, machado_test_head_path, capsys
) -> None:
    binary, query = kenlm_binary_fixture("probing")
    summary = _query_words(query)[1]
    assert (
        NGramModel.from_file(binary).ngram_counts
        == NGramModel.from_kenlm_binary(binary).ngram_counts
    )
    assert main(["eval", str(binary), str(machado_test_head_path)]) == 0
    out = dict(line.split(":\t") for line in capsys.readouterr().out.strip().splitlines())
    assert float(out["Perplexity including OOVs"]) == pytest.approx(
        summary["Perplexity including OOVs"], rel=1e-6
    )


@pytest.fixture(scope="module")
def probing_bytes(kenlm_binary_fixture) -> bytes:
    return kenlm_binary_fixture("probing")[0].read_bytes()


def _refused(data: bytes, tmp_path: Path, match: str) -> None:
    path = tmp_path / "bad.bin"
    path.write_bytes(data)
    with pytest.raises(ModelFormatError, match=match) as e:
        NGramModel.from_kenlm_binary(path)
    assert e.value.path == str(path)


def test_truncated_probing_files(probing_bytes: bytes, tmp_path: Path) -> None:
    """Cut anywhere (between two words too: see test_a_cut_word_list_is_refused_at_open)."""
    n = len(probing_bytes)
    for cut in [0, 50, 100, 140, PROBING_DATA_START + 4, 1000, n // 2, n - 40_000, n - 3]:
        _refused(probing_bytes[:cut], tmp_path, 'truncated|not a KenLM|no "<unk>"')


#: Byte 108 of a KenLM header: the n-gram counts (u64), unigrams first (with ``<unk>``).
COUNTS_AT = 108


def _word_list(data: bytes) -> tuple[int, list[int]]:
    """Where the word list at the end of a file starts, and the index (in the file) of the NUL
    ending each word."""
    start = data.index(b"<unk>\0")
    nuls = [start + i for i, b in enumerate(data[start:]) if b == 0]
    assert len(nuls) == int.from_bytes(data[COUNTS_AT : COUNTS_AT + 8], "little")
    return start, nuls


#: Where a file is cut in its word list (from where it starts, and the NULs ending its words),
#: and what the error says.
WORD_LIST_CUTS = {
    "right after the body": (lambda start, nuls: start, "should start at byte"),
    "inside <unk>": (lambda start, nuls: start + 3, 'no "<unk>"'),
    "after <unk>": (lambda start, nuls: nuls[0] + 1, "ends after 1 of"),
    "between two words": (lambda start, nuls: nuls[len(nuls) // 2] + 1, "ends after"),
    "before the last word": (lambda start, nuls: nuls[-2] + 1, "ends after"),
    "inside the last word": (lambda start, nuls: nuls[-1] - 1, "inside a word"),
}


@pytest.mark.parametrize("cut", sorted(WORD_LIST_CUTS))
def test_a_cut_word_list_is_refused_at_open(
    kind, kenlm_binary_fixture, tmp_path: Path, cut: str
) -> None:
    """A file cut in the word list KenLM appends after the model (``<unk>``, then each word
    followed by a NUL, as many as the header counts unigrams) is refused when opened, by every
    way of opening it, with the file named: not when its words are first needed (``vocab()``,
    ``to_arpa``), which opened and scored such a file before."""
    data = kenlm_binary_fixture(kind)[0].read_bytes()
    start, nuls = _word_list(data)
    at, expected = WORD_LIST_CUTS[cut]
    path = tmp_path / "cut.bin"
    path.write_bytes(data[: at(start, nuls)])
    for open_ in (NGramModel.from_kenlm_binary, NGramModel.from_file, fastppl.kenlm.Model):
        with pytest.raises(ModelFormatError, match=re.escape(expected)) as e:
            open_(path)
        assert e.value.path == str(path)
        assert str(path) in str(e.value)
    if expected == "ends after":
        kept = nuls.index(at(start, nuls) - 1) + 1
        assert f"the word list ends after {kept} of {len(nuls)} words" in str(e.value)


@pytest.mark.parametrize(
    "extra", [b"extra\0", b"\0", b"a\0b\0"], ids=["a word", "an empty word", "two words"]
)
def test_a_longer_word_list_is_refused_at_open(
    kind, kenlm_binary_fixture, tmp_path: Path, extra: bytes
) -> None:
    """Words after the last one (as KenLM's ``ReadWords``, which refuses a list of another length
    than the vocabulary's) are refused when opened too."""
    data = kenlm_binary_fixture(kind)[0].read_bytes()
    words = len(_word_list(data)[1])
    added = extra.count(0)
    _refused(data + extra, tmp_path, f"{words + added} words in the word list at its end")
    _refused(data + extra[:-1] + b"x", tmp_path, "inside a word")


def test_corrupt_probing_headers(probing_bytes: bytes, tmp_path: Path) -> None:
    def with_u32(at: int, value: int) -> bytes:
        return probing_bytes[:at] + struct.pack("<I", value) + probing_bytes[at + 4 :]

    v4 = probing_bytes.replace(b"format version 5", b"format version 4", 1)
    _refused(v4, tmp_path, "version 4")
    _refused(b"xx" + probing_bytes[2:], tmp_path, "not a KenLM binary file")
    _refused(with_u32(PROBING_DATA_START, 7), tmp_path, "probing vocabulary version 7")
    _refused(with_u32(PROBING_DATA_START + 4, 12), tmp_path, "vocabulary of 12 words")
    _refused(with_u32(MODEL_TYPE_AT, 1), tmp_path, "rest-cost probing")
    big_endian = probing_bytes[:60] + struct.pack(">f", 1.0) + probing_bytes[64:]
    _refused(big_endian, tmp_path, "byte order")


def test_random_mutations_never_crash(kind, kenlm_binary_fixture, tmp_path: Path) -> None:
    """Mutated files load and score in place (their numbers may be wrong) or raise a fastppl
    error; never a crash, a hang or an error of another kind."""
    original = kenlm_binary_fixture(kind)[0].read_bytes()
    rng = random.Random(12)
    path = tmp_path / "mutated.bin"
    for _ in range(100):
        data = bytearray(original)
        for _ in range(rng.randint(1, 16)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        path.write_bytes(bytes(data))
        try:
            model = fastppl.kenlm.Model(path)
        except FastpplError:
            continue
        score = model.score("não é de xyzzy")
        assert not math.isnan(score)
