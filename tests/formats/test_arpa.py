"""ARPA files in and out: parity with KenLM (lmplz files, query scores), round trips, errors."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import lzma
import math
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastppl import Corpus, FastpplError, NGramModel, train_arpa
from fastppl.errors import InvalidArgumentError, ModelFileNotFoundError, ModelFormatError

LN10 = math.log(10)


TINY = (
    "\\data\\\nngram 1=6\nngram 2=5\nngram 3=2\n\n"
    "\\1-grams:\n-1.5\t<unk>\t0\n0\t<s>\t-0.5\n-0.7\t</s>\t0\n-0.6\ta\t-0.3\n-0.8\tb\t-0.25\n"
    "-1.2\tc\t-0.1\n\n"
    "\\2-grams:\n-0.2\t<s> a\t-0.2\n-0.3\ta b\t-0.1\n-0.4\tb </s>\t0\n-0.5\ta </s>\t0\n"
    "-0.6\tb c\t0\n\n"
    "\\3-grams:\n-0.1\t<s> a b\n-0.15\ta b </s>\n\n\\end\\\n"
)


def parse_arpa(path: Path) -> dict[tuple[str, ...], tuple[float, float]]:
    """n-gram -> (log10 p, log10 backoff) of an ARPA file (a small independent parser)."""
    opener = gzip.open if str(path).endswith(".gz") else open
    out: dict[tuple[str, ...], tuple[float, float]] = {}
    order = 0
    with opener(path, "rt", encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("\\") and line.endswith("-grams:"):
                order = int(line[1:].split("-")[0])
                continue
            if not order or not line or line.startswith("\\"):
                continue
            fields = line.split("\t")
            words = tuple(fields[1].split(" "))
            assert len(words) == order, line
            out[words] = (float(fields[0]), float(fields[2]) if len(fields) > 2 else 0.0)
    return out


@pytest.fixture(scope="module")
def test_corpus(arpa_dir: Path) -> Corpus:
    return Corpus.from_file(
        arpa_dir / "machado.test.txt", tokenizer="whitespace", sentences="lines"
    )


def read_summary(path: Path) -> dict[str, float]:
    out = {}
    for line in path.read_text().splitlines():
        key, value = line.split(":\t")
        out[key] = float(value)
    return out


# ---- (a) scoring with lmplz's files equals KenLM's query ---------------------------------------
@pytest.mark.parametrize("name", ["machado.o3", "machado-small.o5"])
def test_kenlm_query_parity(name: str, test_corpus: Corpus, arpa_dir: Path) -> None:
    model = NGramModel.from_arpa(arpa_dir / f"{name}.arpa.gz")
    assert model.smoothing == "arpa" and model.bos_eos
    assert model.order == int(name[-1])
    with gzip.open(arpa_dir / f"{name}.arpa.gz", "rt") as f:
        header = []
        for line in f:
            if header and not line.startswith("ngram "):
                break
            if line.startswith("ngram "):
                header.append(int(line.split("=")[1]))
    assert model.ngram_counts == [header[0] - 1, *header[1:]]  # order 1 excludes <s>

    result = model.evaluate(test_corpus)
    skipped = model.evaluate(test_corpus, oov="skip")
    summary = read_summary(arpa_dir / f"{name}.query-summary.txt")
    assert result.num_tokens == summary["Tokens"] == 66875
    assert result.num_oov == summary["OOVs"]
    assert skipped.num_tokens == summary["Tokens"] - summary["OOVs"]
    assert result.perplexity == pytest.approx(summary["Perplexity including OOVs"], rel=1e-6)
    assert skipped.perplexity == pytest.approx(summary["Perplexity excluding OOVs"], rel=1e-6)

    ref = np.array(
        [
            float(line.split()[1])
            for line in (arpa_dir / f"{name}.query-sentences.txt").read_text().splitlines()
        ]
    )
    ours = np.asarray(result.sentence_log_probs) / LN10
    assert ours.shape == ref.shape == (3404,)
    # KenLM adds float32 log10 values in float32: ~3e-7 relative on the longest sentences
    np.testing.assert_allclose(ours, ref, rtol=1e-6, atol=1e-4)


# ---- (b) fastppl's modified Kneser-Ney written as ARPA equals lmplz's file ----------------------
@pytest.mark.parametrize(("train", "order", "ref"), [
    ("machado-small.train.txt", 5, "machado-small.o5.arpa.gz"),
    ("machado.train.txt", 3, "machado.o3.arpa.gz"),
])  # fmt: skip
def test_modified_kneser_ney_arpa_equals_lmplz(
    train: str, order: int, ref: str, tmp_path: Path, arpa_dir: Path
) -> None:
    corpus = Corpus.from_file(arpa_dir / train, tokenizer="whitespace", sentences="lines")
    model = NGramModel.fit(corpus, order=order, smoothing="modified_kneser_ney")
    out = tmp_path / "model.arpa.gz"
    model.to_arpa(out)
    ours, theirs = parse_arpa(out), parse_arpa(arpa_dir / ref)
    assert ours.keys() == theirs.keys()
    keys = list(theirs)
    a = np.array([ours[k] for k in keys])
    b = np.array([theirs[k] for k in keys])
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-5)
    # layout: header counts, <unk> first, <s> with log10 p 0
    with gzip.open(out, "rt") as f:
        head = [next(f) for _ in range(order + 5)]
    assert head[0] == "\\data\\\n"
    assert [int(h.split("=")[1]) for h in head[1 : order + 1]] == [
        sum(len(k) == m for k in keys) for m in range(1, order + 1)
    ]
    assert head[order + 2] == "\\1-grams:\n"
    assert head[order + 3].split("\t")[1] == "<unk>"
    assert head[order + 4].split("\t")[:2] == ["0", "<s>"]


def test_rewriting_lmplz_file_gives_the_same_lines(tmp_path: Path, arpa_dir: Path) -> None:
    """Read lmplz's ARPA and write it back: the same lines, digit for digit (order aside)."""
    ref = arpa_dir / "machado-small.o5.arpa.gz"
    out = tmp_path / "again.arpa"
    NGramModel.from_arpa(ref).to_arpa(out)
    with gzip.open(ref, "rt", encoding="utf-8") as f:
        theirs = f.read().splitlines()
    ours = out.read_text(encoding="utf-8").splitlines()
    assert ours[:8] == theirs[:8]  # header and the first unigrams: <unk>, <s>, </s>
    assert sorted(ours) == sorted(theirs)


