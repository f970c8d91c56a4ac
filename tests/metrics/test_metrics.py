"""Tests for fastppl.metrics."""

import math
import warnings

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from fastppl import metrics
from fastppl.errors import InvalidArgumentError, InvalidTypeError, ZeroProbabilityWarning


def reference_logprobs(logits, labels):
    """Plain float64 log_softmax + gather, logits[t] scoring labels[t]."""
    x = np.asarray(logits, dtype=np.float64)
    shifted = x - x.max(-1, keepdims=True)
    log_softmax = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    return np.take_along_axis(log_softmax, labels[..., None], -1)[..., 0]


# ---------------------------------------------------------------- from log-probs


def test_ppl_cross_entropy_and_bits_agree():
    lp = np.log([0.1, 0.5, 0.9, 0.3])
    r = metrics.score(lp)
    assert r.perplexity == pytest.approx(math.exp(r.cross_entropy))
    assert r.perplexity == pytest.approx(2**r.cross_entropy_bits)
    assert r.cross_entropy == pytest.approx(-lp.mean())
    assert metrics.bits_per_token(lp) == pytest.approx(r.cross_entropy_bits)
    assert metrics.cross_entropy(lp) == pytest.approx(r.cross_entropy)


@pytest.mark.parametrize("base", ["e", 2, 10, "2", 3.7])
def test_perplexity_is_independent_of_input_base(base):
    p = np.array([0.2, 0.7, 0.05])
    b = math.e if base == "e" else float(base)
    lp = np.log(p) / math.log(b)
    assert metrics.perplexity(lp, base=base) == pytest.approx(metrics.perplexity(probs=p))
    assert metrics.perplexity(probs=p) == pytest.approx(np.prod(p) ** (-1 / 3))


def test_unit_normalisations():
    lp2 = np.array([-3.0, -5.0, -4.0])  # 12 bits in total
    assert metrics.perplexity(lp2, base=2, num_units=2) == pytest.approx(2**6)  # 2 words
    assert metrics.bits_per_byte(lp2, num_bytes=24, base=2) == pytest.approx(0.5)
    r = metrics.score(lp2, base=2)
    assert r.per_unit(4).cross_entropy_bits == pytest.approx(3.0)  # 4 characters
    assert r.per_unit(4).num_tokens == 3


def test_corpus_micro_and_macro():
    docs = [np.log([0.5]), np.log([0.1, 0.1, 0.1])]
    micro = math.exp(-(np.log(0.5) + 3 * np.log(0.1)) / 4)
    macro = (2 + 10) / 2
    assert metrics.corpus_perplexity(docs) == pytest.approx(micro)
    assert metrics.corpus_perplexity(docs, "macro") == pytest.approx(macro)
    assert metrics.corpus_perplexity(np.log([[0.5, 0.5], [0.1, 0.1]]), "macro") == pytest.approx(6)
    r = metrics.score_corpus(docs, num_units=[1, 1])
    assert r.document_perplexities == pytest.approx([2, 1000])
    assert r.perplexity == pytest.approx(math.exp(-(np.log(0.5) + 3 * np.log(0.1)) / 2))
    with pytest.raises(InvalidArgumentError, match="micro"):
        metrics.corpus_perplexity(docs, "median")


@pytest.mark.parametrize(
    ("docs", "error", "match"),
    [
        ([[-1.0], []], InvalidArgumentError, r"^per_document_logprobs\[1\]: logprobs is empty"),
        ([[-1.0], [-1.0, np.nan]], InvalidArgumentError, r"^per_document_logprobs\[1\]: .*NaN"),
        ([[0.5], [-1.0]], InvalidArgumentError, r"^per_document_logprobs\[0\]: .*<= 0"),
        ([[-1.0], ["a"]], InvalidTypeError, r"^per_document_logprobs\[1\]: .*real numbers"),
    ],
)
def test_score_corpus_names_the_bad_document(docs, error, match):
    with pytest.raises(error, match=match):
        metrics.score_corpus(docs)


