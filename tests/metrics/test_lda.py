"""Tests for fastppl.lda."""

import math
import warnings

import numpy as np
import pytest

from fastppl import lda
from fastppl.errors import InvalidArgumentError, InvalidTypeError


def random_model(rng, docs=6, topics=3, vocab=20):
    theta = rng.dirichlet(np.ones(topics), size=docs)
    phi = rng.dirichlet(np.ones(vocab) * 0.5, size=topics)
    return theta, phi


def dense_perplexity(theta, phi, token_lists):
    probs = theta @ phi
    logs = [np.log(probs[m, ids]).sum() for m, ids in enumerate(token_lists)]
    return math.exp(-sum(logs) / sum(len(ids) for ids in token_lists))


def synthetic_corpus(rng, docs=40, vocab=30, length=25):
    theta, phi = random_model(rng, docs=docs, topics=3, vocab=vocab)
    return [
        rng.choice(vocab, size=length, p=theta[m] @ phi / (theta[m] @ phi).sum())
        for m in range(docs)
    ]


def as_bows(token_lists):
    return [list(zip(*np.unique(ids, return_counts=True), strict=True)) for ids in token_lists]


def as_sparse(token_lists, vocab):
    sparse = pytest.importorskip("scipy.sparse")
    rows = np.repeat(np.arange(len(token_lists)), [len(t) for t in token_lists])
    cols = np.concatenate(token_lists)
    return sparse.csr_matrix((np.ones(cols.size), (rows, cols)), shape=(len(token_lists), vocab))


def test_matches_dense_formula_for_every_input_format():
    rng = np.random.default_rng(0)
    theta, phi = random_model(rng)
    docs = [rng.integers(0, 20, size=n) for n in (5, 0, 12, 1, 7, 30)]
    want = dense_perplexity(theta, phi, docs)
    assert lda.perplexity(theta, phi, docs) == pytest.approx(want, rel=1e-12)
    assert lda.perplexity(theta, phi, as_bows(docs)) == pytest.approx(want, rel=1e-12)
    assert lda.perplexity(theta, phi, as_sparse(docs, 20)) == pytest.approx(want, rel=1e-12)
    assert lda.score(theta, phi, docs).num_tokens == 55


def test_chunking_does_not_change_the_result(monkeypatch):
    rng = np.random.default_rng(1)
    theta, phi = random_model(rng)
    docs = [rng.integers(0, 20, size=50) for _ in range(6)]
    want = lda.perplexity(theta, phi, docs)
    monkeypatch.setattr(lda, "_CHUNK_BYTES", 16 * 3 * 7)  # 7 entries per chunk
    assert lda.perplexity(theta, phi, docs) == pytest.approx(want, rel=1e-12)


def test_zero_probability_word_gives_infinite_perplexity():
    assert lda.perplexity(np.array([[1.0]]), np.array([[1.0, 0.0]]), [[0, 1]]) == math.inf


#: Word 2 has probability 0 in document 0.
ZERO_WORD_THETA = np.array([[1.0, 0.0], [0.5, 0.5]])
ZERO_WORD_PHI = np.array([[0.5, 0.5, 0.0], [0.0, 0.0, 1.0]])


def test_zero_count_adds_nothing_even_for_a_zero_probability_word():
    theta, phi = ZERO_WORD_THETA, ZERO_WORD_PHI
    want = lda.perplexity(theta, phi, [[(0, 1), (1, 1)], [(2, 1)]])
    assert want == pytest.approx(2.0)
    assert lda.perplexity(theta, phi, [[(0, 1), (1, 1), (2, 0)], [(2, 1)]]) == want
    score = lda.score(theta, phi, [[(2, 0)], [(2, 1)]])
    assert (score.log_prob, score.num_tokens) == (math.log(0.5), 1)
    assert lda.perplexity(theta, phi, [[(0, 1), (2, 1)], [(2, 1)]]) == math.inf


def test_explicit_zero_of_a_sparse_matrix_adds_nothing():
    sparse = pytest.importorskip("scipy.sparse")
    counts = sparse.coo_matrix(([1, 1, 0, 1], ([0, 0, 0, 1], [0, 1, 2, 2])), shape=(2, 3))
    assert lda.perplexity(ZERO_WORD_THETA, ZERO_WORD_PHI, counts) == pytest.approx(2.0)


def test_normalize_option():
    theta, phi = np.array([[2.0, 2.0]]), np.array([[1.0, 3.0], [3.0, 1.0]])
    with pytest.raises(InvalidArgumentError, match="normalize=True"):
        lda.perplexity(theta, phi, [[0]])
    assert lda.perplexity(theta, phi, [[0]], normalize=True) == pytest.approx(2.0)