#: sha256 of the plain ARPA text fastppl writes for the shared models: read from lmplz's files,
#: fitted in memory and estimated within a memory budget (both paths share one writer). Taken
#: with main at e4231d4, before the parallel reader and the prefix-memoized writer (issue 14):
#: reading and writing must stay byte for byte the same.
WRITTEN_SHA256 = {
    "machado.o3.arpa.gz": "d64f21657ba26dee3ec1accc03ba6ab94ef4a2399dbd41c7ff2221cc217f5473",
    "machado-small.o5.arpa.gz": "84ed7d175285279384706d20a4a5b96cc190f77bd184f70e8a2611746519d6ef",
    "machado-small.train.txt": "e6af387801f81602cd946a5bdd3895bef7037a691f636f51eafc331d7d5c7504",
}


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("name", ["machado.o3.arpa.gz", "machado-small.o5.arpa.gz"])
def test_lmplz_files_are_written_back_byte_for_byte(
    name: str, tmp_path: Path, arpa_dir: Path
) -> None:
    out = tmp_path / "again.arpa"
    NGramModel.from_arpa(arpa_dir / name).to_arpa(out)
    assert sha256_of(out) == WRITTEN_SHA256[name]


def test_fitted_and_budgeted_models_are_written_byte_for_byte(
    tmp_path: Path, arpa_dir: Path
) -> None:
    name = "machado-small.train.txt"
    corpus = Corpus.from_file(arpa_dir / name, tokenizer="whitespace", sentences="lines")
    fitted, budgeted = tmp_path / "fitted.arpa", tmp_path / "budgeted.arpa"
    NGramModel.fit(corpus, order=5, smoothing="modified_kneser_ney").to_arpa(fitted)
    train_arpa(corpus, budgeted, order=5, memory="50M", temp_dir=tmp_path)
    assert sha256_of(fitted) == sha256_of(budgeted) == WRITTEN_SHA256[name]


# ---- (c) round trips ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def small_fit(machado_train_head_path: Path) -> tuple[NGramModel, Corpus]:
    lines = machado_train_head_path.read_text(encoding="utf-8").splitlines()[:2000]
    corpus = Corpus.from_sentences([line.split() for line in lines])
    return NGramModel.fit(corpus, order=4, smoothing="modified_kneser_ney"), corpus


