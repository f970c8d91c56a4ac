"""A stand-in for the ``kenlm`` Python module's whole-sentence API, backed by fastppl.

Code written for ``kenlm`` runs unchanged with ``sys.modules["kenlm"] = fastppl.kenlm`` as long
as it uses :class:`Model` (or :class:`LanguageModel`) with ``order``, ``path``, ``score``,
``perplexity``, ``full_scores`` and ``in``. Scores are log10, as in KenLM, and every sentence is
scored in one Rust call.

Differences from the ``kenlm`` module:

- ``score`` sums in float64 where KenLM sums in float32: totals can differ by ~1e-5 on long
  sentences (each token's score agrees to 1e-6).
- ARPA files, fastppl binary models and KenLM's binary tries (``build_binary trie``, also
  quantized or with compressed pointers) are read; KenLM's probing binaries (``build_binary``'s
  default) are refused with a :class:`fastppl.errors.ModelFormatError` (load the ARPA file, or
  build a trie). Loading a trie reads every n-gram into memory, where ``kenlm`` maps the file.
- The incremental ``State`` API (``BaseScore``, ``BeginSentenceWrite``, ...) is not provided.
- ``<s>`` and ``</s>`` inside a sentence raise :class:`fastppl.errors.InvalidArgumentError`.

>>> import fastppl
>>> corpus = fastppl.Corpus.from_sentences([["a", "b"], ["a", "c"]])
>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "m.arpa")
>>> fastppl.NGramModel.fit(corpus, order=2, smoothing="kneser_ney").to_arpa(path)
>>> m = Model(path)
>>> m.order, "a" in m, "z" in m
(2, True, False)
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from fastppl.errors import InvalidTypeError
from fastppl.model import NGramModel


class Model:
    """An n-gram model read from ``path`` (ARPA, plain or compressed, fastppl binary, or a KenLM
    binary trie).

    ``path`` is then the absolute path as bytes, as in the kenlm module.

    Args:
        path: the model file.
        config: accepted for compatibility with ``kenlm.Model(path, config)``; ignored.

    >>> Model("/no/such/model.arpa")
    Traceback (most recent call last):
    ...
    fastppl.errors.ModelFileNotFoundError: model file not found: '/no/such/model.arpa'
    """

    def __init__(self, path: str | os.PathLike[str], config: object = None) -> None:
        #: the absolute path as bytes, as the kenlm module has it
        self.path = os.fsencode(os.path.abspath(path))
        self._model = NGramModel.from_file(os.fsdecode(self.path))

    @property
    def order(self) -> int:
        """The order N of the model."""
        return self._model.order

    def score(self, sentence: str, bos: bool = True, eos: bool = True) -> float:
        """log10 p of a whitespace-tokenized sentence (with ``</s>`` when ``eos``).

        Example: ``Model("m.arpa").score("o dia")``.
        """
        return float(self._model.full_scores(_words(sentence), 10, bos=bos, eos=eos).logprob.sum())

    def perplexity(self, sentence: str) -> float:
        """``10 ** (-score / (words + 1))``: the sentence's perplexity, ``</s>`` counted.

        Example: ``Model("m.arpa").perplexity("o dia")``.
        """
        words = len(_words(sentence)) + 1
        return 10.0 ** (-self.score(sentence) / words)

    def full_scores(
        self, sentence: str, bos: bool = True, eos: bool = True
    ) -> Iterator[tuple[float, int, bool]]:
        """``(log10 p, ngram_length, oov)`` of each word, then of ``</s>`` when ``eos``.

        Example: ``list(Model("m.arpa").full_scores("o dia"))``.
        """
        s = self._model.full_scores(_words(sentence), 10, bos=bos, eos=eos)
        return zip(s.logprob.tolist(), s.ngram_length.tolist(), s.oov.tolist(), strict=True)

    def __contains__(self, word: object) -> bool:
        return word != "<unk>" and word in self._model

    def __repr__(self) -> str:
        return f"<Model from {self.path!r}>"


#: ``kenlm.LanguageModel``: the same class.
LanguageModel = Model


def _words(sentence: str) -> list[str]:
    if not isinstance(sentence, str):
        raise InvalidTypeError(f"sentence must be a str, got {type(sentence).__name__}")
    return sentence.split()