@pytest.mark.parametrize(
    ("theta", "phi", "docs", "match"),
    [
        (np.ones((1, 2)) / 2, np.ones((3, 4)) / 4, [[0]], "topics"),
        (np.ones(2) / 2, np.ones((2, 4)) / 4, [[0]], "2-D"),
        (np.ones((1, 2)) / 2, np.ones((2, 4)) / 4, [[0], [1]], "2 documents"),
        (np.ones((1, 2)) / 2, np.ones((2, 4)) / 4, [[4]], r"\[0, 4\)"),
        (np.ones((1, 2)) / 2, np.ones((2, 4)) / 4, [[-1]], r"\[0, 4\)"),
        (np.ones((1, 2)) / 2, np.ones((2, 4)) / 4, [[]], "no words"),
        (np.ones((1, 2)) / 2, np.ones((2, 4)) / 4, [[0.5]], "token ids"),
        (np.ones((1, 2)) / 2, np.ones((2, 4)) / 4, [[(0, -1)]], "non-negative integers"),
        (np.ones((1, 2)) / 2, np.ones((2, 4)) / 4, [[(0, 0.5)]], "non-negative integers"),
        (np.array([[1.5, -0.5]]), np.ones((2, 4)) / 4, [[0]], "non-negative"),
        (np.array([[np.nan, 1]]), np.ones((2, 4)) / 4, [[0]], "finite"),
        (np.ones((1, 2)) / 2, np.ones((2, 4)) / 3, [[0]], "sum to 1"),
        (np.ones((1, 2)) / 2, np.ones((2, 4)) / 4, "abc", "sequence"),
        ([[1.0], [0.5, 0.5]], np.ones((2, 4)) / 4, [[0]], "theta must be a rectangular array"),
        (np.ones((1, 2)) / 2, np.ones((2, 4)) / 4, [[(0, 1), (1, 2, 3)]], "token ids or of"),
    ],
)
def test_bad_input(theta, phi, docs, match):
    with pytest.raises(InvalidArgumentError, match=match):
        lda.perplexity(theta, phi, docs)


@pytest.mark.parametrize(
    ("theta", "phi", "message"),
    [
        ([["0.5", "0.5"]], np.ones((2, 4)) / 4, "theta must hold real numbers .* dtype <U3"),
        (np.ones((1, 2)) / 2, [["x", "y", "z", "w"]] * 2, "phi must hold real numbers .* <U1"),
        (np.array([[0.5 + 1j, 0.5]]), np.ones((2, 4)) / 4, "theta .* dtype complex128"),
        ([[None, 1.0]], np.ones((2, 4)) / 4, "theta .* dtype object"),
    ],
)
def test_distributions_that_are_not_real_numbers(theta, phi, message):
    """numpy read the strings "0.5" as numbers and dropped imaginary parts (a ComplexWarning)."""
    with pytest.raises(InvalidTypeError, match=message):
        lda.perplexity(theta, phi, [[0]], normalize=True)


def test_normalize_rows_of_huge_values():
    """Their sums overflowed to inf, the rows became zeros and the perplexity inf."""
    theta, phi = np.full((1, 2), 1e308), np.array([[5e307, 1.5e308], [1.5e308, 5e307]])
    assert lda.perplexity(theta, phi, [[0]], normalize=True) == pytest.approx(2.0)
    tiny = np.full((1, 2), 5e-324)  # subnormal: normalized to [0.5, 0.5] as well
    assert lda.perplexity(tiny, phi, [[0]], normalize=True) == pytest.approx(2.0)