@pytest.mark.parametrize("suffix", [".arpa", ".arpa.gz", ".arpa.xz", ".arpa.bz2"])
def test_round_trip(suffix: str, small_fit: tuple[NGramModel, Corpus], tmp_path: Path) -> None:
    model, corpus = small_fit
    path = tmp_path / f"m{suffix}"
    model.to_arpa(path)
    magic = {".gz": b"\x1f\x8b", ".xz": b"\xfd7zXZ\x00", ".bz2": b"BZh"}.get(path.suffix, b"\\data")
    assert path.read_bytes().startswith(magic)
    loaded = NGramModel.from_arpa(str(path))
    assert loaded.ngram_counts == model.ngram_counts
    assert loaded.vocab() == model.vocab()
    fitted, back = model.evaluate(corpus), loaded.evaluate(corpus)
    assert back.perplexity == pytest.approx(fitted.perplexity, rel=1e-6)
    assert back.num_tokens == fitted.num_tokens
    np.testing.assert_allclose(back.sentence_log_probs, fitted.sentence_log_probs, atol=1e-4)
    # every codec gives the same text
    plain = tmp_path / "plain.arpa"
    loaded.to_arpa(plain)
    again = NGramModel.from_arpa(plain)
    again.to_arpa(tmp_path / "again.arpa")
    assert (tmp_path / "again.arpa").read_bytes() == plain.read_bytes()
    # the compressed file is standard: Python's own decompressors read the same text
    decompress = {".gz": gzip.decompress, ".xz": lzma.decompress, ".bz2": bz2.decompress}
    raw = path.read_bytes()
    assert decompress.get(path.suffix, bytes)(raw) == plain.read_bytes()


def test_tiny_scores_follow_backoff(tmp_path: Path) -> None:
    path = tmp_path / "tiny.arpa"
    path.write_text(TINY)
    m = NGramModel.from_arpa(path)
    assert m.order == 3 and m.vocab()[:3] == ["<unk>", "<s>", "</s>"]
    assert m.vocab_size == 5  # <unk> </s> a b c
    assert m.logprob("b", ["<s>", "a"], base=10) == pytest.approx(-0.1)
    # c after "a b": p(c | b) = -0.6 plus backoff(a b) = -0.1
    assert m.logprob("c", ["a", "b"], base=10) == pytest.approx(-0.7)
    # a after "b c": "c a" missing -> bo(b c)=0 + bo(c)=-0.1 + p(a)=-0.6
    assert m.logprob("a", ["b", "c"], base=10) == pytest.approx(-0.7)
    # "<s> a b </s>": -0.2 -0.1 -0.15
    assert m.logprobs(["a", "b"], base=10).tolist() == pytest.approx([-0.2, -0.1, -0.15])
    assert m.logprob("zzz", [], base=10) == pytest.approx(-1.5)


def test_missing_unk_gets_kenlm_substitute(tmp_path: Path) -> None:
    path = tmp_path / "nounk.arpa"
    path.write_text(TINY.replace("ngram 1=6", "ngram 1=5").replace("-1.5\t<unk>\t0\n", ""))
    m = NGramModel.from_arpa(path)
    assert m.logprob("zzz", ["a"], base=10) == pytest.approx(-100.0 - 0.3)


def test_refuses_models_without_arpa_form(tmp_path: Path) -> None:
    corpus = Corpus.from_sentences([["a", "b"], ["b", "a", "a"]])
    for smoothing in ("mle", "laplace", "additive", "stupid_backoff"):
        model = NGramModel.fit(corpus, order=2, smoothing=smoothing)
        with pytest.raises(InvalidArgumentError, match="ARPA"):
            model.to_arpa(tmp_path / "x.arpa")
    nobos = NGramModel.fit(corpus, order=2, smoothing="witten_bell", bos_eos=False)
    with pytest.raises(InvalidArgumentError, match="bos_eos"):
        nobos.to_arpa(tmp_path / "x.arpa")
    for smoothing in ("witten_bell", "absolute_discounting", "kneser_ney"):
        model = NGramModel.fit(corpus, order=2, smoothing=smoothing)
        model.to_arpa(tmp_path / f"{smoothing}.arpa")
        back = NGramModel.from_arpa(tmp_path / f"{smoothing}.arpa")
        assert back.perplexity(corpus) == pytest.approx(model.perplexity(corpus), rel=1e-6)


