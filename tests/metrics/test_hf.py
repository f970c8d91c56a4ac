"""Tests for fastppl.hf with tiny random models and locally trained tokenizers.

Nothing is downloaded: models are built from configs, tokenizers trained here.
Every number is checked against a direct, unbatched computation.
"""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from fastppl import hf  # noqa: E402
from fastppl.errors import InvalidArgumentError  # noqa: E402
from helpers.hf_tokenizers import train_tokenizer  # noqa: E402

CONTEXT = 32
SENTENCES = [
    "the cat sat on the mat",
    "a dog ran in the park and barked at unbelievable squirrels",
    "unbelievable things happen sometimes",
    "the quick brown fox jumps over the lazy dog",
    "squirrels hide nuts",
]
LONG_TEXT = " ".join(SENTENCES * 2)
UNSEEN = "unbelievably squirrely cats barked"  # words split into several pieces


@pytest.fixture(scope="module")
def causal():
    tokenizer = train_tokenizer(SENTENCES, post_processor=False)
    torch.manual_seed(0)
    config = transformers.GPT2Config(
        n_layer=2, n_head=2, n_embd=32, vocab_size=len(tokenizer), n_positions=CONTEXT,
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.sep_token_id,
    )  # fmt: skip
    return transformers.GPT2LMHeadModel(config).double().eval(), tokenizer


@pytest.fixture(scope="module")
def masked():
    tokenizer = train_tokenizer(SENTENCES, post_processor=True)
    torch.manual_seed(0)
    config = transformers.BertConfig(
        vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=37, max_position_embeddings=64, pad_token_id=tokenizer.pad_token_id,
    )  # fmt: skip
    return transformers.BertForMaskedLM(config).double().eval(), tokenizer


def log_softmax_at(model, ids, positions, targets):
    """Direct scoring of one unpadded sequence."""
    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0].double()
    return torch.log_softmax(logits[positions], -1)[range(len(targets)), targets].numpy()


def direct_causal(model, ids):
    """All tokens after the first, scored in one pass (text fits the context)."""
    return log_softmax_at(model, ids[:-1], list(range(len(ids) - 1)), ids[1:])


def encode(tokenizer, text, bos=True):
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    return [tokenizer.bos_token_id, *ids] if bos else ids


def short_texts(tokenizer):
    return [t for t in SENTENCES if len(encode(tokenizer, t)) <= CONTEXT + 1]


# ---------------------------------------------------------------- causal


def test_causal_matches_direct_computation(causal):
    model, tokenizer = causal
    texts = short_texts(tokenizer)
    assert len(texts) >= 3
    reference = [direct_causal(model, encode(tokenizer, t)) for t in texts]
    results = [
        hf.causal_perplexity(model, tokenizer, texts, batch_size=b, add_bos=True, padding_side=p)
        for b in (1, 8)
        for p in ("left", "right")
    ]
    for r in results:
        assert r.num_tokens == sum(len(x) for x in reference)
        for got, want in zip(r.document_logprobs, reference, strict=True):
            np.testing.assert_allclose(got, want, atol=1e-10)
        assert r.perplexity == pytest.approx(results[0].perplexity, abs=1e-5)
    pooled = np.concatenate(reference)
    assert results[0].perplexity == pytest.approx(math.exp(-pooled.mean()), rel=1e-10)
    assert results[0].macro_perplexity == pytest.approx(
        np.mean([math.exp(-x.mean()) for x in reference]), rel=1e-10
    )
    assert [list(ids) for ids in results[0].token_ids] == [encode(tokenizer, t)[1:] for t in texts]


def test_float32_batches_and_padding_agree(causal):
    model, tokenizer = causal
    model32 = transformers.GPT2LMHeadModel(model.config)
    model32.load_state_dict(model.state_dict())
    model32 = model32.float().eval()
    texts = short_texts(tokenizer)
    one = hf.causal_perplexity(model32, tokenizer, texts, batch_size=1, add_bos=True)
    for side in ("left", "right"):
        many = hf.causal_perplexity(model32, tokenizer, texts, 8, add_bos=True, padding_side=side)
        assert many.perplexity == pytest.approx(one.perplexity, abs=1e-5)
    full = hf.causal_perplexity(model, tokenizer, texts, add_bos=True)
    assert one.perplexity == pytest.approx(full.perplexity, rel=1e-5)


