"""`NGramModel.evaluate`: totals, micro/macro averages, OOV bookkeeping, bases, determinism."""

from __future__ import annotations

import itertools
import json
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from fastppl import Corpus, NGramModel

TRAIN = [
    ["the", "cat", "sat", "on", "the", "mat"],
    ["the", "dog", "sat"],
    ["a", "cat", "saw", "the", "dog"],
    ["the", "mat", "was", "red"],
]
DOCS = [
    [["the", "cat", "sat"], ["a", "dog", "saw", "the", "cat"]],
    [["the", "mat"]],
    [],  # a document with no sentence: no tokens, left out of macro averages
    [["a", "zebra", "sat", "on", "the", "mat"], ["zebra"]],
]


@pytest.fixture(scope="module", params=["laplace", "kneser_ney", "witten_bell"])
def model(request):
    return NGramModel.fit(Corpus.from_sentences(TRAIN), order=3, smoothing=request.param)


@pytest.fixture(scope="module")
def docs():
    return Corpus.from_documents(DOCS)


def by_hand(model, documents, skip_oov=False):
    """Per-document (sum ln p, tokens) from logprobs() of each sentence."""
    vocab = set(model.vocab())
    out = []
    for doc in documents:
        lp, n = 0.0, 0
        for s in doc:
            values = model.logprobs(s)
            assert len(values) == len(s) + 1
            for i, v in enumerate(values):
                if skip_oov and i < len(s) and s[i] not in vocab:
                    continue
                lp += v
                n += 1
        out.append((lp, n))
    return out


@pytest.mark.parametrize("oov", ["unk", "skip"])
def test_micro_and_macro(model, docs, oov):
    r = model.evaluate(docs, oov=oov)
    per_doc = by_hand(model, DOCS, skip_oov=oov == "skip")
    total_lp = math.fsum(lp for lp, _ in per_doc)
    total_n = sum(n for _, n in per_doc)
    assert r.num_tokens == total_n
    assert r.log_prob == pytest.approx(total_lp, rel=1e-12)
    # micro: pooled tokens
    assert r.perplexity == pytest.approx(math.exp(-total_lp / total_n), rel=1e-12)
    # macro: mean of the per-document perplexities, the empty document left out
    ppl = [math.exp(-lp / n) for lp, n in per_doc if n]
    assert r.macro_perplexity == pytest.approx(sum(ppl) / len(ppl), rel=1e-12)
    assert len(r.document_perplexities) == 4
    assert np.isnan(r.document_perplexities[2])
    np.testing.assert_allclose(r.document_perplexities[[0, 1, 3]], ppl, rtol=1e-12)
    np.testing.assert_array_equal(r.document_num_tokens, [n for _, n in per_doc])
    assert r.macro_perplexity != pytest.approx(r.perplexity, rel=1e-3)


def test_oov_bookkeeping(model, docs):
    unk = model.evaluate(docs, oov="unk", token_logprobs=True)
    skip = model.evaluate(docs, oov="skip", token_logprobs=True)
    # "zebra" twice; tokens: 3+1 + 5+1 + 2+1 + 6+1 + 1+1
    assert unk.num_oov == skip.num_oov == 2
    assert unk.num_tokens == 22
    assert skip.num_tokens == 20
    np.testing.assert_array_equal(unk.sentence_num_tokens, [4, 6, 3, 7, 2])
    np.testing.assert_array_equal(skip.sentence_num_tokens, [4, 6, 3, 6, 1])
    # the same token scores under both policies: skipping removes a score, not a history
    np.testing.assert_array_equal(unk.token_logprobs, skip.token_logprobs)
    flat = [w for doc in DOCS for s in doc for w in [*s, "</s>"]]
    oov_mask = np.array([w == "zebra" for w in flat])
    tl = unk.token_logprobs
    assert unk.log_prob == pytest.approx(math.fsum(tl), rel=1e-12)
    assert skip.log_prob == pytest.approx(math.fsum(tl[~oov_mask]), rel=1e-12)
    assert tl[oov_mask] == pytest.approx(
        [model.logprob("<unk>", ["<s>", "a"]), model.logprob("<unk>", ["<s>"])]
    )
    # <unk> stays in the history of the next token: p(sat | a <unk>)
    i = flat.index("zebra")
    assert tl[i + 1] == pytest.approx(model.logprob("sat", ["a", "<unk>"]), rel=1e-12)
    assert tl[i + 1] == pytest.approx(model.logprob("sat", ["a", "zebra"]), rel=1e-12)
    # a perplexity excluding OOVs is lower here (OOVs are the least likely tokens)
    assert skip.perplexity < unk.perplexity