# ---- (d) the kenlm Python module reads fastppl's files -----------------------------------------
def test_kenlm_module_scores_fastppl_arpa(small_fit: tuple[NGramModel, Corpus], tmp_path: Path):
    kenlm = pytest.importorskip("kenlm", reason="the kenlm module is not installed")
    model, _ = small_fit
    path = tmp_path / "m.arpa"
    model.to_arpa(path)
    klm = kenlm.Model(str(path))
    assert klm.order == model.order
    sentences = [
        "o que é isso",
        "ele disse que não sabia nada da vida",
        "palavrasemsentido , e outra coisa",
    ]
    for s in sentences:
        ours = float(model.logprobs(s.split(), base=10).sum())
        assert klm.score(s, bos=True, eos=True) == pytest.approx(ours, abs=1e-4), s


# ---- (e) malformed files -----------------------------------------------------------------------
def _edit(old: str, new: str) -> str:
    assert old in TINY
    return TINY.replace(old, new, 1)


MALFORMED = {
    "no data line": ("hello\n" + TINY, 1, "data"),
    "empty": ("", 0, "data"),
    "bad count line": (_edit("ngram 2=5", "ngram two=5"), 3, "count"),
    "counts out of order": (_edit("ngram 2=5", "ngram 3=5"), 3, "ngram 2"),
    "section count differs": (_edit("ngram 2=5", "ngram 2=6"), 20, "announces 6"),
    "too many n-grams": (_edit("ngram 2=5", "ngram 2=4"), 19, "more n-grams"),
    "bad float": (_edit("-0.3\ta b", "-0.3x\ta b"), 16, "probability"),
    "bad backoff": (_edit("-0.3\ta b\t-0.1", "-0.3\ta b\tnan"), 16, "backoff"),
    "too many fields": (_edit("-0.3\ta b\t-0.1", "-0.3\ta b\t-0.1\t7"), 16, "fields"),
    "wrong length": (_edit("-0.3\ta b\t", "-0.3\ta b c\t"), 16, "3 word"),
    "positive log prob": (_edit("-0.3\ta b", "0.3\ta b"), 16, "positive"),
    "unknown word": (_edit("-0.3\ta b", "-0.3\ta zz"), 16, "not among the unigrams"),
    "duplicate": (_edit("-0.3\ta b", "-0.2\t<s> a"), 16, "duplicate"),
    "duplicate unigram": (_edit("-1.2\tc", "-1.2\tb"), 12, "duplicate"),
    "unknown section": (_edit("\\2-grams:", "\\bigrams:"), 14, "unknown section"),
    "unannounced section": (
        _edit("\\end\\", "\\4-grams:\n-1\ta b c <s>\n\n\\end\\"),
        25,
        "not announced",
    ),
    "missing end": (TINY.replace("\\end\\\n", ""), 24, "end"),
    "truncated": (TINY[: TINY.index("-0.6\tb c")], 18, "truncated"),
    "missing context": (_edit("-0.15\ta b </s>", "-0.15\tb a </s>"), 23, "context"),
    "trailing text": (TINY + "more\n", 26, "after"),
    "no </s>": (_edit("-0.7\t</s>\t0\n", "-0.7\tx\t0\n"), 13, "</s>"),
    "highest-order backoff": (_edit("-0.1\t<s> a b", "-0.1\t<s> a b\t-0.5"), 22, "highest order"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_files(case: str, tmp_path: Path) -> None:
    text, line, words = MALFORMED[case]
    path = tmp_path / "bad.arpa"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ModelFormatError, match=words) as info:
        NGramModel.from_arpa(path)
    err = info.value
    assert isinstance(err, FastpplError) and isinstance(err, ValueError)
    assert err.line == line and err.path == str(path)
    assert f"line {line}:" in str(err) and str(path) in str(err)


def test_non_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.arpa"
    path.write_bytes(TINY.encode().replace(b"\tb\t", b"\t\xffb\t", 1))
    with pytest.raises(ModelFormatError, match="UTF-8") as info:
        NGramModel.from_arpa(path)
    assert info.value.line == 11


def test_corrupt_compressed_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.arpa.gz"
    data = gzip.compress(TINY.encode())
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelFormatError):
        NGramModel.from_arpa(path)