@pytest.mark.parametrize(
    ("docs", "num_units", "error", "message"),
    [
        (
            None,
            None,
            InvalidTypeError,
            "per_document_logprobs must be a sequence of per-document arrays, got NoneType",
        ),
        (
            3.0,
            None,
            InvalidTypeError,
            "per_document_logprobs must be a sequence of per-document arrays, got float",
        ),
        (
            "abc",
            None,
            InvalidTypeError,
            "per_document_logprobs must be a sequence of per-document arrays, got str",
        ),
        (
            [[-1.0]],
            3,
            InvalidTypeError,
            "num_units must be a sequence of per-document unit counts, got int",
        ),
        (
            [[-1.0, -2.0], -3.0],
            None,
            InvalidArgumentError,
            "per_document_logprobs[1] is a single "
            "value (-3.0), not an array of the document's log-probs",
        ),
        (
            [[[-1.0], [-1.0, -2.0]]],
            None,
            InvalidArgumentError,
            "per_document_logprobs[0]: logprobs is ragged",
        ),
    ],
)
def test_score_corpus_bad_containers(docs, num_units, error, message):
    """These raised a bare TypeError (no len(), int not iterable) or ValueError (a ragged first
    document), or scored a stray number as a one-token document."""
    with pytest.raises(error) as caught:
        metrics.score_corpus(docs, num_units=num_units)
    assert str(caught.value).startswith(message)


def test_score_corpus_takes_iterables():
    documents = ([-1.0] * n for n in (1, 3))
    r = metrics.score_corpus(documents, num_units=iter([1, 1]))
    assert r.num_tokens == 4
    assert r.document_perplexities == pytest.approx([math.e, math.e**3])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"logprobs": []}, "empty"),
        ({"logprobs": [0.1]}, "<= 0"),
        ({"logprobs": [-np.inf]}, "infinity"),
        ({"logprobs": [np.nan]}, "NaN"),
        ({"probs": [0.0, 0.5]}, r"\(0, 1\]"),
        ({"probs": [1.5]}, r"\(0, 1\]"),
        ({"probs": [np.nan]}, "NaN"),
        ({}, "exactly one"),
        ({"logprobs": [-1.0], "probs": [0.5]}, "exactly one"),
        ({"logprobs": [-1.0], "base": 1}, "base"),
        ({"logprobs": [-1.0], "base": "ten"}, "base"),
        ({"logprobs": [-1.0], "num_units": 0}, "num_units"),
    ],
)
def test_bad_logprobs(kwargs, match):
    with pytest.raises(InvalidArgumentError, match=match):
        metrics.perplexity(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"logprobs": [-1.0, 0.5]}, "logprobs[1] is 0.5: logprobs must be <= 0"),
        ({"logprobs": [[-1.0, -2.0], [-np.inf, 1.0]]}, "logprobs[1, 0] is -inf: logprobs contain"),
        ({"logprobs": -np.inf}, "logprobs is -inf: logprobs contain NaN or infinity"),
        ({"logprobs": np.float16([-1.0, np.nan])}, "logprobs[1] is nan: logprobs contain NaN"),
        ({"probs": [0.5, 0.25, 0.0]}, "probs[2] is 0.0: probs must lie in (0, 1]"),
        ({"probs": [[0.5], [1.5]]}, "probs[1, 0] is 1.5: probs must lie in (0, 1]"),
    ],
)
def test_bad_values_are_named_by_index_and_value(kwargs, message):
    """The messages used to say only 'logprobs must be <= 0', not which of a million values."""
    with pytest.raises(InvalidArgumentError) as caught:
        metrics.score(**kwargs)
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize(
    ("mask", "message"),
    [
        ([[1, 1, 2]], "attention_mask[0, 2] is 2: attention_mask must hold only 0 and 1"),
        ([[1.0, 0.5, 1.0]], "attention_mask[0, 1] is 0.5: "),
        ([["1", "1", "0"]], "attention_mask[0, 0] is '1': "),
    ],
)
def test_bad_attention_mask_value_is_named(mask, message):
    with pytest.raises(InvalidArgumentError) as caught:
        metrics.from_logits(np.zeros((1, 3, 4)), np.zeros((1, 3), int), mask)
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"logprobs": ["-1.0"]}, "logprobs must hold real numbers .* dtype <U4"),
        ({"logprobs": ["a"]}, "logprobs must hold real numbers .* dtype <U1"),
        ({"logprobs": np.array([-1 + 1j])}, "logprobs must hold real numbers .* dtype complex128"),
        ({"logprobs": np.array([False])}, "logprobs must hold real numbers .* dtype bool"),
        ({"logprobs": [-1.0, None]}, "logprobs must hold real numbers .* dtype object"),
        ({"probs": [True]}, "probs must hold real numbers .* dtype bool"),
        ({"probs": ["0.5"]}, "probs must hold real numbers .* dtype <U3"),
        ({"logprobs": [-1.0], "num_units": "3"}, "num_units must be a number, got str"),
        ({"logprobs": [-1.0], "num_units": True}, "num_units must be a number, got bool"),
    ],
)
def test_values_that_are_not_real_numbers_are_refused(kwargs, match):
    """numpy would convert them ("-1.0" to -1, False to 0) or drop an imaginary part."""
    with pytest.raises(InvalidTypeError, match=match):
        metrics.perplexity(**kwargs)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: metrics.perplexity([[-1.0], [-1.0, -2.0]]), "logprobs"),
        (lambda: metrics.score(probs=[[0.5], [0.5, 0.25]]), "probs"),
        (
            lambda: metrics.corpus_perplexity([[-1.0], [[-1.0], [-1.0, -2.0]]]),
            r"per_document_logprobs\[1\]: logprobs",
        ),
        (lambda: metrics.from_logits([[[0.0, 1.0]], [[0.0]]], [[0], [0]]), "logits"),
        (lambda: metrics.from_logits(np.zeros((2, 1, 3)), [[0], [0, 1]]), "labels"),
        (
            lambda: metrics.from_logits(np.zeros((2, 1, 3)), [[0], [0]], [[1], [1, 1]]),
            "attention_mask",
        ),
    ],
)
def test_ragged_lists_name_their_argument(call, name):
    """numpy's own ValueError said neither which argument nor what to fix."""
    with pytest.raises(InvalidArgumentError, match=f"^{name} is ragged, not a rectangular array"):
        call()