def test_token_logprobs_layout(model, docs):
    r = model.evaluate(docs, token_logprobs=True)
    assert r.token_logprobs.dtype == np.float64
    assert len(r.token_logprobs) == r.num_tokens
    assert math.fsum(r.token_logprobs) == pytest.approx(r.log_prob, rel=1e-12)
    start = 0
    sentences = [s for doc in DOCS for s in doc]
    for k, s in enumerate(sentences):
        got = r.token_logprobs[start : start + len(s) + 1]
        np.testing.assert_array_equal(got, model.logprobs(s))
        assert math.fsum(got) == pytest.approx(r.sentence_log_probs[k], rel=1e-12)
        start += len(s) + 1
    assert model.evaluate(docs).token_logprobs is None


def test_logprobs_follow_the_history(model):
    s = ["a", "cat", "sat", "on", "the", "mat"]
    values = model.logprobs(s)
    padded = ["<s>", *s, "</s>"]
    for i in range(1, len(padded)):
        assert values[i - 1] == model.logprob(padded[i], padded[max(0, i - 2) : i]), i
    plain = NGramModel.fit(
        Corpus.from_sentences(TRAIN), order=3, smoothing="laplace", bos_eos=False
    )
    values = plain.logprobs(s)
    assert len(values) == len(s)
    for i in range(len(s)):
        assert values[i] == plain.logprob(s[i], s[max(0, i - 2) : i]), i


@pytest.mark.parametrize("bos_eos", [True, False])
def test_vocab_holds_the_markers_a_model_uses(bos_eos):
    """With bos_eos, ``<s>`` and ``</s>`` are words of the model (as in KenLM's); without, the
    model never sees nor predicts them, and neither lists them nor says it holds them: its
    vocabulary is then exactly the |V| its distributions sum over."""
    m = NGramModel.fit(
        Corpus.from_sentences(TRAIN), order=2, smoothing="witten_bell", bos_eos=bos_eos
    )
    words = m.vocab()
    assert words[0] == "<unk>" and len(set(words)) == len(words)
    for marker in ("<s>", "</s>"):
        assert (marker in words) == (marker in m) == bos_eos
    assert len(words) == m.vocab_size + bos_eos  # |V| leaves <s> out


@pytest.mark.parametrize(
    ("base", "divisor"),
    [(2, math.log(2)), (10, math.log(10)), (math.e, 1.0), ("e", 1.0), (2.5, math.log(2.5))],
)
def test_bases(model, docs, base, divisor):
    ln = model.logprob("sat", ["the", "cat"])
    assert model.logprob("sat", ["the", "cat"], base=base) == pytest.approx(ln / divisor, rel=1e-14)
    s = ["the", "dog", "saw", "a", "cat"]
    np.testing.assert_allclose(
        model.logprobs(s, base=base), model.logprobs(s) / divisor, rtol=1e-14
    )
    r = model.evaluate(docs)
    if base != "e":
        assert r.log_prob_in(base) == pytest.approx(r.log_prob / divisor, rel=1e-14)
    assert model.prob("sat", ["the", "cat"]) == pytest.approx(math.exp(ln), rel=1e-14)


def test_cross_entropy_consistency(model, docs):
    for oov in ("unk", "skip"):
        r = model.evaluate(docs, oov=oov)
        assert 2**r.cross_entropy_bits == pytest.approx(r.perplexity, rel=1e-13)
        assert r.cross_entropy == pytest.approx(-r.log_prob / r.num_tokens, rel=1e-14)
        assert r.cross_entropy_bits == pytest.approx(r.cross_entropy / math.log(2), rel=1e-14)
        assert math.exp(r.cross_entropy) == pytest.approx(r.perplexity, rel=1e-14)
        assert 10 ** (-r.log_prob_in(10) / r.num_tokens) == pytest.approx(r.perplexity, rel=1e-12)
        assert model.perplexity(docs, oov=oov) == r.perplexity