#: "x\n" compressed by the zstd and lz4 command lines: a frame of each format
UNREAD_COMPRESSIONS = {
    "zstd": bytes.fromhex("28b52ffd0458110000780aaefde922"),
    "lz4": bytes.fromhex("04224d186440a702000080780a0000000096935f9e"),
}


@pytest.mark.parametrize("name", sorted(UNREAD_COMPRESSIONS))
def test_a_compression_fastppl_does_not_read_is_named(name: str, tmp_path: Path) -> None:
    """Such a file was read as plain text: an ARPA parse error on its compressed bytes."""
    path = tmp_path / "m.arpa"  # the bytes tell, not the name
    path.write_bytes(UNREAD_COMPRESSIONS[name])
    for load in (NGramModel.from_arpa, NGramModel.from_file):
        with pytest.raises(ModelFormatError) as info:
            load(path)
        assert str(info.value).startswith(
            f"{path}: compressed with {name}, which fastppl does not read (it reads gzip, xz "
            "and bzip2 compressed files, and plain ones)"
        )
        assert info.value.path == str(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ModelFileNotFoundError) as info:
        NGramModel.from_arpa(tmp_path / "nope.arpa")
    assert isinstance(info.value, FileNotFoundError) and isinstance(info.value, FastpplError)
    assert info.value.filename == str(tmp_path / "nope.arpa")


# ---- (f) fuzzing: never anything but a load or a fastppl error ---------------------------------
_LINES = TINY.encode().split(b"\n")

mutation = st.one_of(
    st.tuples(st.just("delete"), st.integers(0, len(_LINES) - 1)),
    st.tuples(st.just("duplicate"), st.integers(0, len(_LINES) - 1)),
    st.tuples(st.just("garble"), st.integers(0, len(_LINES) - 1), st.binary(max_size=12)),
    st.tuples(st.just("bytes"), st.integers(0, len(TINY) - 1), st.binary(min_size=1, max_size=4)),
    st.tuples(st.just("truncate"), st.integers(0, len(TINY))),
)


def _mutate(data: bytes, m: tuple) -> bytes:
    kind = m[0]
    if kind in ("delete", "duplicate", "garble"):
        lines = data.split(b"\n")
        i = m[1] % len(lines)
        if kind == "delete":
            del lines[i]
        elif kind == "duplicate":
            lines.insert(i, lines[i])
        else:
            cut = len(m[2]) % (len(lines[i]) + 1)
            lines[i] = lines[i][:cut] + m[2] + lines[i][cut:]
        return b"\n".join(lines)
    if kind == "bytes":
        i = m[1] % (len(data) + 1)
        return data[:i] + m[2] + data[i + len(m[2]) :]
    return data[: m[1]]


FUZZ_EXAMPLES = int(os.environ.get("FASTPPL_FUZZ_EXAMPLES", "300"))