def test_every_real_dtype_is_accepted():
    for dtype in ("float16", "float32", "float64", "int8", "int64", ">f8"):
        assert metrics.perplexity(np.array([-2, -2], dtype=dtype)) == pytest.approx(math.e**2)
    assert metrics.perplexity(probs=np.array([1, 1], dtype=np.uint8)) == 1.0
    assert metrics.perplexity(probs=[1, 1]) == 1.0
    assert metrics.perplexity([-1.0], num_units=np.int64(1)) == pytest.approx(math.e)
    ml_dtypes = pytest.importorskip("ml_dtypes")
    assert metrics.perplexity(np.array([-2.0], dtype=ml_dtypes.bfloat16)) == (
        pytest.approx(math.e**2)
    )


def test_bad_units_of_the_other_functions_name_their_argument():
    with pytest.raises(InvalidTypeError, match="num_bytes must be a number, got str"):
        metrics.bits_per_byte([-1.0], num_bytes="4")
    with pytest.raises(InvalidTypeError, match="num_units must be a number, got str"):
        metrics.score([-1.0]).per_unit("2")
    with pytest.raises(InvalidTypeError, match="num_units must be a number, got str"):
        metrics.corpus_perplexity([[-1.0], [-2.0]], num_units=[1, "2"])
    with pytest.raises(InvalidTypeError, match=r"logprobs must hold real numbers .* dtype <U4"):
        metrics.corpus_perplexity([[-1.0], ["-2.0"]])


def test_bad_corpus():
    with pytest.raises(InvalidArgumentError, match="non-empty"):
        metrics.corpus_perplexity([])
    with pytest.raises(InvalidArgumentError, match="per-document arrays"):
        metrics.corpus_perplexity(np.array([-1.0, -2.0]))
    with pytest.raises(InvalidArgumentError, match="empty"):
        metrics.corpus_perplexity([[-1.0], []])
    with pytest.raises(InvalidArgumentError, match="2 documents"):
        metrics.corpus_perplexity([[-1.0], [-2.0]], num_units=[1, 2, 3])


