"""``tokenizer="kenlm"``: text read exactly as KenLM's lmplz and query read it.

One sentence per line (``\\n`` only), tokens separated by ASCII whitespace (never U+00A0 or
U+3000), and a blank line is the sentence ``<s> </s>`` for training and scoring alike. The live
comparisons run lmplz/query when they are found (``$KENLM_BIN`` or ``PATH``) and are skipped
otherwise; the comparison with the stored query scores of ``../shared/arpa`` always runs.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastppl import Corpus, NGramModel
from fastppl.errors import InvalidArgumentError
from fastppl.text import kenlm_sentences, tokenize_text

LN10 = math.log(10.0)

MIXED = "a\u00a0b c\r\n\n \t \r\nd\te\x0bf\x0cg\u3000h\n\n\nlast"
MIXED_EXPECTED = [
    ["a\u00a0b", "c"],  # U+00A0 is not a separator for KenLM; \r is a space
    [],  # blank line
    [],  # spaces, tab, \r only: blank
    ["d", "e", "f", "g\u3000h"],  # \t \v \f separate; U+3000 does not
    [],
    [],
    ["last"],  # a last line without \n is a sentence
]


def _words(corpus: Corpus) -> list[list[str]]:
    return list(corpus)


def test_mixed_whitespace_and_blank_lines():
    c = Corpus.from_text(MIXED, tokenizer="kenlm")
    assert _words(c) == MIXED_EXPECTED
    assert len(c) == 7 and c.num_tokens == 7
    assert c.sentence_lengths().tolist() == [2, 0, 0, 4, 0, 0, 1]
    assert kenlm_sentences(MIXED) == MIXED_EXPECTED
    assert tokenize_text(MIXED, tokenizer="kenlm") == MIXED_EXPECTED
    # the whitespace tokenizer (str.split) splits U+00A0 and U+3000 and drops blank lines
    w = Corpus.from_text(MIXED, tokenizer="whitespace", sentences="lines")
    assert len(w) == 3 and w.num_tokens == 9


def test_ends_of_text():
    def n(text: str) -> int:
        return len(Corpus.from_text(text, tokenizer="kenlm"))

    assert n("") == 0
    assert n("\n") == 1  # one blank line
    assert n("\n\n") == 2
    assert n("a\n") == n("a") == 1
    assert n("a\n \t") == 1  # blanks after the last \n: no line for KenLM


def test_file_keeps_lone_carriage_returns_as_spaces(tmp_path: Path):
    p = tmp_path / "t.txt"
    p.write_bytes("a\rb\r\n\r\nc\u00a0d\n".encode())
    c = Corpus.from_file(p, tokenizer="kenlm")
    assert _words(c) == [["a", "b"], [], ["c\u00a0d"]]
    # the other tokenizers read text mode: a lone \r ends a line
    assert _words(Corpus.from_file(p, tokenizer="whitespace", sentences="lines")) == [
        ["a"],
        ["b"],
        ["c", "d"],
    ]


def test_kenlm_reads_lines_only():
    assert len(Corpus.from_text("a b\nc", tokenizer="kenlm", sentences="lines")) == 2
    for mode in ("terminators", "punkt", "none"):
        with pytest.raises(InvalidArgumentError, match="one sentence per line"):
            Corpus.from_text("a", tokenizer="kenlm", sentences=mode)
        with pytest.raises(InvalidArgumentError):
            tokenize_text("a", tokenizer="kenlm", sentences=mode)


def test_documents_and_skip_prefixes():
    c = Corpus.from_text("# x\n\na\n", tokenizer="kenlm", skip_line_prefixes=("#",))
    assert _words(c) == [[], ["a"]]
    c = Corpus.from_text("A\n\nB\n", tokenizer="kenlm", lowercase=True)
    assert _words(c) == [["a"], [], ["b"]]


_ALPHABET = st.sampled_from(
    ["a", "b", "é", " ", "\t", "\n", "\r", "\x0b", "\x0c", "\u00a0", "\u3000", "\x00", "\x1f"]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_ALPHABET, max_size=40).map("".join))
def test_rust_split_matches_the_python_definition(text: str):
    assert _words(Corpus.from_text(text, tokenizer="kenlm")) == kenlm_sentences(text)


def test_blank_lines_are_counted_and_scored_as_bos_eos():
    text = "a b\n\nb a\n\n\na\n"
    c = Corpus.from_text(text, tokenizer="kenlm")
    m = NGramModel.fit(c, order=2, smoothing="witten_bell")
    assert m.count(["<s>", "</s>"]) == 3
    assert m.count(["</s>"]) == 6
    r = m.evaluate(c)
    assert r.num_tokens == c.num_tokens + len(c) == 5 + 6
    blank = m.logprob("</s>", ["<s>"])
    assert r.sentence_log_probs[1] == r.sentence_log_probs[3] == pytest.approx(blank)
    # from_sentences drops empty sentences: no <s> </s> there
    dropped = Corpus.from_sentences([["a", "b"], [], ["b", "a"], [], [], ["a"]])
    assert NGramModel.fit(dropped, order=2, smoothing="mle").count(["<s>", "</s>"]) == 0
    # bos_eos=False: an empty sentence has nothing to count or score
    m0 = NGramModel.fit(c, order=2, smoothing="witten_bell", bos_eos=False)
    assert m0.evaluate(c).num_tokens == 5


# ---- KenLM's stored scores (../shared/arpa), with blank lines added to the test text ----------
def test_query_scores_with_blank_lines(shared_dir: Path, tmp_path: Path):
    arpa = shared_dir / "arpa"
    lines = (arpa / "machado.test.txt").read_text(encoding="utf-8").split("\n")
    assert lines[-1] == ""
    lines = lines[:-1]
    ref = []
    for line in (arpa / "machado.o3.query-sentences.txt").read_text().splitlines():
        m = re.fullmatch(r"Total: (\S+) OOV: (\d+)", line)
        assert m, line
        ref.append(float(m[1]))
    model = NGramModel.from_arpa(arpa / "machado.o3.arpa.gz")
    # a blank line before every 5th sentence, and one at the end; some lines end in \r\n
    out, expected_lines = [], []
    blank = model.logprob("</s>", ["<s>"], base=10)
    for i, line in enumerate(lines):
        if i % 5 == 0:
            out.append("")
            expected_lines.append(blank)
        out.append(line + ("\r" if i % 3 == 0 else ""))
        expected_lines.append(ref[i])
    out.append(" \t")
    expected_lines.append(blank)
    path = tmp_path / "test-blank.txt"
    path.write_bytes(("\n".join(out) + "\n").encode())
    corpus = Corpus.from_file(path, tokenizer="kenlm")
    assert len(corpus) == len(expected_lines) == 3404 + 681 + 1
    r = model.evaluate(corpus, oov="unk")
    np.testing.assert_allclose(r.sentence_log_probs / LN10, expected_lines, rtol=1e-6, atol=1e-5)
    assert r.num_tokens == 66875 + 682  # query's Tokens plus one </s> per blank line
    summary = {}
    for line in (arpa / "machado.o3.query-summary.txt").read_text().splitlines():
        key, value = line.split(":\t")
        summary[key] = float(value)
    total10 = summary["Tokens"] * -math.log10(summary["Perplexity including OOVs"])
    want = 10 ** (-(total10 + 682 * blank) / (summary["Tokens"] + 682))
    assert r.perplexity == pytest.approx(want, rel=1e-6)


# ---- live lmplz / query -----------------------------------------------------------------------
def _kenlm_tool(name: str) -> str:
    folder = os.environ.get("KENLM_BIN")
    path = shutil.which(name, path=folder) if folder else shutil.which(name)
    if path is None:
        pytest.skip(f"KenLM's {name} not found (set KENLM_BIN to the folder of lmplz and query)")
    return path


def _read_arpa(path: Path) -> dict[int, dict[str, tuple[float, float | None]]]:
    grams: dict[int, dict[str, tuple[float, float | None]]] = {}
    order = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.fullmatch(r"\\(\d+)-grams:", line)
        if m:
            order = int(m[1])
            grams[order] = {}
        elif order and line and not line.startswith("\\"):
            f = line.split("\t")
            grams[order][f[1]] = (float(f[0]), float(f[2]) if len(f) > 2 else None)
    return grams


@pytest.fixture(scope="module")
def blank_text(shared_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """3,000 training lines with blank and whitespace-only lines, tabs, \\r\\n and U+00A0."""
    src = (shared_dir / "arpa" / "machado-small.train.txt").read_text(encoding="utf-8")
    out = []
    for i, line in enumerate(src.split("\n")[:3000]):
        if i % 7 == 3:
            out.append("")
        if i % 11 == 5:
            out.append(" \t ")
        if i % 13 == 0:
            line = line.replace(" ", "\t", 1)
        if i % 17 == 0:
            line += "\r"
        if i % 19 == 0:
            line = line.replace(" ", "\u00a0", 1)
        out.append(line)
    path = tmp_path_factory.mktemp("kenlm") / "blank.txt"
    path.write_bytes(("\n".join(out) + "\n").encode())
    return path


@pytest.mark.kenlm_bin
def test_lmplz_parity_with_blank_lines(blank_text: Path, tmp_path: Path):
    lmplz = _kenlm_tool("lmplz")
    ref_path = tmp_path / "lmplz.arpa"
    with blank_text.open("rb") as f, ref_path.open("wb") as out:
        subprocess.run(
            [lmplz, "-o", "3", "-S", "20%", "-T", str(tmp_path)],
            stdin=f,
            stdout=out,
            stderr=subprocess.DEVNULL,
            check=True,
        )
    corpus = Corpus.from_file(blank_text, tokenizer="kenlm")
    model = NGramModel.fit(corpus, order=3)
    got_path = tmp_path / "fastppl.arpa"
    model.to_arpa(got_path)
    ref, got = _read_arpa(ref_path), _read_arpa(got_path)
    assert sorted(ref) == sorted(got) == [1, 2, 3]
    assert "<s> </s>" in ref[2]
    for order in ref:
        assert set(got[order]) == set(ref[order]), order
        for gram, (p, b) in ref[order].items():
            q, c = got[order][gram]
            assert q == pytest.approx(p, abs=1e-5), gram
            assert (c or 0.0) == pytest.approx(b or 0.0, abs=1e-5), gram


@pytest.mark.kenlm_bin
def test_query_parity_with_blank_lines(blank_text: Path, shared_dir: Path):
    query = _kenlm_tool("query")
    arpa = shared_dir / "arpa" / "machado-small.o5.arpa.gz"

    def run(verbosity: str) -> str:
        with blank_text.open("rb") as f:
            proc = subprocess.run(
                [query, "-v", verbosity, str(arpa)], stdin=f, capture_output=True, check=True
            )
        return proc.stdout.decode()

    totals = [float(m[1]) for m in re.finditer(r"Total: (\S+) OOV: \d+", run("sentence"))]
    summary = dict(re.findall(r"^([^:\n]+):\t(\S+)$", run("summary"), re.MULTILINE))
    corpus = Corpus.from_file(blank_text, tokenizer="kenlm")
    r = NGramModel.from_arpa(arpa).evaluate(corpus)
    assert len(totals) == len(corpus) == 3000 + 429 + 273
    np.testing.assert_allclose(r.sentence_log_probs / LN10, totals, rtol=1e-6, atol=1e-5)
    assert r.num_tokens == int(summary["Tokens"])
    assert r.perplexity == pytest.approx(float(summary["Perplexity including OOVs"]), rel=1e-6)