@pytest.mark.parametrize(
    ("bad_document", "message"),
    [
        ([("a", 1)], r"docs\[1\]: each document .* got \[\('a', 1\)\] \(an array of dtype <U21"),
        ([(None, 1)], r"docs\[1\]: each document .* dtype object and shape \(1, 2\)\)"),
        ([(0, "1")], r"docs\[1\]: each document .* dtype <U21"),
        ([(0, 1 + 1j)], r"docs\[1\]: each document .* dtype complex128"),
        ([(np.inf, 1)], r"docs\[1\]: each document .* dtype float64"),
        ([(1e30, 1)], r"docs\[1\]: each document .* dtype float64"),
        ([0.5], r"docs\[1\]: each document .* got \[0\.5\]"),
    ],
)
def test_bad_bag_of_words_names_the_document(bad_document, message):
    """A str or None in a bag of words raised numpy's bare TypeError (from np.round), a complex
    count was cast to its real part, an inf or 1e30 id warned of an invalid cast."""
    theta, phi = np.full((2, 2), 0.5), np.full((2, 3), 1 / 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(InvalidArgumentError, match=message):
            lda.perplexity(theta, phi, [[(0, 1)], bad_document])


@pytest.mark.parametrize(
    ("docs", "message"),
    [
        (
            [[0, 1], [2, 3, 1]],
            "token id 3 of document 1 is outside the vocabulary: token ids must lie in [0, 3)",
        ),
        ([[-1], [0]], "token id -1 of document 0 is outside the vocabulary"),
        (
            [[(0, 1)], [(1, 2), (2, -1)]],
            "count -1.0 of token id 2 in document 1: word counts must be non-negative integers",
        ),
        ([[(0, 1.5)], [(1, 2)]], "count 1.5 of token id 0 in document 0: "),
    ],
)
def test_bad_token_id_or_count_is_named(docs, message):
    """These said only 'token ids must lie in [0, 3)' or 'word counts must be non-negative
    integers', not which id of which document."""
    theta, phi = np.full((2, 2), 0.5), np.full((2, 3), 1 / 3)
    with pytest.raises(InvalidArgumentError) as caught:
        lda.perplexity(theta, phi, docs)
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize(
    ("option", "error", "message"),
    [
        ({"normalize": "yes"}, InvalidTypeError, "normalize must be True or False, got 'yes'"),
        ({"normalize": 1}, InvalidTypeError, "normalize must be True or False, got 1"),
        ({"atol": "0.1"}, InvalidTypeError, "atol must be a number, got str"),
        (
            {"atol": float("nan")},
            InvalidArgumentError,
            "atol must be a finite number >= 0, got nan",
        ),
        ({"atol": math.inf}, InvalidArgumentError, "atol must be a finite number >= 0, got inf"),
        ({"atol": -1}, InvalidArgumentError, "atol must be a finite number >= 0, got -1"),
    ],
)
def test_bad_options(option, error, message):
    """A NaN atol accepted rows summing to 0.9; a negative one refused rows summing to 1."""
    for theta in ([[0.9, 0.0]], [[0.5, 0.5]]):
        with pytest.raises(error, match=message):
            lda.perplexity(theta, np.ones((2, 4)) / 4, [[0]], **option)


def test_sparse_shape_is_checked():
    sparse = pytest.importorskip("scipy.sparse")
    with pytest.raises(InvalidArgumentError, match="shape"):
        lda.perplexity(np.ones((1, 1)), np.ones((1, 3)) / 3, sparse.csr_matrix(np.ones((1, 4))))


def test_unsupported_model():
    with pytest.raises(InvalidArgumentError, match="gensim"):
        lda.model_perplexity(object(), [[0]])


def test_sklearn_interop():
    decomposition = pytest.importorskip("sklearn.decomposition")
    rng = np.random.default_rng(2)
    train, held_out = synthetic_corpus(rng), synthetic_corpus(rng, docs=10)
    x_train, x_test = as_sparse(train, 30), as_sparse(held_out, 30)
    model = decomposition.LatentDirichletAllocation(3, random_state=0).fit(x_train)

    theta, phi = lda.model_parameters(model, held_out)
    # Same quantities: theta is the model's own (deterministic) inference, phi its topics.
    np.testing.assert_allclose(theta, model.transform(x_test), rtol=1e-12)
    np.testing.assert_allclose(phi.sum(1), 1)
    np.testing.assert_allclose(phi * model.components_.sum(1, keepdims=True), model.components_)
    ours = lda.model_perplexity(model, x_test)
    assert ours == pytest.approx(dense_perplexity(theta, phi, held_out), rel=1e-12)
    # Different quantities: sklearn's perplexity is exp(-ELBO per word) >= plug-in.
    sklearn_ppl = model.perplexity(x_test)
    n_words = x_test.sum()
    assert sklearn_ppl == pytest.approx(math.exp(-model.score(x_test) / n_words), rel=1e-12)
    assert ours < sklearn_ppl


def test_gensim_interop():
    ldamodel = pytest.importorskip("gensim.models.ldamodel")
    rng = np.random.default_rng(3)
    train, held_out = as_bows(synthetic_corpus(rng)), as_bows(synthetic_corpus(rng, docs=10))
    id2word = {i: str(i) for i in range(30)}
    model = ldamodel.LdaModel(
        train, num_topics=3, id2word=id2word, random_state=0, passes=5, iterations=200
    )

    theta, phi = lda.model_parameters(model, held_out)
    # Same quantities: theta equals gensim's own document topics, phi its topics.
    for m, bow in enumerate(held_out):
        topics = model.get_document_topics(bow, minimum_probability=0)
        np.testing.assert_allclose(theta[m], [p for _, p in topics], atol=2e-2)
    np.testing.assert_allclose(phi, model.get_topics(), rtol=1e-6)
    ours = lda.model_perplexity(model, held_out)
    token_lists = [np.repeat([w for w, _ in bow], [c for _, c in bow]) for bow in held_out]
    assert lda.model_perplexity(model, token_lists) == pytest.approx(ours, rel=2e-2)
    # Different quantities: log_perplexity is the ELBO per word (nats); gensim logs
    # 2 ** -bound as "perplexity"; the comparable exp(-bound) is >= fastppl's plug-in.
    bound = model.log_perplexity(held_out)
    assert ours < math.exp(-bound)
    assert 2 ** (-bound) < math.exp(-bound)