# ---------------------------------------------------------------- from logits


@pytest.mark.parametrize(
    ("dtype", "tol"), [(np.float64, 1e-12), (np.float32, 1e-5), (np.float16, 1e-2)]
)
def test_from_logits_matches_log_softmax(dtype, tol):
    rng = np.random.default_rng(0)
    logits = (rng.normal(size=(3, 7, 101)) * 4).astype(dtype)
    labels = rng.integers(0, 101, size=(3, 7))
    r = metrics.from_logits(logits, labels, shift=False)
    want = reference_logprobs(logits, labels)
    np.testing.assert_allclose(r.token_logprobs, want, atol=tol)
    assert r.num_tokens == 21
    assert r.log_prob == pytest.approx(want.sum(), abs=21 * tol)


def test_causal_shift_alignment():
    rng = np.random.default_rng(1)
    logits = rng.normal(size=(2, 5, 9))
    labels = rng.integers(0, 9, size=(2, 5)).astype(np.int32)
    r = metrics.from_logits(logits, labels)
    want = reference_logprobs(logits[:, :-1], labels[:, 1:].astype(np.int64))
    assert np.isnan(r.token_logprobs[:, 0]).all()
    np.testing.assert_allclose(r.token_logprobs[:, 1:], want, atol=1e-12)
    assert r.num_tokens == 8
    assert r.perplexity == pytest.approx(math.exp(-want.mean()))
    assert r.mask.tolist() == [[False] + [True] * 4] * 2


def test_padding_and_ignore_index_never_count():
    rng = np.random.default_rng(2)
    seq = rng.integers(0, 11, size=6)
    single = rng.normal(size=(6, 11))
    base = metrics.from_logits(single, seq)
    pad = rng.normal(size=(3, 11)) * 100
    on, off = [1] * 6, [0] * 3
    right = metrics.from_logits(
        np.concatenate([single, pad])[None], np.r_[seq, off][None], np.r_[on, off][None]
    )
    left = metrics.from_logits(
        np.concatenate([pad, single])[None], np.r_[[5, 5, 5], seq][None], np.r_[off, on][None]
    )
    ignored = metrics.from_logits(
        np.concatenate([single, pad]), np.r_[seq, [-100] * 3], ignore_index=-100
    )
    for r in (right, left, ignored):
        assert r.num_tokens == base.num_tokens == 5
        assert r.perplexity == pytest.approx(base.perplexity, rel=1e-12)


def test_large_logits_are_stable():
    logits = np.array([[3e4, 3e4, -3e4, 0.0]], dtype=np.float32)
    r = metrics.from_logits(logits, np.array([1]), shift=False)
    assert r.token_logprobs[0] == pytest.approx(-math.log(2))


