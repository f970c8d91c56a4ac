"""The modified Kneser-Ney reference vs KenLM lmplz's ARPA files and query's scores.

The ARPA files in ../shared/arpa were written by `lmplz -o N` (KenLM 4cb443e6); the reference
must give every n-gram's log10 probability and log10 backoff to 1e-5, the same n-gram set, the
discounts lmplz printed, and the test-set perplexities of `query` to 1e-4 relative.
"""

from __future__ import annotations

import gzip
import math
from functools import cache

import pytest

from helpers.reference_loader import reference as ref
from helpers.shared_data import shared_path

pytestmark = pytest.mark.shared  # every test reads the shared folder

# lmplz's log for machado-small, -o 5 (orders 1-4 in ../shared/arpa/README.md; order 5 computed
# here and equal to lmplz's float32 formula).
SMALL_O5_DISCOUNTS = [
    (0.625263, 1.10383, 1.65086),
    (0.791238, 1.13345, 1.42857),
    (0.894525, 1.26581, 1.45066),
    (0.959705, 1.39626, 1.80109),
    (0.984265, 1.57121, 1.59071),
]
FULL_O3_DISCOUNTS = [
    (0.607087, 1.03121, 1.58137),
    (0.767682, 1.14503, 1.33537),
    (0.862339, 1.21114, 1.32376),
]


def read_sentences(name: str) -> list[list[str]]:
    with open(shared_path("arpa", name), encoding="utf-8") as f:
        return [line.split() for line in f]


ArpaEntries = dict[tuple[str, ...], tuple[float, float | None]]


