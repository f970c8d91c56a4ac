"""Perplexity of texts under Hugging Face transformers models (extra ``fastppl[hf]``).

* :func:`causal_perplexity`: autoregressive perplexity under any
  ``AutoModelForCausalLM``, batched, with sliding windows for long texts.
* :func:`masked_pseudo_perplexity`: pseudo-log-likelihood (PLL) and
  pseudo-perplexity under a masked LM (BERT style), optionally with the
  word-level left-to-right variant of Kauf & Ivanova (2023).

Log-probabilities are natural logs (nats); ``perplexity = exp(CE) = 2 **
cross_entropy_bits``; corpus numbers are micro averages over pooled tokens
(``macro_perplexity`` is the mean of per-text perplexities). Padding is never
scored, and results do not depend on the batch size or the padding side up to
floating-point noise. Computation runs on the model's device, under
``torch.inference_mode``; call ``model.eval()`` first if the model was
training (dropout would make scores random).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from fastppl.errors import InvalidArgumentError
from fastppl.metrics import CorpusResult

try:
    import torch
except ImportError as err:  # pragma: no cover - exercised without the extra only
    raise ImportError("fastppl.hf needs torch and transformers: pip install 'fastppl[hf]'") from err

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

__all__ = ["TextsResult", "causal_perplexity", "masked_pseudo_perplexity", "sliding_windows"]


@dataclass(frozen=True, eq=False, kw_only=True)
class TextsResult(CorpusResult):
    """Scores of several texts (micro-averaged metrics; see :class:`CorpusResult`).

    Attributes:
        token_ids: Per text, the ids of the scored tokens, aligned with
            ``document_logprobs`` (their log-probabilities in nats).
    """

    token_ids: tuple[np.ndarray, ...]


@dataclass(frozen=True)
class _Item:
    """One forward-pass row: input ids, positions to read, and their targets."""

    text: int
    input_ids: list[int]
    positions: list[int]
    targets: list[int]


def sliding_windows(num_tokens: int, max_length: int, stride: int) -> list[tuple[int, int, int]]:
    """Windows scoring every token of a text exactly once.

    Token ``t >= 1`` is predicted from position ``t - 1``. Window
    ``(begin, end, first)`` feeds ``ids[begin:end]`` (at most ``max_length``
    tokens) and scores the predictions made at positions ``first..end-1``,
    i.e. tokens ``first+1..end``. Consecutive windows start ``stride`` tokens
    apart, so every token is predicted once, from the longest context that a
    window ending at it allows (at least ``max_length - stride + 1`` tokens
    once the first window is full). ``stride == max_length`` gives disjoint
    windows; ``stride == 1`` gives every token a full ``max_length`` context.

    Args:
        num_tokens: Length ``L`` of the tokenised text (``L - 1`` are scored).
        max_length: Model context in tokens.
        stride: Shift between windows, ``1 <= stride <= max_length``.

    Returns:
        The ``(begin, end, first)`` triples.

    >>> sliding_windows(10, 4, 4)
    [(0, 4, 0), (4, 8, 4), (8, 9, 8)]
    >>> sliding_windows(10, 4, 2)
    [(0, 4, 0), (2, 6, 4), (4, 8, 6), (6, 9, 8)]
    """
    if not 1 <= stride <= max_length:
        raise InvalidArgumentError(f"stride must be in [1, max_length={max_length}], not {stride}")
    last = num_tokens - 1
    windows = []
    begin = first = 0
    while True:
        end = min(begin + max_length, last)
        windows.append((begin, end, first))
        if end == last:
            return windows
        first = end
        begin += stride


def causal_perplexity(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    texts: str | Sequence[str],
    batch_size: int = 8,
    stride: int | None = None,
    add_bos: bool | None = None,
    *,
    max_length: int | None = None,
    padding_side: Literal["left", "right"] | None = None,
) -> TextsResult:
    """Perplexity of texts under a causal LM.

    Each text is tokenised on its own; token ``t`` is scored from tokens
    ``< t`` (the first token is context only). Texts longer than the context
    need ``stride``: windows of ``max_length`` tokens shifted by ``stride``
    (see :func:`sliding_windows`) score every token exactly once.

    Args:
        model: Any ``AutoModelForCausalLM`` (put it on a GPU to use one).
        tokenizer: Its tokenizer.
        texts: A text or a sequence of non-empty texts.
        batch_size: Windows per forward pass.
        stride: Sliding-window shift for texts longer than the context.
        add_bos: ``True`` prepends ``tokenizer.bos_token_id`` so that the first
            real token is scored; ``False`` adds no special token (the first
            token is not scored); ``None`` keeps the tokenizer's own default
            special tokens (e.g. Llama's BOS; nothing for GPT-2).
        max_length: Context length; default from the model config
            (``n_positions`` / ``max_position_embeddings``).
        padding_side: ``"left"`` or ``"right"``; default the tokenizer's.

    Returns:
        A :class:`TextsResult`: ``perplexity`` (micro), ``macro_perplexity``,
        ``cross_entropy_bits``, ``num_tokens`` and per-text
        ``document_logprobs`` / ``token_ids``.

    Raises:
        InvalidArgumentError: Empty texts, a text with nothing to score, a
            text longer than the context without ``stride``, bad arguments.

    >>> r = causal_perplexity(model, tokenizer, ["the cat sat"], add_bos=True)  # doctest: +SKIP
    >>> r.perplexity, r.document_logprobs[0]  # doctest: +SKIP
    """
    context = _context_length(model, tokenizer, max_length)
    items = []
    for index, ids in enumerate(_encode(tokenizer, texts, add_bos)):
        if len(ids) < 2:
            raise InvalidArgumentError(
                f"text {index} has fewer than 2 tokens, nothing to score (try add_bos=True)"
            )
        if len(ids) - 1 > context and stride is None:
            raise InvalidArgumentError(
                f"text {index} has {len(ids)} tokens, more than the context of {context} + 1; "
                "pass stride= for sliding-window evaluation"
            )
        for begin, end, first in sliding_windows(
            len(ids), context, context if stride is None else stride
        ):
            items.append(
                _Item(
                    index,
                    ids[begin:end],
                    list(range(first - begin, end - begin)),
                    ids[first + 1 : end + 1],
                )
            )
    side = padding_side or getattr(tokenizer, "padding_side", "right")
    return _collect(items, _score(model, tokenizer, items, batch_size, side))


def masked_pseudo_perplexity(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    texts: str | Sequence[str],
    batch_size: int = 64,
    word_l2r: bool = False,
    *,
    max_length: int | None = None,
) -> TextsResult:
    """Pseudo-log-likelihood (PLL) and pseudo-perplexity under a masked LM.

    Every non-special token is replaced by the mask token in turn and scored
    from the rest of the sentence (Salazar et al. 2020):
    ``PLL = sum_i log P(w_i | w_{-i})``, pseudo-perplexity ``exp(-PLL / N)``.
    With ``word_l2r=True`` (PLL-word-l2r, Kauf & Ivanova 2023, as in
    minicons) the pieces of the same word to the right of ``w_i`` are masked
    too, so multi-piece words are not scored from their own later pieces.
    All masked copies are scored ``batch_size`` copies per forward pass.

    Args:
        model: A masked LM (e.g. ``BertForMaskedLM``).
        tokenizer: Its tokenizer (a fast one for ``word_l2r``).
        texts: A text or a sequence of non-empty texts.
        batch_size: Masked copies per forward pass.
        word_l2r: Use the word-level left-to-right variant.
        max_length: Context length; default from the model config.

    Returns:
        A :class:`TextsResult`; ``log_prob`` is the PLL (nats) and
        ``perplexity`` the pseudo-perplexity (micro over texts).

    Raises:
        InvalidArgumentError: Empty texts, texts without scorable tokens or
            longer than the context, a tokenizer without a mask token.

    >>> r = masked_pseudo_perplexity(model, tokenizer, ["the cat sat"])  # doctest: +SKIP
    >>> r.log_prob, r.perplexity  # doctest: +SKIP
    """
    if tokenizer.mask_token_id is None:
        raise InvalidArgumentError("the tokenizer has no mask token")
    context = _context_length(model, tokenizer, max_length)
    items = []
    for index, text in enumerate(_texts(texts)):
        encoding = tokenizer(text, return_special_tokens_mask=True)
        ids = list(encoding["input_ids"])
        if len(ids) > context:
            raise InvalidArgumentError(
                f"text {index} has {len(ids)} tokens, more than the context of {context}"
            )
        words = _word_ids(encoding) if word_l2r else [None] * len(ids)
        scored = [i for i, special in enumerate(encoding["special_tokens_mask"]) if not special]
        if not scored:
            raise InvalidArgumentError(f"text {index} has no token to score")
        for i in scored:
            masked = list(ids)
            masked[i] = tokenizer.mask_token_id
            if words[i] is not None:
                for j in range(i + 1, len(ids)):
                    if words[j] == words[i]:
                        masked[j] = tokenizer.mask_token_id
            items.append(_Item(index, masked, [i], [ids[i]]))
    return _collect(items, _score(model, tokenizer, items, batch_size, "right"))


def _texts(texts: str | Sequence[str]) -> list[str]:
    texts = [texts] if isinstance(texts, str) else list(texts)
    if not texts:
        raise InvalidArgumentError("no texts given")
    for index, text in enumerate(texts):
        if not isinstance(text, str) or not text.strip():
            raise InvalidArgumentError(f"text {index} is empty or not a string")
    return texts


def _encode(
    tokenizer: PreTrainedTokenizerBase, texts: str | Sequence[str], add_bos: bool | None
) -> list[list[int]]:
    """Token ids of each text under the BOS policy of :func:`causal_perplexity`."""
    if add_bos and tokenizer.bos_token_id is None:
        raise InvalidArgumentError("add_bos=True but the tokenizer has no BOS token")
    encoded = []
    for text in _texts(texts):
        ids = list(tokenizer(text, add_special_tokens=add_bos is None)["input_ids"])
        encoded.append([tokenizer.bos_token_id, *ids] if add_bos else ids)
    return encoded


def _word_ids(encoding: Any) -> list[int | None]:
    try:
        return encoding.word_ids()
    except (AttributeError, ValueError):
        raise InvalidArgumentError("word_l2r=True needs a fast tokenizer (word_ids)") from None


def _context_length(
    model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, max_length: int | None
) -> int:
    """Model context in tokens: argument, else model config, else tokenizer."""
    if max_length is None:
        config = model.config
        for name in ("n_positions", "max_position_embeddings", "n_ctx", "seq_length"):
            if isinstance(getattr(config, name, None), int):
                max_length = getattr(config, name)
                break
        else:
            max_length = getattr(tokenizer, "model_max_length", None)
    if not isinstance(max_length, int) or not 0 < max_length < 10**9:
        raise InvalidArgumentError("cannot determine the context length; pass max_length=")
    return max_length


def _score(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    items: list[_Item],
    batch_size: int,
    padding_side: str,
) -> list[np.ndarray]:
    """Log-probs (nats, float64) of each item's targets, in item order."""
    if batch_size < 1:
        raise InvalidArgumentError(f"batch_size must be >= 1, not {batch_size}")
    if padding_side not in ("left", "right"):
        raise InvalidArgumentError(f"padding_side must be 'left' or 'right', not {padding_side!r}")
    pad_id = next((i for i in (tokenizer.pad_token_id, tokenizer.eos_token_id) if i is not None), 0)
    device = next(model.parameters()).device
    takes_positions = "position_ids" in inspect.signature(model.forward).parameters
    order = sorted(range(len(items)), key=lambda k: -len(items[k].input_ids))
    results: list[np.ndarray] = [np.empty(0)] * len(items)
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            batch = [items[k] for k in order[start : start + batch_size]]
            width = max(len(item.input_ids) for item in batch)
            ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            rows, cols, targets = [], [], []
            for row, item in enumerate(batch):
                offset = width - len(item.input_ids) if padding_side == "left" else 0
                ids[row, offset : offset + len(item.input_ids)] = torch.tensor(item.input_ids)
                mask[row, offset : offset + len(item.input_ids)] = 1
                rows += [row] * len(item.positions)
                cols += [offset + p for p in item.positions]
                targets += item.targets
            inputs = {"input_ids": ids.to(device), "attention_mask": mask.to(device)}
            if takes_positions:
                inputs["position_ids"] = (mask.cumsum(-1) - 1).clamp(min=0).to(device)
            logits = model(**inputs).logits[rows, cols]
            logits = logits.to(torch.promote_types(logits.dtype, torch.float32))
            picked = logits.gather(-1, torch.tensor(targets, device=device)[:, None])[:, 0]
            logprobs = (picked - torch.logsumexp(logits, -1)).double().cpu().numpy()
            if not np.isfinite(logprobs).all():
                raise InvalidArgumentError("the model produced NaN or infinite logits")
            for k, item in zip(order[start : start + batch_size], batch, strict=True):
                results[k], logprobs = np.split(logprobs, [len(item.positions)])
    return results


def _collect(items: list[_Item], logprobs: list[np.ndarray]) -> TextsResult:
    """Concatenate per-item scores per text (items are in text and position order)."""
    num_texts = items[-1].text + 1
    per_text: list[list[np.ndarray]] = [[] for _ in range(num_texts)]
    per_ids: list[list[int]] = [[] for _ in range(num_texts)]
    for item, scores in zip(items, logprobs, strict=True):
        per_text[item.text].append(scores)
        per_ids[item.text] += item.targets
    docs = tuple(np.concatenate(parts) for parts in per_text)
    return TextsResult(
        log_prob=float(sum(d.sum() for d in docs)),
        num_tokens=sum(d.size for d in docs),
        document_logprobs=docs,
        token_ids=tuple(np.array(ids, dtype=np.int64) for ids in per_ids),
    )
