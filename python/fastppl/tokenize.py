"""NLTK's ``word_tokenize`` and ``sent_tokenize``, natively or by NLTK's own code.

The ``"native"`` engine is the Rust port (``rust/corpus/nltk/``) of NLTK's Punkt sentence
tokenizer and ``NLTKWordTokenizer``; it gives the tokens and sentences of NLTK
:data:`NLTK_REFERENCE` (checked token for token in ``tests/test_nltk_native.py``) at native
speed, on all cores. The ``"python"`` engine runs NLTK's own classes with the same Punkt
parameters: the definition the native engine is tested against.

Punkt parameters (``punkt_tab/<language>/``) for English and Portuguese are bundled with fastppl
(``fastppl/data/punkt_tab``, NLTK data under the Apache License 2.0); other languages are looked up
on NLTK's data path (``NLTK_DATA``, ``nltk.data.path``). A language found nowhere raises
:class:`~fastppl.errors.PunktDataNotFoundError`: there is no fallback that would change the tokens.

>>> word_tokenize("Dr. Watson's here. Isn't he?")
['Dr.', 'Watson', "'s", 'here', '.', 'Is', "n't", 'he', '?']
>>> sent_tokenize("Dr. Watson's here. Isn't he?")
["Dr. Watson's here.", "Isn't he?"]
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING, Literal, get_args

from fastppl import _core
from fastppl._checks import check_bool, not_utf8
from fastppl.errors import InvalidArgumentError, InvalidTypeError, PunktDataNotFoundError

if TYPE_CHECKING:
    from nltk.tokenize.punkt import PunktSentenceTokenizer

__all__ = [
    "BUNDLED_PUNKT",
    "ENGINES",
    "NLTK_REFERENCE",
    "Engine",
    "punkt_available",
    "punkt_dir",
    "punkt_model",
    "sent_tokenize",
    "word_tokenize",
]

Engine = Literal["native", "python"]
ENGINES: tuple[str, ...] = get_args(Engine)

#: The NLTK release whose ``word_tokenize``/``sent_tokenize`` output the native engine reproduces.
NLTK_REFERENCE = "3.10.4"

#: The Punkt parameters shipped with fastppl (``english``, ``portuguese``).
BUNDLED_PUNKT = Path(__file__).parent / "data" / "punkt_tab"

#: What the native engine's error for text it cannot read adds.
_PYTHON_ACCEPTS = "; engine='python' (NLTK's own code) accepts it"

_PUNKT_FILES = ("abbrev_types.txt", "collocations.tab", "sent_starters.txt", "ortho_context.tab")


def _check_language(language: object) -> str:
    """``language`` if it can name one ``punkt_tab`` folder (NLTK's own rule)."""
    if (
        not isinstance(language, str)
        or not language
        or not all(c.isalnum() or c in "-_" for c in language)
    ):
        raise InvalidArgumentError(
            f"language={language!r} is not a Punkt language name (letters, digits, '-', '_'; "
            f"e.g. 'english')"
        )
    return language


def _check_engine(engine: object) -> str:
    if engine not in ENGINES:
        raise InvalidArgumentError(
            f"engine={engine!r} is not valid; expected one of {', '.join(map(repr, ENGINES))}"
        )
    return str(engine)


def punkt_dir(language: str = "english") -> Path:
    """The folder of Punkt parameters for ``language``: the bundled one, else the first
    ``tokenizers/punkt_tab/<language>/`` on NLTK's data path.

    Args:
        language: An NLTK language name (``"english"``, ``"portuguese"``, ``"german"`` ...).

    Returns:
        The folder.

    Raises:
        InvalidArgumentError: ``language`` cannot be a folder name.
        PunktDataNotFoundError: No folder holds the parameters of ``language``.

    >>> punkt_dir("portuguese").name
    'portuguese'
    """
    language = _check_language(language)
    bundled = BUNDLED_PUNKT / language
    if bundled.is_dir():
        return bundled
    try:
        import nltk.data
    except ImportError:  # pragma: no cover - nltk is a dependency
        searched: list[str] = []
    else:
        searched = [str(p) for p in nltk.data.path]
        for root in nltk.data.path:
            candidate = Path(root) / "tokenizers" / "punkt_tab" / language
            if candidate.is_dir():
                return candidate
    raise PunktDataNotFoundError(None, language, searched, _available_languages(searched))


def _available_languages(roots: list[str]) -> list[str]:
    """The languages with a folder of Punkt parameters, bundled or under ``roots`` (NLTK's
    data path), sorted: what the error for a language found nowhere lists."""
    folders = [BUNDLED_PUNKT] + [Path(root) / "tokenizers" / "punkt_tab" for root in roots]
    found = set()
    for folder in folders:
        try:
            found.update(entry.name for entry in folder.iterdir() if entry.is_dir())
        except OSError:  # no such folder, or not readable
            continue
    return sorted(found)


def punkt_available(language: str = "english") -> bool:
    """Whether Punkt parameters for ``language`` are bundled or on NLTK's data path.

    >>> punkt_available("english"), punkt_available("no-such-language")
    (True, False)
    """
    try:
        punkt_dir(language)
    except (PunktDataNotFoundError, InvalidArgumentError):
        return False
    return True


def punkt_model(language: str = "english") -> _core.PunktModel:
    """The native Punkt model of ``language`` (loaded once per language).

    Raises:
        PunktDataNotFoundError: No parameters for ``language`` (see :func:`punkt_dir`).
        PunktDataError: A parameter file is malformed (the message names file and line).

    >>> punkt_model("english").sent_tokenize("It is. It was.")
    ['It is.', 'It was.']
    """
    if not isinstance(language, str):  # (unhashable, maybe: refused before the cache)
        _check_language(language)
    return _language_model(language)


@functools.lru_cache(maxsize=32)
def _language_model(language: str) -> _core.PunktModel:
    """The model of ``language``, its name checked and its folder looked up once (as NLTK
    caches its tokenizer per language; an error is not cached): a sentence-at-a-time caller
    would otherwise spend more on them than on the tokenizing."""
    return _core.PunktModel(str(punkt_dir(language)))


@functools.lru_cache(maxsize=32)
def _python_model(path: str) -> PunktSentenceTokenizer:
    """NLTK's own tokenizer with the parameters in ``path`` (read as NLTK's
    ``load_punkt_params`` reads them; NLTK refuses to open files outside its data path)."""
    from nltk.tabdata import PunktDecoder
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

    params = PunktParameters()
    decoder = PunktDecoder()
    folder = Path(path)
    with open(folder / "collocations.tab", encoding="utf-8") as f:
        params.collocations = set(decoder.tab2tups(f))
    with open(folder / "sent_starters.txt", encoding="utf-8") as f:
        params.sent_starters = decoder.txt2set(f)
    with open(folder / "abbrev_types.txt", encoding="utf-8") as f:
        params.abbrev_types = decoder.txt2set(f)
    with open(folder / "ortho_context.tab", encoding="utf-8") as f:
        params.ortho_context = decoder.tab2intdict(f)
    return PunktSentenceTokenizer(params)


def sent_tokenize(text: str, language: str = "english", engine: Engine = "native") -> list[str]:
    """NLTK's ``sent_tokenize(text, language)``: the sentences of ``text``.

    Args:
        text: The text.
        language: The Punkt language (see :func:`punkt_dir`).
        engine: ``"native"`` (Rust, GIL released) or ``"python"`` (NLTK's code).

    Returns:
        The sentences, as substrings of ``text``.

    Raises:
        InvalidTypeError: ``text`` is not a str.
        InvalidArgumentError: An unknown ``engine`` or a bad ``language``, or the native engine
            is given a ``text`` holding a lone surrogate (not UTF-8; the message names its
            position).
        PunktDataNotFoundError: No Punkt parameters for ``language``.

    >>> sent_tokenize("Mr. Brown left. (He was late.) Why?")
    ['Mr. Brown left.', '(He was late.)', 'Why?']
    """
    _check_text(text)
    if _check_engine(engine) == "python":
        return _python_model(str(punkt_dir(language))).tokenize(text)
    model = punkt_model(language)
    try:  # (a bare try: a context manager would slow a sentence-at-a-time caller by a fifth)
        return model.sent_tokenize(text)
    except UnicodeEncodeError as err:
        raise not_utf8("text", text, _PYTHON_ACCEPTS) from err


def word_tokenize(
    text: str,
    language: str = "english",
    preserve_line: bool = False,
    engine: Engine = "native",
) -> list[str]:
    """NLTK's ``word_tokenize(text, language, preserve_line)``: Punkt sentences (unless
    ``preserve_line``), then NLTK's improved Treebank rules (``NLTKWordTokenizer``) on each.

    Args:
        text: The text.
        language: The Punkt language (see :func:`punkt_dir`).
        preserve_line: Tokenize ``text`` as one sentence (no Punkt split).
        engine: ``"native"`` (Rust, all cores, GIL released) or ``"python"`` (NLTK's code).

    Returns:
        The tokens.

    Raises:
        InvalidTypeError: ``text`` is not a str, or ``preserve_line`` is not a bool (NLTK
            would take any value for its truth: ``preserve_line="no"`` for True).
        InvalidArgumentError: An unknown ``engine`` or a bad ``language``, or the native engine
            is given a ``text`` holding a lone surrogate (not UTF-8; the message names its
            position).
        PunktDataNotFoundError: No Punkt parameters for ``language``.

    >>> word_tokenize("They'll pay $3.50, won't they?")
    ['They', "'ll", 'pay', '$', '3.50', ',', 'wo', "n't", 'they', '?']
    >>> word_tokenize("It ends. Here.", preserve_line=True)
    ['It', 'ends.', 'Here', '.']
    """
    _check_text(text)
    if preserve_line is not True and preserve_line is not False:  # (a cheap test first)
        preserve_line = check_bool("preserve_line", preserve_line)
    if _check_engine(engine) == "python":
        from nltk.tokenize.destructive import NLTKWordTokenizer

        words = NLTKWordTokenizer()
        sentences = [text] if preserve_line else sent_tokenize(text, language, "python")
        return [token for sentence in sentences for token in words.tokenize(sentence)]
    model = None if preserve_line else punkt_model(language)
    try:
        return _core.nltk_word_tokenize(text, model)
    except UnicodeEncodeError as err:
        raise not_utf8("text", text, _PYTHON_ACCEPTS) from err


def _check_text(text: object) -> None:
    if not isinstance(text, str):
        raise InvalidTypeError(f"text must be a str, got {type(text).__name__}")