def test_same_result_twice(model, docs):
    a = model.evaluate(docs, token_logprobs=True)
    b = model.evaluate(docs, token_logprobs=True)
    assert a.log_prob == b.log_prob and a.perplexity == b.perplexity
    np.testing.assert_array_equal(a.token_logprobs, b.token_logprobs)
    c = NGramModel.fit(Corpus.from_sentences(TRAIN), order=3, smoothing=model.smoothing)
    assert c.evaluate(docs).log_prob == a.log_prob


DETERMINISM_SCRIPT = textwrap.dedent(
    """
    import hashlib, json, sys
    from fastppl import Corpus, NGramModel
    train = Corpus.from_file(sys.argv[1], tokenizer="whitespace", sentences="lines")
    test = Corpus.from_file(sys.argv[2], tokenizer="whitespace", sentences="lines")
    out = {}
    for smoothing, order in [("modified_kneser_ney", 4), ("witten_bell", 3), ("laplace", 2)]:
        m = NGramModel.fit(train, order=order, smoothing=smoothing)
        r = m.evaluate(test, token_logprobs=True)
        out[smoothing] = {
            "log_prob": r.log_prob.hex(),
            "ppl": r.perplexity.hex(),
            "sentences": hashlib.sha256(r.sentence_log_probs.tobytes()).hexdigest(),
            "tokens": hashlib.sha256(r.token_logprobs.tobytes()).hexdigest(),
            "counts": m.ngram_counts,
            "discounts": [[d.hex() for d in ds] for ds in m.discounts],
            "vocab": hashlib.sha256("\\n".join(m.vocab()).encode()).hexdigest(),
        }
    print(json.dumps(out, sort_keys=True))
    """
)


def run_with_threads(threads: str | None, train: Path, test: Path) -> dict:
    env = dict(os.environ)
    env.pop("RAYON_NUM_THREADS", None)
    if threads is not None:
        env["RAYON_NUM_THREADS"] = threads
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            DETERMINISM_SCRIPT,
            str(train),
            str(test),
        ],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    return json.loads(done.stdout)


def test_independent_of_thread_count(machado_train_head_path, machado_test_head_path):
    texts = (machado_train_head_path, machado_test_head_path)
    one = run_with_threads("1", *texts)
    default = run_with_threads(None, *texts)
    three = run_with_threads("3", *texts)
    eight = run_with_threads("8", *texts)  # more threads than this machine may have cores
    assert one == default == three == eight


TEXTS = [
    "The cat sat. A dog saw the cat!\nthe mat",
    "",
    "# a comment line\nA zebra sat on the mat.\n\nzebra",
    "\n\n",
    "the dog sat on the red mat. It was red.",
]


@pytest.mark.parametrize(
    "reading",
    [
        {"tokenizer": "whitespace", "sentences": "lines"},
        {"tokenizer": "whitespace", "sentences": "terminators"},
        {"tokenizer": "whitespace", "sentences": "punkt"},
        {"tokenizer": "kenlm"},
        {"tokenizer": "nltk"},
        {"tokenizer": "nltk", "sentences": "lines", "lowercase": True},
        {"tokenizer": "whitespace", "skip_line_prefixes": ("#",), "lowercase": True},
    ],
)
@pytest.mark.parametrize("oov", ["unk", "skip"])
def test_evaluate_texts_equals_evaluate_of_from_texts(model, reading, oov):
    """One Rust call per batch (the Ray scoring actors' path) gives evaluate's numbers on
    Corpus.from_texts, document by document, for every native tokenizer and cleaning."""
    got = model.evaluate_texts(TEXTS, oov, **reading)
    expected = model.evaluate(Corpus.from_texts(TEXTS, **reading), oov)
    np.testing.assert_array_equal(got.document_log_probs, expected.document_log_probs)
    np.testing.assert_array_equal(got.document_num_tokens, expected.document_num_tokens)
    np.testing.assert_array_equal(got.sentence_log_probs, expected.sentence_log_probs)
    assert (got.log_prob, got.num_tokens, got.num_oov) == (
        expected.log_prob,
        expected.num_tokens,
        expected.num_oov,
    )