def test_bos_policy(causal):
    model, tokenizer = causal
    text = SENTENCES[0]
    n = len(encode(tokenizer, text, bos=False))
    with_bos = hf.causal_perplexity(model, tokenizer, text, add_bos=True)
    without = hf.causal_perplexity(model, tokenizer, text, add_bos=False)
    default = hf.causal_perplexity(model, tokenizer, text)  # tokenizer adds no specials
    assert (with_bos.num_tokens, without.num_tokens, default.num_tokens) == (n, n - 1, n - 1)
    np.testing.assert_allclose(
        without.document_logprobs[0], direct_causal(model, encode(tokenizer, text, bos=False))
    )
    assert default.perplexity == without.perplexity


def test_stride_equal_to_context_is_disjoint_windows(causal):
    model, tokenizer = causal
    ids = encode(tokenizer, LONG_TEXT)
    assert len(ids) > 3 * CONTEXT
    r = hf.causal_perplexity(
        model, tokenizer, LONG_TEXT, batch_size=3, stride=CONTEXT, add_bos=True
    )
    windows = []
    for begin in range(0, len(ids) - 1, CONTEXT):
        chunk = ids[begin : begin + CONTEXT + 1]  # CONTEXT inputs and the token after them
        windows.append(direct_causal(model, chunk))
    assert r.num_tokens == len(ids) - 1
    np.testing.assert_allclose(r.document_logprobs[0], np.concatenate(windows), atol=1e-10)


def test_stride_one_is_full_context_scoring(causal):
    model, tokenizer = causal
    text = " ".join(SENTENCES[:4])
    ids = encode(tokenizer, text)
    assert len(ids) > CONTEXT + 20
    r = hf.causal_perplexity(model, tokenizer, text, batch_size=8, stride=1, add_bos=True)
    want = [
        log_softmax_at(model, ids[max(0, t - CONTEXT) : t], [-1], [ids[t]])[0]
        for t in range(1, len(ids))
    ]
    np.testing.assert_allclose(r.document_logprobs[0], want, atol=1e-10)


@pytest.mark.parametrize("stride", [1, 2, 5, 7, CONTEXT])
def test_every_token_scored_exactly_once(causal, stride):
    model, tokenizer = causal
    ids = encode(tokenizer, LONG_TEXT)
    windows = hf.sliding_windows(len(ids), CONTEXT, stride)
    scored = [p for _, end, first in windows for p in range(first, end)]
    assert scored == list(range(len(ids) - 1))
    assert all(end - begin <= CONTEXT for begin, end, _ in windows)
    r = hf.causal_perplexity(
        model, tokenizer, [LONG_TEXT, SENTENCES[0]], stride=stride, add_bos=True
    )
    assert r.document_logprobs[0].size == len(ids) - 1
    assert list(r.token_ids[0]) == ids[1:]


def test_gpu_is_used_when_available(causal):
    if not torch.cuda.is_available():
        pytest.skip("no GPU")
    model, tokenizer = causal
    cpu = hf.causal_perplexity(model, tokenizer, SENTENCES[:2], add_bos=True)
    gpu = hf.causal_perplexity(model.cuda(), tokenizer, SENTENCES[:2], add_bos=True)
    model.cpu()
    assert gpu.perplexity == pytest.approx(cpu.perplexity, rel=1e-6)