@settings(
    max_examples=FUZZ_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(mutations=st.lists(mutation, min_size=1, max_size=4))
def test_fuzz_reader(mutations: list[tuple], tmp_path: Path) -> None:
    data = TINY.encode()
    for m in mutations:
        data = _mutate(data, m)
    path = tmp_path / "fuzz.arpa"
    path.write_bytes(data)
    try:
        model = NGramModel.from_arpa(path)
    except FastpplError:
        return
    # whatever loads must score without trouble and write back
    model.logprobs(["a", "b", "zzz"])
    model.to_arpa(tmp_path / "out.arpa")
    NGramModel.from_arpa(tmp_path / "out.arpa")


def test_kenlm_module_agrees_on_missing_contexts(tmp_path: Path) -> None:
    """SRILM-pruned files: n-grams whose suffix is absent (KenLM inserts blanks)."""
    kenlm = pytest.importorskip("kenlm", reason="the kenlm module is not installed")
    # filler words and bigrams: KenLM's probing tables need spare slots for its blanks
    filler = [f"w{i}" for i in range(100)]
    text = (
        f"\\data\\\nngram 1={6 + len(filler)}\nngram 2={4 + len(filler)}\nngram 3=3\n\n"
        "\\1-grams:\n-1.5\t<unk>\t0\n-99\t<s>\t-0.5\n-0.7\t</s>\t0\n-0.6\ta\t-0.3\n-0.8\tb\t-0.25\n"
        "-1.2\tc\t-0.1\n"
        + "".join(f"-3\t{w}\t0\n" for w in filler)
        + "\n\\2-grams:\n-0.2\t<s> a\t-0.2\n-0.3\ta b\t-0.1\n-0.4\tb </s>\t0\n-0.6\tb c\t-0.05\n"
        + "".join(f"-2\t{w} </s>\t0\n" for w in filler)
        # "c a" (suffix of "b c a") and "c </s>" (suffix of "b c </s>") are missing
        + "\n\\3-grams:\n-0.1\t<s> a b\n-0.05\tb c a\n-0.07\tb c </s>\n\n\\end\\\n"
    )
    path = tmp_path / "pruned.arpa"
    path.write_text(text)
    ours = NGramModel.from_arpa(path)
    assert ours.ngram_counts == [5 + len(filler), 6 + len(filler), 3]  # two blanks
    klm = kenlm.Model(str(path))
    rng = np.random.default_rng(0)
    words = ["a", "b", "c", "zzz", "w1"]
    for _ in range(300):
        sent = list(rng.choice(words, size=int(rng.integers(1, 8))))
        mine = float(ours.logprobs(sent, base=10).sum())
        assert klm.score(" ".join(sent), bos=True, eos=True) == pytest.approx(mine, abs=1e-5), sent


def test_kenlm_module_on_fitted_five_gram(
    tmp_path: Path, machado_train_head_path: Path, machado_test_head_path: Path
) -> None:
    kenlm = pytest.importorskip("kenlm", reason="the kenlm module is not installed")
    corpus = Corpus.from_file(machado_train_head_path, tokenizer="whitespace", sentences="lines")
    model = NGramModel.fit(corpus, order=5, smoothing="modified_kneser_ney")
    path = tmp_path / "m.arpa"
    model.to_arpa(path)
    klm = kenlm.Model(str(path))
    lines = machado_test_head_path.read_text(encoding="utf-8").splitlines()
    ours = np.array([model.logprobs(s.split(), base=10).sum() for s in lines])
    theirs = np.array([klm.score(s, bos=True, eos=True) for s in lines])
    np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-4)


def test_unicode_spaces_are_part_of_words(tmp_path):
    """KenLM splits on ASCII whitespace only: a unigram made of no-break spaces and a period
    (lmplz writes such words for Gutenberg text) is a word of its own, not a second "."."""
    nbsp_word = "\u00a0\u00a0."
    text = (
        "\\data\\\nngram 1=5\n\n\\1-grams:\n-1.0\t<unk>\n0\t<s>\n-0.5\t</s>\n"
        f"-0.7\t.\n-0.9\t{nbsp_word}\n\n\\end\\\n"
    )
    path = tmp_path / "nbsp.arpa"
    path.write_text(text, encoding="utf-8")
    model = NGramModel.from_arpa(path)
    assert nbsp_word in model and "." in model
    assert model.logprob(nbsp_word) / math.log(10) == pytest.approx(-0.9, abs=1e-6)


@pytest.mark.parametrize("token", ["a b", "", "tab\there", "line\nbreak", "cr\r", "ff\x0c"])
def test_tokens_arpa_cannot_carry_are_refused_and_kept_by_the_binary_format(tmp_path, token):
    """ARPA separates words by ASCII whitespace: such a token is refused (naming it) by to_arpa
    and train_arpa, with nothing written; fastppl's binary format keeps it exactly."""
    from fastppl import train_arpa

    corpus = Corpus.from_sentences([["x", token, "y"], ["y", "x"]] * 3)
    model = NGramModel.fit(corpus, order=2, smoothing="kneser_ney")
    out = tmp_path / "m.arpa"
    with pytest.raises(InvalidArgumentError, match="cannot be written to an ARPA file") as e:
        model.to_arpa(out)
    assert f'"{token}"' in str(e.value) or not token.isprintable()
    with pytest.raises(InvalidArgumentError, match="cannot be written to an ARPA file"):
        train_arpa(corpus, out, order=2, smoothing="kneser_ney", memory="16M")
    assert list(tmp_path.iterdir()) == []
    model.save(tmp_path / "m.fppl")
    loaded = NGramModel.load(tmp_path / "m.fppl")
    assert token in loaded.vocab()
    np.testing.assert_array_equal(loaded.logprobs(["x", token]), model.logprobs(["x", token]))
