"""WordPiece tokenizers for tiny Hugging Face models, trained on the spot (nothing is
downloaded): for the tests of ``fastppl.hf`` and the README's example of it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def train_tokenizer(texts: Iterable[str], post_processor: bool) -> Any:
    """A ``PreTrainedTokenizerFast`` of at most 100 WordPiece tokens trained on ``texts``, with
    ``[PAD] [UNK] [CLS] [SEP] [MASK] [BOS]`` as its special tokens (ids 0-5); with
    ``post_processor``, it wraps each text in ``[CLS] ... [SEP]``, as a masked LM's does."""
    import transformers
    from tokenizers import Tokenizer, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "[BOS]"]
    tok.train_from_iterator(
        texts, trainers.WordPieceTrainer(vocab_size=100, special_tokens=specials)
    )
    if post_processor:
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
        )
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        bos_token="[BOS]",
    )