@pytest.mark.parametrize(
    ("texts", "kwargs", "match"),
    [
        ("", {}, "empty"),
        (["a cat", "  "], {}, "text 1 is empty"),
        ([], {}, "no texts"),
        ([LONG_TEXT], {}, "stride="),
        ([LONG_TEXT], {"stride": CONTEXT + 1}, "stride must be"),
        ([LONG_TEXT], {"stride": 0}, "stride must be"),
        (["the"], {"add_bos": False}, "fewer than 2 tokens"),
        (["the cat"], {"batch_size": 0}, "batch_size"),
        (["the cat"], {"padding_side": "middle"}, "padding_side"),
    ],
)
def test_causal_bad_input(causal, texts, kwargs, match):
    model, tokenizer = causal
    with pytest.raises(InvalidArgumentError, match=match):
        hf.causal_perplexity(model, tokenizer, texts, **kwargs)


def test_add_bos_without_bos_token(causal, masked):
    model, _ = causal
    _, tokenizer = masked
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tokenizer.backend_tokenizer, pad_token="[PAD]"
    )
    with pytest.raises(InvalidArgumentError, match="no BOS"):
        hf.causal_perplexity(model, tokenizer, ["the cat"], add_bos=True)


# ---------------------------------------------------------------- masked


def pll_loop(model, tokenizer, text, word_l2r):
    """Token-by-token pseudo-log-likelihood, one masked copy per forward pass."""
    encoding = tokenizer(text, return_special_tokens_mask=True)
    ids, words = encoding["input_ids"], encoding.word_ids()
    out = []
    for i, special in enumerate(encoding["special_tokens_mask"]):
        if special:
            continue
        masked = list(ids)
        for j in range(i, len(ids)):
            if j == i or (word_l2r and words[j] == words[i]):
                masked[j] = tokenizer.mask_token_id
        out.append(log_softmax_at(model, masked, [i], [ids[i]])[0])
    return np.array(out)


@pytest.mark.parametrize("word_l2r", [False, True])
def test_pll_batched_equals_token_loop(masked, word_l2r):
    model, tokenizer = masked
    texts = [*SENTENCES, UNSEEN]
    reference = [pll_loop(model, tokenizer, t, word_l2r) for t in texts]
    for batch_size in (1, 5, 64):
        r = hf.masked_pseudo_perplexity(model, tokenizer, texts, batch_size, word_l2r)
        for got, want in zip(r.document_logprobs, reference, strict=True):
            np.testing.assert_allclose(got, want, atol=1e-6)
        pll = sum(x.sum() for x in reference)
        n = sum(x.size for x in reference)
        assert r.log_prob == pytest.approx(pll, abs=1e-6)
        assert r.perplexity == pytest.approx(math.exp(-pll / n), rel=1e-6)


def test_special_tokens_never_scored_and_word_l2r_differs(masked):
    model, tokenizer = masked
    text = UNSEEN
    ids = tokenizer(text)["input_ids"]
    assert len(ids) > len(text.split()) + 2  # multi-piece words
    plain = hf.masked_pseudo_perplexity(model, tokenizer, text)
    l2r = hf.masked_pseudo_perplexity(model, tokenizer, text, word_l2r=True)
    assert plain.num_tokens == l2r.num_tokens == len(ids) - 2
    assert list(plain.token_ids[0]) == ids[1:-1]
    # The last piece of each word sees the same context in both variants.
    assert not np.allclose(plain.document_logprobs[0], l2r.document_logprobs[0])


@pytest.mark.parametrize(
    ("texts", "kwargs", "match"),
    [
        ([""], {}, "empty"),
        ([LONG_TEXT * 2], {}, "context"),
        (["the cat"], {"batch_size": 0}, "batch_size"),
    ],
)
def test_masked_bad_input(masked, texts, kwargs, match):
    model, tokenizer = masked
    with pytest.raises(InvalidArgumentError, match=match):
        hf.masked_pseudo_perplexity(model, tokenizer, texts, **kwargs)


def test_masked_needs_mask_token(masked, causal):
    model, _ = masked
    _, tokenizer = causal
    no_mask = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tokenizer.backend_tokenizer, pad_token="[PAD]"
    )
    with pytest.raises(InvalidArgumentError, match="mask token"):
        hf.masked_pseudo_perplexity(model, no_mask, ["the cat"])