def test_bfloat16_numpy_is_widened_exactly():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    rng = np.random.default_rng(3)
    logits = rng.normal(size=(4, 33)).astype(ml_dtypes.bfloat16)
    labels = rng.integers(0, 33, size=4)
    r = metrics.from_logits(logits, labels, shift=False)
    want = reference_logprobs(logits.astype(np.float64), labels)
    np.testing.assert_allclose(r.token_logprobs, want, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
def test_torch_tensors(dtype):
    torch = pytest.importorskip("torch")
    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(2, 6, 50, generator=gen).to(getattr(torch, dtype))
    labels = torch.randint(0, 50, (2, 6), generator=gen)
    mask = torch.ones(2, 6, dtype=torch.long)
    mask[1, 4:] = 0
    r = metrics.from_logits(logits, labels, mask)
    want = torch.log_softmax(logits.double(), -1)[:, :-1].gather(-1, labels[:, 1:, None])[..., 0]
    want = want.numpy()[mask[:, 1:].bool().numpy()]
    assert r.num_tokens == want.size == 8
    np.testing.assert_allclose(r.token_logprobs[r.mask], want, atol=1e-12)


def test_non_contiguous_logits():
    rng = np.random.default_rng(4)
    logits = rng.normal(size=(20, 8))
    labels = rng.integers(0, 8, size=10)
    r = metrics.from_logits(logits[::2], labels, shift=False)
    np.testing.assert_allclose(r.token_logprobs, reference_logprobs(logits[::2], labels))


@settings(max_examples=50, deadline=None)
@given(
    hnp.arrays(
        np.float32,
        hnp.array_shapes(min_dims=2, max_dims=3, min_side=2, max_side=9),
        elements=st.floats(-1e4, 1e4, width=32),
    ),
    st.data(),
)
def test_from_logits_property(logits, data):
    vocab = logits.shape[-1]
    labels = data.draw(hnp.arrays(np.int64, logits.shape[:-1], elements=st.integers(0, vocab - 1)))
    r = metrics.from_logits(logits, labels, shift=False)
    want = reference_logprobs(logits, labels)
    np.testing.assert_allclose(r.token_logprobs, want, rtol=1e-9, atol=1e-9)
    assert (r.token_logprobs <= 0).all()


@pytest.mark.parametrize(
    ("logits", "labels", "mask", "match"),
    [
        (np.zeros((2, 3, 5)), np.zeros((2, 4), int), None, "labels of shape"),
        (np.zeros(5), np.zeros((), int), None, r"at least 2 dimensions .* got shape \(5,\)"),
        (np.zeros(()), np.zeros((), int), None, r"at least 2 dimensions .* got shape \(\)"),
        (np.zeros((2, 3, 5)), np.zeros((2, 3)), None, "integers"),
        (np.zeros((2, 3, 5), int), np.zeros((2, 3), int), None, "float16"),
        (np.zeros((2, 3, 5)), np.zeros((2, 3), int), np.ones((2, 2)), "attention_mask"),
        (np.zeros((2, 3, 5)), np.zeros((2, 3), int), np.full((2, 3), 2), "0 and 1"),
        (np.zeros((2, 3, 5)), np.full((2, 3), 5), None, "outside the vocabulary"),
        (np.zeros((2, 3, 5)), np.full((2, 3), -1), None, r"\[0, 5\)"),
        (np.zeros((2, 1, 5)), np.zeros((2, 1), int), None, "no label is scored"),
        (np.zeros((1, 0, 5)), np.zeros((1, 0), int), None, "no token to score"),  # T = 0
        (np.zeros((1, 3, 0)), np.zeros((1, 3), int), None, r"empty vocabulary \(V = 0\)"),
        (np.full((2, 3, 5), np.nan), np.zeros((2, 3), int), None, r"logits\[0, 0, 0\] is nan"),
        (np.full((1, 3, 5), np.inf), np.zeros((1, 3), int), None, r"logits\[0, 0, 0\] is inf"),
        (
            np.full((1, 3, 5), -np.inf),
            np.zeros((1, 3), int),
            None,
            r"logits\[0, 0\] holds no finite value \(every logit is -inf\)",
        ),
    ],
)
def test_from_logits_bad_input(logits, labels, mask, match):
    with pytest.raises(InvalidArgumentError, match=match):
        metrics.from_logits(logits, labels, mask)


def test_the_core_locates_a_refused_logits_row_by_its_index():
    from fastppl import _core

    rows = np.zeros((4, 3))
    rows[2, 1] = np.nan
    with pytest.raises(InvalidArgumentError) as raised:
        _core.logits_target_logprobs(rows, np.zeros(4, np.int64))
    err = raised.value
    assert (err.index, err.reason) == (2, "contains NaN or +infinity, or no finite value")
    assert str(err) == "logits row 2 contains NaN or +infinity, or no finite value"
    with pytest.raises(InvalidArgumentError) as raised:
        _core.logits_target_logprobs(rows, np.zeros(3, np.int64))
    assert raised.value.index is None


def test_a_refused_logit_is_named_whatever_the_core_s_message(monkeypatch):
    """from_logits names the logit from the index of the core's error, not from its text."""
    from fastppl import _core

    real = _core.logits_target_logprobs

    def reworded(*args: object) -> np.ndarray:
        try:
            return real(*args)
        except InvalidArgumentError as err:
            raise InvalidArgumentError("reworded", err.index, err.reason) from None

    monkeypatch.setattr(_core, "logits_target_logprobs", reworded)
    logits = np.zeros((2, 3, 5))
    logits[1, 2, 4] = np.inf
    with pytest.raises(InvalidArgumentError, match=r"^logits\[1, 2, 4\] is inf: .* labels\[1, 2\]"):
        metrics.from_logits(logits, np.zeros((2, 3), int), shift=False)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"shift": "no"}, "shift must be True or False, got 'no'"),
        ({"shift": 0}, "shift must be True or False, got 0"),
        ({"ignore_index": "x"}, "ignore_index must be an int, got str"),
        ({"ignore_index": -100.0}, "ignore_index must be an int, got float"),
        ({"ignore_index": True}, "ignore_index must be an int, got True"),
    ],
)
def test_from_logits_flags_of_the_wrong_type(kwargs, match):
    with pytest.raises(InvalidTypeError, match=match):
        metrics.from_logits(np.zeros((2, 3, 5)), np.zeros((2, 3), int), **kwargs)