def test_evaluate_texts_rejects_what_from_texts_rejects(model):
    from fastppl.errors import (
        EmptyCorpusError,
        InvalidArgumentError,
        InvalidTypeError,
        OutOfVocabularyError,
    )

    with pytest.raises(InvalidTypeError, match="str"):
        model.evaluate_texts(["a", b"b"])
    with pytest.raises(InvalidTypeError, match="texts must be an iterable of str, not one str"):
        model.evaluate_texts("a b", tokenizer="whitespace")  # not the characters "a", " ", "b"
    with pytest.raises(InvalidArgumentError, match="tokenizer"):
        model.evaluate_texts(["a"], tokenizer="spaces")
    with pytest.raises(InvalidArgumentError):
        model.evaluate_texts(["a"], tokenizer="whitespace", skip_line_prefixes=("",))
    with pytest.raises(InvalidArgumentError, match="oov"):
        model.evaluate_texts(["a"], "drop", tokenizer="whitespace")
    with pytest.raises(OutOfVocabularyError):
        model.evaluate_texts(["a zebra"], "error", tokenizer="whitespace")
    with pytest.raises(EmptyCorpusError):
        model.evaluate_texts(["", "\n"], tokenizer="whitespace")


@pytest.mark.parametrize("oov", ["unk", "skip"])
def test_totals_are_numpys_sums_of_the_arrays(machado_train_head_path, oov):
    """The totals the core adds up (without NumPy) are, bit for bit, NumPy's sums of the
    arrays: over a corpus of thousands of sentences (NumPy's pairwise blocks and halvings) in
    documents of every length from 0 to 300 sentences."""
    lines = machado_train_head_path.read_text(encoding="utf-8").splitlines()
    train = Corpus.from_sentences(line.split() for line in lines[:2000])
    model = NGramModel.fit(train, order=3, smoothing="kneser_ney")
    sentences = [line.split() for line in lines[2000:]]
    documents, start = [], 0
    for size in [0, 1, 7, 8, 9, 127, 128, 129, 300, 2]:
        documents.append(sentences[start : start + size])
        start += size
    r = model.evaluate(Corpus.from_documents(documents), oov=oov)
    assert r.num_oov > 0
    assert r.log_prob == float(np.sum(r.sentence_log_probs))
    assert r.num_tokens == int(r.sentence_num_tokens.sum())
    bounds = np.cumsum([0] + [len(d) for d in documents])
    for d, (a, b) in enumerate(itertools.pairwise(bounds)):
        assert r.document_log_probs[d] == np.sum(r.sentence_log_probs[a:b]), d
        assert r.document_num_tokens[d] == r.sentence_num_tokens[a:b].sum(), d
    assert r.sentence_log_probs.dtype == np.float64
    assert r.sentence_num_tokens.dtype == r.document_num_tokens.dtype == np.int64


def test_results_pickle_with_their_arrays(model, docs):
    import pickle

    r = model.evaluate(docs, token_logprobs=True)
    back = pickle.loads(pickle.dumps(r))
    assert back == r
    for name in ("sentence_log_probs", "document_num_tokens", "token_logprobs"):
        assert np.array_equal(getattr(back, name), getattr(r, name)), name


NO_NUMPY_SCRIPT = textwrap.dedent(
    """
    import sys
    import fastppl
    corpus = fastppl.Corpus.from_text("The cat sat. The dog sat too.", tokenizer="nltk")
    model = fastppl.NGramModel.fit(corpus, order=2, smoothing="kneser_ney")
    result = model.evaluate(corpus)
    assert result.perplexity > 1 and result.num_tokens == 11, result
    assert "numpy" not in sys.modules, "numpy was loaded"
    assert result.sentence_num_tokens.tolist() == [5, 6]
    assert "numpy" in sys.modules
    """
)


def test_a_perplexity_does_not_load_numpy():
    """`import fastppl` and an evaluation's totals leave NumPy unloaded (its import is most of
    the package's; its BLAS threads, started then, spin on the cores for a while); the arrays
    load it when read."""
    subprocess.run([sys.executable, "-c", NO_NUMPY_SCRIPT], check=True, timeout=120)