def read_arpa(name: str) -> tuple[dict[int, int], ArpaEntries]:
    """A tiny ARPA reader: the header counts and {n-gram: (log10 prob, log10 backoff or None)}."""
    header: dict[int, int] = {}
    entries: ArpaEntries = {}
    with gzip.open(shared_path("arpa", name), "rt", encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("ngram "):
                n, c = line[len("ngram ") :].split("=")
                header[int(n)] = int(c)
            elif "\t" in line:
                fields = line.split("\t")
                backoff = float(fields[2]) if len(fields) > 2 else None
                entries[tuple(fields[1].split(" "))] = (float(fields[0]), backoff)
    return header, entries


@cache
def model(train: str, order: int):
    return ref.ReferenceModel(read_sentences(train), order=order, smoothing="modified_kneser_ney")


@cache
def arpa(name: str):
    return read_arpa(name)


CASES = [
    ("machado-small.train.txt", 5, "machado-small.o5", SMALL_O5_DISCOUNTS),
    ("machado.train.txt", 3, "machado.o3", FULL_O3_DISCOUNTS),
]


@pytest.mark.parametrize(("train", "order", "tag", "expected"), CASES)
def test_discounts(train, order, tag, expected):
    m = model(train, order)
    assert len(m.discounts) == order
    for got, want in zip(m.discounts, expected, strict=True):
        # lmplz prints 6 significant digits of its float32 discounts
        assert got == pytest.approx(want, rel=5e-6, abs=0)


def test_discounts_are_float32_of_the_count_of_counts():
    m = model("machado-small.train.txt", 5)
    for order, table in enumerate(m.model_counts, start=1):
        n = ref.count_of_counts(table)
        assert all(x > 0 for x in n[1:]), order
        d = ref.mkn_discounts(n)
        assert d == m.discounts[order - 1]
        assert all(ref.to_float32(x) == x for x in d)
    # <s> and <unk> are unigrams of lmplz with adjusted count 0: never in n1..n4. The unigram
    # count-of-counts are over the predicted types (</s> included) only.
    n1 = ref.count_of_counts(m.model_counts[0])
    assert sum(n1[1:]) + sum(1 for c in m.model_counts[0].values() if c > 4) == len(m.vocab) - 1


@pytest.mark.parametrize(("train", "order", "tag", "expected"), CASES)
def test_arpa_entries(train, order, tag, expected):
    header, entries = arpa(f"{tag}.arpa.gz")
    m = model(train, order)
    mine = {gram: (p, b) for gram, p, b in m.to_arpa_entries()}
    # the same n-gram set, order by order: every counted n-gram + <unk> and <s>
    assert set(mine) == set(entries)
    for n in range(1, order + 1):
        assert sum(1 for g in mine if len(g) == n) == header[n]
    assert len(m.counts[0]) + 2 == header[1]
    for n in range(2, order + 1):
        assert len(m.counts[n - 1]) == header[n]
    worst_p = worst_b = 0.0
    for gram, (p, b) in entries.items():
        q, c = mine[gram]
        worst_p = max(worst_p, abs(p - q))
        if b is None:
            assert c is None, gram
            assert len(gram) == order
        else:
            worst_b = max(worst_b, abs(b - c))
    assert worst_p < 1e-5
    assert worst_b < 1e-5
    # <s>: probability 1 (log10 0) in lmplz's ARPA; <unk>: gamma(())/|V|, first unigram
    assert entries[("<s>",)][0] == 0.0
    assert mine[("<unk>",)][0] == pytest.approx(math.log10(m.gamma(()) / m.vocab_size), abs=1e-12)
    assert entries[("<unk>",)][0] == pytest.approx(mine[("<unk>",)][0], abs=1e-5)
    assert m.vocab_size == header[1] - 1  # |V| includes <unk>, excludes <s>


def read_summary(tag: str) -> dict[str, float]:
    out = {}
    with open(shared_path("arpa", f"{tag}.query-summary.txt"), encoding="utf-8") as f:
        for line in f:
            key, value = line.rstrip("\n").split(":\t")
            out[key] = float(value)
    return out


@pytest.mark.parametrize(("train", "order", "tag", "expected"), CASES)
def test_query_perplexities_from_reference_model(train, order, tag, expected):
    summary = read_summary(tag)
    m = model(train, order)
    test = read_sentences("machado.test.txt")
    log_prob, tokens, oovs = m.evaluate(test, oov="unk")
    assert tokens == summary["Tokens"] == 66875
    assert oovs == summary["OOVs"]
    assert math.exp(-log_prob / tokens) == pytest.approx(
        summary["Perplexity including OOVs"], rel=1e-4
    )
    log_prob_x, tokens_x, oovs_x = m.evaluate(test, oov="skip")
    assert oovs_x == oovs
    assert tokens_x == tokens - oovs
    assert math.exp(-log_prob_x / tokens_x) == pytest.approx(
        summary["Perplexity excluding OOVs"], rel=1e-4
    )
    # per-sentence totals (log10, query -v sentence); KenLM sums a sentence in float32
    with open(shared_path("arpa", f"{tag}.query-sentences.txt"), encoding="utf-8") as f:
        totals = [(float(line.split()[1]), int(line.split()[3])) for line in f]
    assert len(totals) == len(test)
    for sentence, (total, oov) in zip(test, totals, strict=True):
        mine = m.sentence_logprob(sentence) / math.log(10)
        assert mine == pytest.approx(total, abs=2e-4, rel=1e-5)
        assert oov == sum(1 for w in sentence if w not in m.vocab)


def full_scores(entries, unigrams, order: int, sentence: list[str]) -> list[tuple[float, bool]]:
    """KenLM's FullScore over an ARPA file, per predicted token: (log10 p, is OOV).

    log10 p(w|h) = log10 p(w|h') + the backoffs of the suffixes of h longer than h', h' the
    longest suffix with (h', w) in the model; a missing backoff is 0. An OOV is scored as
    <unk> and stays in the history."""
    words = ["<s>"] + [w if w in unigrams else "<unk>" for w in sentence] + ["</s>"]
    out = []
    for i in range(1, len(words)):
        history = tuple(words[max(0, i - order + 1) : i])
        score = 0.0
        for start in range(len(history) + 1):
            context = history[start:]
            gram = (*context, words[i])
            if gram in entries:
                score += entries[gram][0]
                break
            score += entries.get(context, (0.0, 0.0))[1] or 0.0
        out.append((score, i <= len(sentence) and sentence[i - 1] not in unigrams))
    return out


@pytest.mark.parametrize(("train", "order", "tag", "expected"), CASES)
def test_query_perplexities_from_arpa_backoff_scoring(train, order, tag, expected):
    summary = read_summary(tag)
    _, entries = arpa(f"{tag}.arpa.gz")
    unigrams = {g[0] for g in entries if len(g) == 1} - {"<unk>"}
    total = total_oov = 0.0
    tokens = oovs = 0
    for sentence in read_sentences("machado.test.txt"):
        for score, is_oov in full_scores(entries, unigrams, order, sentence):
            total += score
            tokens += 1
            if is_oov:
                total_oov += score
                oovs += 1
    assert tokens == summary["Tokens"]
    assert oovs == summary["OOVs"]
    assert 10 ** (-total / tokens) == pytest.approx(summary["Perplexity including OOVs"], rel=1e-4)
    assert 10 ** (-(total - total_oov) / (tokens - oovs)) == pytest.approx(
        summary["Perplexity excluding OOVs"], rel=1e-4
    )
