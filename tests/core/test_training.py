"""`train_arpa`: estimation within a memory budget, counts sorted on disk (lmplz -S).

Checked three ways: byte-identical ARPA files with `NGramModel.fit(...).to_arpa` (the in-memory
estimator, itself checked against KenLM), the same n-grams and values as KenLM's lmplz files in
``../shared/arpa``, and the runs spilled to disk when the budget is smaller than the counts.
"""

from __future__ import annotations

import gzip
import lzma
import math
import os

import pytest

import fastppl
from fastppl import Corpus, NGramModel, train_arpa
from fastppl.cli import main as cli_main
from fastppl.errors import EmptyCorpusError, InvalidArgumentError, InvalidTypeError
from fastppl.training import parse_memory
from helpers.arpa_text import LMPLZ_MODELS as MODELS
from helpers.arpa_text import read_arpa

MIN = fastppl._core.MIN_MEMORY


def corpus_of(shared_dir, name: str) -> Corpus:
    path = shared_dir / "arpa" / f"{name}.train.txt"
    return Corpus.from_file(path, tokenizer="whitespace", sentences="lines")


@pytest.mark.parametrize(("name", "order"), MODELS, ids=[f"{n}-o{o}" for n, o in MODELS])
def test_same_file_as_in_memory_fit_and_same_model_as_lmplz(shared_dir, tmp_path, name, order):
    corpus = corpus_of(shared_dir, name)
    external = tmp_path / "external.arpa.gz"
    runs = tmp_path / "runs"
    runs.mkdir()
    summary = train_arpa(corpus, external, order=order, memory=MIN, temp_dir=runs)
    counts = summary.ngram_counts
    in_memory = tmp_path / "in-memory.arpa.gz"
    model = NGramModel.fit(corpus, order=order, smoothing="modified_kneser_ney")
    model.to_arpa(in_memory)
    with gzip.open(external, "rb") as a, gzip.open(in_memory, "rb") as b:
        assert a.read() == b.read()
    # KenLM's own file: the same n-grams, the same numbers (lmplz prints float32)
    header, grams = read_arpa(shared_dir / "arpa" / f"{name}.o{order}.arpa.gz")
    mine_header, mine = read_arpa(external)
    assert counts == [header[m] for m in range(1, order + 1)] == list(mine_header.values())
    for m in range(1, order + 1):
        assert mine[m].keys() == grams[m].keys(), m
        for g, (p, b) in grams[m].items():
            q, c = mine[m][g]
            assert q == pytest.approx(p, abs=1e-5), g
            assert (b is None) == (c is None) or m == order, g
            if b is not None and c is not None:
                assert c == pytest.approx(b, abs=1e-5), g
    # the runs' directory is removed
    assert list(runs.iterdir()) == []


def test_spills_when_the_counts_exceed_the_budget(shared_dir, tmp_path):
    """machado.train: 0.6 M 5-gram occurrences, whose records and their sorted copy need more
    than 16 MiB: the sorts write several runs and merge them; the result is still the in-memory
    model's file, byte for byte."""
    corpus = corpus_of(shared_dir, "machado")
    out = tmp_path / "m.arpa.xz"
    runs = tmp_path / "runs"
    runs.mkdir()
    summary = train_arpa(corpus, out, order=5, memory="16M", temp_dir=runs, smoothing="kneser_ney")
    # one run per sort at least (counts, 4 adjusted orders, terms and sections of orders 2-5),
    # and more than one for the counts
    assert summary.sorted_runs > 1 + 4 + 2 * 4
    assert summary.bytes_spilled > corpus.num_tokens * 24
    expected = tmp_path / "expected.arpa"
    NGramModel.fit(corpus, order=5, smoothing="kneser_ney").to_arpa(expected)
    with lzma.open(out, "rb") as f:
        assert f.read() == expected.read_bytes()
    assert list(runs.iterdir()) == []


@pytest.mark.parametrize(
    ("smoothing", "params"),
    [("witten_bell", {}), ("absolute_discounting", {"discount": 0.6}), ("kneser_ney", {})],
)
def test_other_interpolated_estimators(tmp_path, smoothing, params):
    corpus = Corpus.from_sentences([["a", "b", "c", "a"], ["b", "c"], ["a", "c", "b", "a", "b"]])
    out = tmp_path / "m.arpa"
    train_arpa(corpus, out, order=3, smoothing=smoothing, memory="16M", **params)
    expected = tmp_path / "e.arpa"
    NGramModel.fit(corpus, order=3, smoothing=smoothing, **params).to_arpa(expected)
    assert out.read_bytes() == expected.read_bytes()
    loaded = NGramModel.from_arpa(out)
    for h in [(), ("a",), ("b", "c")]:
        total = sum(math.exp(loaded.logprob(w, h)) for w in ["a", "b", "c", "</s>", "<unk>"])
        assert total == pytest.approx(1.0, abs=1e-5), h