def test_from_logits_takes_a_numpy_integer_ignore_index():
    labels = np.array([[0, 1, 2]])
    r = metrics.from_logits(np.zeros((1, 3, 4)), labels, ignore_index=np.int64(2))
    assert r.num_tokens == 1


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize(
    ("bad", "shift", "match"),
    [
        (np.nan, True, r"^logits\[1, 2, 3\] is nan: the scores predicting labels\[1, 3\] must"),
        (np.inf, False, r"^logits\[1, 2, 3\] is inf: the scores predicting labels\[1, 2\] must"),
    ],
)
def test_non_finite_logits_are_named_by_their_index(dtype, bad, shift, match):
    """The core names a flat row of the reshaped, shifted logits ('logits row 7'): the message
    names the logit in the caller's array and the label it predicts."""
    logits = np.zeros((2, 4, 5), dtype=ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype)
    logits[1, 2, 3] = bad
    with pytest.raises(InvalidArgumentError, match=match):
        metrics.from_logits(logits, np.zeros((2, 4), int), shift=shift)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_minus_infinity_logits_are_probabilities_of_zero(dtype):
    """A -inf logit (what vocabulary masks write) was refused: the other labels are now scored
    as if it were not in the row, and a label whose own logit is -inf has probability 0 (-inf,
    a perplexity of inf, and a ZeroProbabilityWarning)."""
    make = ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype
    kept = np.array([[[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]]])
    masked = np.full((1, 2, 5), -np.inf)
    masked[..., [0, 2, 4]] = kept
    labels = np.array([[2, 4]])  # columns 1 and 2 of the kept logits
    want = metrics.from_logits(kept.astype(make), np.array([[1, 2]]), shift=False)
    got = metrics.from_logits(masked.astype(make), labels, shift=False)
    np.testing.assert_allclose(got.token_logprobs, want.token_logprobs, rtol=0, atol=1e-12)
    with pytest.warns(ZeroProbabilityWarning, match=r"1 scored label\(s\) have probability 0"):
        zero = metrics.from_logits(masked.astype(make), np.array([[2, 1]]), shift=False)
    assert zero.token_logprobs[0, 1] == -np.inf and zero.perplexity == np.inf


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda a: metrics.score(a), "logprobs"),
        (lambda a: metrics.perplexity(probs=np.exp(a)), "probs"),
        (lambda a: metrics.score_corpus([[-1.0], a]), r"per_document_logprobs\[1\]: logprobs"),
        (lambda a: metrics.from_logits(np.zeros((1, 3, 5)), a.astype(int)), "labels"),
        (
            lambda a: metrics.from_logits(np.zeros((1, 3, 5)), np.zeros((1, 3), int), a * 0 + 1),
            "attention_mask",
        ),
    ],
)
def test_masked_arrays_with_masked_entries_are_refused(call, name):
    """np.asarray drops a mask: the masked -5.0 used to be scored as if it were not masked."""
    values = np.ma.masked_array([[-1.0, -5.0, -2.0]], mask=[[False, True, False]])
    match = rf"^{name} is a masked array with 1 masked entries \(the first at \(0, 1\)\)"
    with pytest.raises(InvalidArgumentError, match=match):
        call(values)


