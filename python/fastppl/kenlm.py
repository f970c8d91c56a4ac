"""A stand-in for the ``kenlm`` Python module, backed by fastppl.

Code written for ``kenlm`` runs unchanged with ``sys.modules["kenlm"] = fastppl.kenlm``: it uses
:class:`Model` (or :class:`LanguageModel`) with ``order``, ``path``, ``score``, ``perplexity``,
``full_scores`` and ``in``, and the incremental API: :class:`State`, ``BeginSentenceWrite``,
``NullContextWrite``, ``BaseScore`` and ``BaseFullScore`` (which returns a
:class:`FullScoreReturn`). Scores are log10, as in KenLM; every sentence is scored in one Rust
call, and ``BaseScore`` scores its one word in Rust.

Differences from the ``kenlm`` module:

- ``score`` sums in float64 where KenLM sums in float32, whose error grows with the sentence's
  length (each token's score agrees to 1e-6): on Machado's words with
  ``machado-small.o5.arpa.gz``, 2e-7 apart for 20 words, 8e-4 for 1,000 and 3.3 for 100,000
  (kenlm -175327.22 against -175330.49, the sum of its own ``full_scores`` -175330.49).
- ARPA files, fastppl binary models and KenLM's binary files are read; KenLM's binary files
  (probing, ``build_binary``'s default, and tries, also quantized or with compressed pointers)
  are mapped and scored in place, as ``kenlm`` does.
- ``<s>`` and ``</s>`` inside a sentence given to ``score``/``full_scores`` are words, as in
  KenLM (``score("<s> a fragment", bos=False)``, ``score("a fragment </s>", eos=False)``): such a
  sentence is scored a word at a time with ``BaseFullScore``, in Python (slower).
- ``BaseScore(state, "<s>", out)`` takes log10 p(``<s>``) = 0 (what lmplz writes) whatever the
  file says: fastppl keeps no probability for ``<s>``, which is never predicted.
- States compare equal exactly when KenLM's do (the same kept context); their order (``<``) is a
  consistent one, not KenLM's (which compares its own word ids' bytes). A state holds word ids of
  the model that wrote it: using it with another model scores nonsense in both, or raises
  :class:`fastppl.errors.InvalidArgumentError` here when an id is out of range.
- A state given to ``BaseScore`` must be a :class:`State` (:class:`fastppl.errors.InvalidTypeError`,
  a ``TypeError``); ``kenlm`` lets ``None`` through.
- A sentence or word holding a NUL character (``"\\0"``) raises
  :class:`fastppl.errors.InvalidArgumentError` naming its position: ``kenlm`` cuts it there
  (``score("o\\0dia")`` scores ``"o"``, ``full_scores`` an empty word), silently.
- A file that cannot be read as a model (malformed, truncated, a folder) raises
  :class:`ModelReadError`, a :class:`fastppl.errors.ModelFormatError` that is also an
  ``OSError`` as kenlm's is, naming the file and line; a missing one
  :class:`fastppl.errors.ModelFileNotFoundError` (a ``FileNotFoundError``). A ``path`` that is
  not a str, bytes or os.PathLike raises :class:`fastppl.errors.InvalidTypeError`, one holding
  a NUL character :class:`fastppl.errors.InvalidArgumentError`.
- :class:`Config`, :class:`LoadMethod` and :class:`ARPALoadComplain` hold kenlm's settings and
  values, so that code setting them runs, but have no effect: KenLM binary files are mapped,
  other files read, no progress is shown and ARPA files are checked alike.
- Opening a fastppl model fitted with ``bos_eos=False`` raises
  :class:`fastppl.errors.InvalidArgumentError`, and one of stupid backoff (scores, not
  probabilities) :class:`fastppl.errors.NotNormalizedError`: KenLM's models have neither.
- ``bos``/``eos`` must be bools (:class:`fastppl.errors.InvalidTypeError`; ``kenlm`` takes any
  value for its truth); ``in`` with anything but a str or bytes is False (``kenlm`` raises
  ``TypeError``).

>>> import fastppl
>>> corpus = fastppl.Corpus.from_sentences([["a", "b"], ["a", "c"]])
>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "m.arpa")
>>> fastppl.NGramModel.fit(corpus, order=2, smoothing="kneser_ney").to_arpa(path)
>>> m = Model(path)
>>> m.order, "a" in m, "z" in m
(2, True, False)
>>> state, out = State(), State()
>>> m.BeginSentenceWrite(state)
>>> r = m.BaseFullScore(state, "a", out)
>>> round(r.log_prob, 4), r.ngram_length, r.oov
(-0.1619, 2, False)
>>> round(m.BaseScore(out, "b", state) + r.log_prob, 4) == round(m.score("a b", eos=False), 4)
True
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Callable, Iterator
from typing import TypeVar

from fastppl import _core
from fastppl._checks import check_bool, surrogate_error
from fastppl.errors import (
    FastpplError,
    InvalidArgumentError,
    InvalidTypeError,
    ModelFormatError,
    NotNormalizedError,
)
from fastppl.model import NGramModel
from fastppl.text import kenlm_words

LN10 = math.log(10.0)

T = TypeVar("T")


@functools.total_ordering
class State:
    """A context for :meth:`Model.BaseScore`: the last words that can still matter (KenLM's
    ``lm::ngram::State``). Written by :meth:`Model.BeginSentenceWrite`,
    :meth:`Model.NullContextWrite` and ``BaseScore``'s ``out_state``; a new one is the empty
    context. Equal states score every next word alike; states are hashable and ordered.

    >>> State() == State(), len({State(), State()})
    (True, 1)
    """

    __slots__ = ("_context",)

    def __init__(self) -> None:
        #: word ids of the writing model, oldest first
        self._context: tuple[int, ...] = ()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, State):
            return NotImplemented
        return self._context == other._context

    def __lt__(self, other: State) -> bool:
        if not isinstance(other, State):
            return NotImplemented
        return (len(self._context), self._context) < (len(other._context), other._context)

    def __hash__(self) -> int:
        return hash(self._context)

    def __copy__(self) -> State:
        copy = State()
        copy._context = self._context
        return copy

    def __deepcopy__(self, memo: object) -> State:
        return self.__copy__()

    def __repr__(self) -> str:
        return f"<State of {len(self._context)} context word(s)>"


class FullScoreReturn:
    """What :meth:`Model.BaseFullScore` returns (KenLM's ``FullScoreReturn``).

    Attributes:
        log_prob: log10 p(word | context).
        ngram_length: length of the longest stored n-gram ending at the word (1: the unigram).
        oov: whether the word is out of the vocabulary (scored as ``<unk>``).

    >>> FullScoreReturn(-1.5, 2, False)
    FullScoreReturn(-1.5, 2, False)
    """

    __slots__ = ("log_prob", "ngram_length", "oov")

    def __init__(self, log_prob: float, ngram_length: int, oov: bool) -> None:
        self.log_prob = log_prob
        self.ngram_length = ngram_length
        self.oov = oov

    def __repr__(self) -> str:
        return f"FullScoreReturn({self.log_prob!r}, {self.ngram_length!r}, {self.oov!r})"


class LoadMethod:
    """How KenLM reads a binary file (``kenlm.LoadMethod``, its values): for :class:`Config`,
    without effect here."""

    LAZY = 0
    POPULATE_OR_LAZY = 1
    POPULATE_OR_READ = 2
    READ = 3
    PARALLEL_READ = 4


class ARPALoadComplain:
    """Which ARPA oddities KenLM reports (``kenlm.ARPALoadComplain``, its values): for
    :class:`Config`, without effect here."""

    ALL = 0
    EXPENSIVE = 1
    NONE = 2


class Config:
    """``kenlm.Config``: the settings of :class:`Model`, with kenlm's defaults. Accepted so that
    code written for kenlm runs; fastppl reads every model alike, whatever they say.

    >>> config = Config()
    >>> config.load_method == LoadMethod.POPULATE_OR_READ, config.show_progress
    (True, True)
    """

    __slots__ = ("arpa_complain", "load_method", "show_progress")

    def __init__(self) -> None:
        self.load_method: int = LoadMethod.POPULATE_OR_READ
        self.show_progress: bool = True
        self.arpa_complain: int = ARPALoadComplain.ALL


class ModelReadError(ModelFormatError, OSError):
    """A model file :class:`Model` cannot read: malformed, truncated, of no known kind, a folder
    or unreadable. A :class:`fastppl.errors.ModelFormatError` that is also an ``OSError``, as the
    kenlm module raises ``OSError`` for any file it cannot read (code written for it catches
    that); a missing file raises :class:`fastppl.errors.ModelFileNotFoundError`, also one.

    >>> issubclass(ModelReadError, OSError), issubclass(ModelReadError, ModelFormatError)
    (True, True)
    """


class Model:
    """An n-gram model read from ``path`` (ARPA, plain or compressed, fastppl binary, or a KenLM
    binary file, probing or trie, used in place).

    ``path`` is then the absolute path as bytes, as in the kenlm module.

    Args:
        path: the model file.
        config: a :class:`Config`, as in ``kenlm.Model(path, config)``; without effect.

    >>> Model("/no/such/model.arpa")
    Traceback (most recent call last):
    ...
    fastppl.errors.ModelFileNotFoundError: model file not found: '/no/such/model.arpa'
    """

    def __init__(self, path: str | bytes | os.PathLike[str], config: object = None) -> None:
        #: the absolute path as bytes, as the kenlm module has it
        self.path = _absolute_path(path)
        self._model = _open(os.fsdecode(self.path))
        if not self._model.bos_eos:
            raise InvalidArgumentError(
                f"{os.fsdecode(self.path)}: the model was fitted with bos_eos=False, but "
                "fastppl.kenlm scores sentences between <s> and </s>, as KenLM does (score it "
                "with NGramModel instead)"
            )
        if not self._model.normalized:
            raise NotNormalizedError(
                f"{os.fsdecode(self.path)}: a {self._model.smoothing} model gives scores, not "
                "probabilities: fastppl.kenlm computes no log probability or perplexity from it "
                "(score it with NGramModel.evaluate(..., allow_unnormalized=True))"
            )

    @property
    def order(self) -> int:
        """The order N of the model."""
        return self._model.order

    def score(self, sentence: str | bytes, bos: bool = True, eos: bool = True) -> float:
        """log10 p of a sentence (with ``</s>`` when ``eos``), its words separated by ASCII
        whitespace as in KenLM (a ``bytes`` sentence is UTF-8).

        Raises:
            InvalidArgumentError: the sentence holds a NUL character, a ``bytes`` sentence is
                not UTF-8, or a str one holds a lone surrogate (not UTF-8; the message names
                its position in ``sentence``).
            InvalidTypeError: ``sentence`` is neither str nor bytes, or ``bos``/``eos`` not a
                bool.

        Example: ``Model("m.arpa").score("o dia")``.
        """
        return self._log10_and_words(sentence, bos, eos)[0]

    def perplexity(self, sentence: str | bytes) -> float:
        """``10 ** (-score / (words + 1))``: the sentence's perplexity, ``</s>`` counted; errors
        as :meth:`score`.

        Example: ``Model("m.arpa").perplexity("o dia")``.
        """
        log10, words = self._log10_and_words(sentence, True, True)
        return 10.0 ** (-log10 / (words + 1))

    def _log10_and_words(self, sentence: str | bytes, bos: bool, eos: bool) -> tuple[float, int]:
        """log10 p of ``sentence`` and its number of words."""
        text, scored = self._in_core(self._model._inner.kenlm_score, sentence, bos, eos)
        if scored is None:  # <s> or </s> among its words
            words = kenlm_words(text)
            chained = self._chained_scores(text, words, bos, eos)
            return math.fsum(log10 for log10, _, _ in chained), len(words)
        return scored

    def full_scores(
        self, sentence: str | bytes, bos: bool = True, eos: bool = True
    ) -> Iterator[tuple[float, int, bool]]:
        """``(log10 p, ngram_length, oov)`` of each word, then of ``</s>`` when ``eos``; errors
        as :meth:`score`.

        Example: ``list(Model("m.arpa").full_scores("o dia"))``.
        """
        text, scored = self._in_core(self._model._inner.kenlm_full_scores, sentence, bos, eos)
        if scored is None:  # <s> or </s> among its words
            scored = self._chained_scores(text, kenlm_words(text), bos, eos)
        return iter(scored)

    def _in_core(
        self,
        scorer: Callable[[str, bool, bool], T | None],
        sentence: str | bytes,
        bos: bool,
        eos: bool,
    ) -> tuple[str, T | None]:
        """``sentence`` as a str, and ``scorer`` (``kenlm_score`` or ``kenlm_full_scores`` of
        the core's model) on it: its words split and scored in one Rust call (a sentence a
        call, as the kenlm module is used, spent most of its time making numpy arrays), None
        where one is ``<s>`` or ``</s>``. A lone surrogate is named by its position in it."""
        text = _text(sentence, "sentence")
        try:
            return text, scorer(text, check_bool("bos", bos), check_bool("eos", eos))
        except UnicodeEncodeError as err:
            raise surrogate_error({"sentence": text}, err) from err

    def _chained_scores(
        self, text: str, words: list[str], bos: bool, eos: bool
    ) -> list[tuple[float, int, bool]]:
        """The scores of ``words``, which hold ``<s>`` or ``</s>``, one word at a time with
        :meth:`BaseFullScore`, as the kenlm module scores every sentence (``NGramModel`` refuses
        the markers in a sentence); ``text`` is the sentence, named by a surrogate's error."""
        state, out = State(), State()
        if bos:
            self.BeginSentenceWrite(state)
        scores = []
        for word in [*words, "</s>"] if eos else words:
            try:
                r = self.BaseFullScore(state, word, out)
            except InvalidArgumentError as err:  # a lone surrogate, named by position in text
                if isinstance(err.__cause__, UnicodeEncodeError):
                    raise surrogate_error({"sentence": text}, err.__cause__) from err.__cause__
                raise
            scores.append((r.log_prob, r.ngram_length, r.oov))
            state, out = out, state
        return scores

    def BeginSentenceWrite(self, state: State) -> None:  # noqa: N802 (kenlm's name)
        """Sets ``state`` to the start of a sentence (the context ``<s>``)."""
        _check_state("state", state)
        state._context = tuple(self._contexts.sentence_start())

    def NullContextWrite(self, state: State) -> None:  # noqa: N802 (kenlm's name)
        """Sets ``state`` to the empty context (no ``<s>``)."""
        _check_state("state", state)
        state._context = ()

    def BaseScore(self, in_state: State, word: str | bytes, out_state: State) -> float:  # noqa: N802
        """log10 p(``word`` | ``in_state``); writes the context after ``word`` to ``out_state``.

        ``word`` is any one word, ``</s>`` included (score it last to end a sentence); an
        unknown word scores as ``<unk>``. ``in_state`` and ``out_state`` may be the same object.
        """
        return self._score_word(in_state, word, out_state)[0] / LN10

    def BaseFullScore(  # noqa: N802 (kenlm's name)
        self, in_state: State, word: str | bytes, out_state: State
    ) -> FullScoreReturn:
        """:meth:`BaseScore` with the matched n-gram length and the OOV flag.

        Raises:
            InvalidTypeError: a state is not a :class:`State`, or ``word`` neither str nor bytes.
            InvalidArgumentError: ``word`` holds a NUL character, a ``bytes`` one is not
                UTF-8, a str one holds a lone surrogate (not UTF-8; the message names its
                position), or ``in_state`` was written by another model (a word id out of
                range).
        """
        logp, length, oov = self._score_word(in_state, word, out_state)
        return FullScoreReturn(logp / LN10, length, oov)

    def _score_word(
        self, in_state: State, word: str | bytes, out_state: State
    ) -> tuple[float, int, bool]:
        """ln p(``word`` | ``in_state``), the matched n-gram length and the OOV flag, the
        context after ``word`` written to ``out_state``. (A beam search calls this for every
        word of every beam: the usual types, a str word and two `State`s, are checked first.)"""
        if type(in_state) is not State or type(out_state) is not State:
            _check_state("in_state", in_state)
            _check_state("out_state", out_state)
        text = word if type(word) is str and "\0" not in word else _text(word, "word")
        try:
            logp, length, oov, context = self._contexts.score_word(in_state._context, text)
        except UnicodeEncodeError as err:
            raise surrogate_error({"word": text}, err) from err
        out_state._context = context
        return logp, length, oov

    @functools.cached_property
    def _contexts(self) -> _core.ContextScorer:
        """The scorer of the State API, built on first use (it marks which n-grams extend)."""
        return _core.ContextScorer(self._model._inner)

    def __contains__(self, word: object) -> bool:
        if isinstance(word, bytes):
            try:
                word = word.decode("utf-8")
            except UnicodeDecodeError:  # no word of the model
                return False
        return word != "<unk>" and word in self._model

    def __reduce__(self) -> tuple[type[Model], tuple[bytes]]:
        """Pickles as the path, as the kenlm module does: unpickling opens the file again (so
        that a model can be sent to ``multiprocessing`` workers)."""
        return (type(self), (self.path,))

    def __repr__(self) -> str:
        """``<Model from b'name.arpa'>``: the file's name, without its folder, as kenlm shows it."""
        return f"<Model from {os.path.basename(self.path)!r}>"


#: ``kenlm.LanguageModel``: the same class.
LanguageModel = Model


def _absolute_path(path: object) -> bytes:
    """``path`` made absolute, as bytes (``kenlm.Model.path``).

    Raises:
        InvalidTypeError: ``path`` is not a str, bytes or os.PathLike.
        InvalidArgumentError: ``path`` holds a NUL character (no file has such a name).
    """
    if not isinstance(path, str | bytes | os.PathLike):
        raise InvalidTypeError(
            f"path must be a str, bytes or os.PathLike, got {type(path).__name__}"
        )
    absolute = os.fsencode(os.path.abspath(path))
    if b"\0" in absolute:
        raise InvalidArgumentError(f"model path {os.fspath(path)!r} holds a NUL character")
    return absolute


def _open(path: str) -> NGramModel:
    """The model in the file ``path``; a file that cannot be read as a model raises an
    ``OSError``, as in the kenlm module.

    Raises:
        ModelFileNotFoundError: ``path`` does not exist.
        ModelReadError: the file is malformed, of no known kind, a folder or unreadable.
    """
    try:
        return NGramModel.from_file(path)
    except ModelFormatError as err:
        raise ModelReadError(str(err), err.path or path, err.line) from err
    except OSError as err:
        if isinstance(err, FastpplError):  # ModelFileNotFoundError
            raise
        raise ModelReadError(
            f"cannot read model file {path!r}: {err.strerror or err}", path
        ) from err


def _text(value: str | bytes, name: str) -> str:
    """``value`` as a str: a ``bytes`` one is decoded as UTF-8, as the kenlm module encodes a
    str. A NUL character is refused: kenlm's C++ side reads a C string, cut there."""
    if isinstance(value, bytes):
        try:
            value = value.decode("utf-8")
        except UnicodeDecodeError as e:
            raise InvalidArgumentError(
                f"{name} is not valid UTF-8: byte {e.start} ({value[e.start : e.start + 1]!r})"
            ) from None
    elif not isinstance(value, str):
        raise InvalidTypeError(f"{name} must be a str or bytes, got {type(value).__name__}")
    if "\0" in value:
        raise InvalidArgumentError(
            f"{name} holds a NUL character at position {value.index(chr(0))}: the kenlm module "
            "reads a word or sentence only up to it (C strings), so no score is right for it"
        )
    return value


def _check_state(name: str, state: object) -> None:
    if not isinstance(state, State):
        raise InvalidTypeError(f"{name} must be a fastppl.kenlm.State, got {type(state).__name__}")