def test_parse_memory():
    assert parse_memory("4G") == 4 << 30
    assert parse_memory("512m") == 512 << 20
    assert parse_memory(" 1.5K ") == 1536
    assert parse_memory(123) == 123
    physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert parse_memory("50%") == physical // 2
    for bad in ["", "G", "4X", "-1G", "0", "150%", "0%"]:
        with pytest.raises(InvalidArgumentError, match="memory"):
            parse_memory(bad)
    for bad in [1.5, True, None]:
        with pytest.raises(InvalidTypeError, match="memory"):
            parse_memory(bad)


def test_bad_arguments(tmp_path):
    corpus = Corpus.from_sentences([["a", "b"]])
    out = tmp_path / "m.arpa"
    with pytest.raises(InvalidArgumentError, match="at least 16 MiB"):
        train_arpa(corpus, out, memory="1M")
    with pytest.raises(InvalidArgumentError, match="order >= 2"):
        train_arpa(corpus, out, order=1)
    with pytest.raises(InvalidArgumentError, match="interpolated"):
        train_arpa(corpus, out, smoothing="mle")
    with pytest.raises(InvalidArgumentError, match="does not take"):
        train_arpa(corpus, out, smoothing="witten_bell", discount=0.5)
    with pytest.raises(InvalidArgumentError, match="discounts of order"):
        train_arpa(corpus, out, order=2)  # too small for modified Kneser-Ney's discounts
    with pytest.raises(InvalidArgumentError, match=r"prune .*, got 18446744073709551616"):
        train_arpa(corpus, out, prune=(0, 2**64))
    with pytest.raises(InvalidArgumentError, match=r"min_count .*, got 1180591620717411303424"):
        train_arpa(corpus, out, min_count=2**70)
    with pytest.raises(EmptyCorpusError):
        train_arpa(Corpus.from_sentences([]), out)
    with pytest.raises(InvalidTypeError, match="Corpus"):
        train_arpa([["a"]], out)  # type: ignore[arg-type]
    assert not out.exists()


def test_unwritable_places_are_named(tmp_path):
    corpus = Corpus.from_sentences([["a", "b", "a"], ["b", "a"]])
    missing = tmp_path / "no" / "such" / "dir" / "m.arpa"
    with pytest.raises(OSError, match="no/such/dir"):
        train_arpa(corpus, missing, smoothing="witten_bell")
    assert not (tmp_path / "m.arpa").exists()


@pytest.mark.parametrize("kind", ["missing", "nested", "a file"])
def test_temp_dir_must_be_an_existing_directory(tmp_path, monkeypatch, kind):
    """As the CLI's -T: nothing is created (a missing one was made, and left behind, empty)."""
    monkeypatch.chdir(tmp_path)
    temp_dir = {"missing": "nodir", "nested": "no/such/dir", "a file": "a-file"}[kind]
    if kind == "a file":
        (tmp_path / "a-file").write_text("")
    before = sorted(tmp_path.iterdir())
    corpus = Corpus.from_sentences([["a", "b", "a"], ["b", "a"]])
    with pytest.raises(InvalidArgumentError, match=f"temp_dir '{temp_dir}' is not an existing"):
        train_arpa(corpus, "m.arpa", order=2, smoothing="witten_bell", temp_dir=temp_dir)
    assert sorted(tmp_path.iterdir()) == before


def test_cli_memory_option(machado_train_head_path, tmp_path, capsys):
    text = machado_train_head_path
    out = tmp_path / "cli.arpa"
    args = ["train", str(text), str(out), "-o", "3", "--tokenizer", "whitespace"]
    assert cli_main([*args, "-S", "20M", "-T", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert "n-grams 1=" in err
    expected = tmp_path / "expected.arpa"
    assert cli_main([*args[:2], str(expected), *args[3:]]) == 0
    assert out.read_bytes() == expected.read_bytes()
    assert cli_main([*args, "--memory", "lots"]) == 1
    assert "memory must look like" in capsys.readouterr().err


def test_vocabulary_limits_as_in_fit(tmp_path):
    corpus = Corpus.from_sentences([["a", "b", "c", "a"], ["b", "c", "d"], ["a", "c", "b", "a"]])
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("a b\n")
    for limits in [{"min_count": 2}, {"vocab_file": vocab}]:
        out, expected = tmp_path / "m.arpa", tmp_path / "e.arpa"
        train_arpa(corpus, out, order=3, smoothing="witten_bell", **limits)
        NGramModel.fit(corpus, order=3, smoothing="witten_bell", **limits).to_arpa(expected)
        assert out.read_bytes() == expected.read_bytes()
        assert "\t<unk>" in out.read_text()