def test_masked_array_without_masked_entries_is_read():
    values = np.ma.masked_array([-1.0, -3.0], mask=[False, False])
    assert metrics.cross_entropy(values) == pytest.approx(2.0)


def test_nan_in_unscored_rows_is_ignored():
    logits = np.zeros((1, 3, 4))
    logits[0, 2] = np.nan  # predicts nothing under the causal shift
    assert metrics.from_logits(logits, np.zeros((1, 3), int)).perplexity == pytest.approx(4)


@pytest.mark.parametrize("dtype", ["<f2", ">f2", "<f4", ">f4", "<f8", ">f8"])
def test_from_logits_reads_either_byte_order(dtype):
    logits = np.log(np.array([[[0.5, 0.25, 0.25], [0.25, 0.5, 0.25], [0.25, 0.25, 0.5]]]))
    native = metrics.from_logits(logits.astype(dtype[1:]), np.array([[0, 1, 0]]))
    swapped = metrics.from_logits(logits.astype(dtype), np.array([[0, 1, 0]]))
    assert swapped.perplexity == native.perplexity
    assert native.perplexity == pytest.approx(4.0, rel=1e-3)  # p = 1/4 twice


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint32", "int64", "uint64", ">i8"])
def test_from_logits_takes_every_integer_dtype(dtype):
    logits = np.log(np.full((1, 3, 4), 0.25))
    assert metrics.from_logits(logits, np.array([[3, 1, 2]], dtype=dtype)).perplexity == (
        pytest.approx(4.0)
    )


@pytest.mark.parametrize("label", [4, 2**63, 2**64 - 1])
def test_from_logits_refuses_uint64_labels_outside_the_vocabulary(label):
    """uint64 ids >= 2^63 used to wrap to negative int64 and give NaN."""
    labels = np.array([[0, label, 1]], dtype=np.uint64)
    with pytest.raises(InvalidArgumentError, match=rf"label {label} at \(0, 1\) is outside"):
        metrics.from_logits(np.zeros((1, 3, 4)), labels)


def test_unscored_first_label_is_not_checked():
    """Under the causal shift labels[..., 0] is never predicted, so any value is accepted."""
    logits = np.log(np.full((1, 3, 4), 0.25))
    assert metrics.from_logits(logits, np.array([[99, 1, 2]])).num_tokens == 2


def test_document_perplexity_too_large_for_a_float_is_inf_without_a_warning():
    """np.exp overflowed with a RuntimeWarning (an error under -W error) where .perplexity,
    through exp_or_inf, gives inf quietly."""
    r = metrics.score_corpus([[-800.0], [-1.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert r.document_perplexities.tolist() == [math.inf, math.e]
        assert r.macro_perplexity == math.inf


def test_perplexity_too_large_for_a_float_is_inf():
    assert metrics.perplexity([-800.0]) == math.inf
    assert metrics.score([-800.0, -800.0]).perplexity == math.inf


def test_one_result_base_class(tmp_path):
    """NGramModel.evaluate and fastppl.metrics return the same kind of result: a LogLikelihood
    whose log_prob, cross-entropy and perplexity agree for the same token log-probabilities."""
    from fastppl import Corpus, LogLikelihood, NGramModel

    corpus = Corpus.from_texts(["a b a c", "b a b"], tokenizer="whitespace", sentences="lines")
    model = NGramModel.fit(corpus, order=2, smoothing="kneser_ney")
    evaluated = model.evaluate(corpus, token_logprobs=True)
    scored = metrics.score(evaluated.token_logprobs)
    assert isinstance(evaluated, LogLikelihood)
    assert isinstance(scored, LogLikelihood)
    assert scored.log_prob == pytest.approx(evaluated.log_prob, rel=1e-12)
    assert scored.num_tokens == evaluated.num_tokens
    assert scored.perplexity == pytest.approx(evaluated.perplexity, rel=1e-12)
    assert scored.log_prob_in(10) == pytest.approx(evaluated.log_prob_in(10), rel=1e-12)
