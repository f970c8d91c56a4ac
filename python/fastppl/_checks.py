"""Argument checks shared by the public API (clear exceptions before anything reaches Rust)."""

from __future__ import annotations

import contextlib
import math
import numbers
import operator
import os
import re
import reprlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Generic, Literal, TypeVar, get_args, overload

from fastppl.errors import InvalidArgumentError, InvalidTypeError

RESERVED = ("<s>", "</s>")

#: The largest count the core takes (its counts, ``min_count`` and pruning thresholds are
#: unsigned 64-bit integers).
U64_MAX = 2**64 - 1

T = TypeVar("T")


LogBase = float | Literal["e", "2", "10"]
"""A log base as every function of the public API takes it: ``"e"``, 2, 10 (also as the strings
the CLI reads) or any finite number > 1."""


def log_base_divisor(base: LogBase | None) -> float:
    """ln(base), the one parser of log bases: divides natural logs into logs of ``base``.

    None and ``"e"`` give 1; ``"2"`` and ``"10"`` are read as numbers; any other value must be a
    real number (not a bool), finite and > 1 (a base below 1 would flip the sign of every log
    probability), else :class:`InvalidArgumentError`.

    >>> round(log_base_divisor(10), 6)
    2.302585
    >>> log_base_divisor("2") == log_base_divisor(2)
    True
    """
    if base is None or base == "e":
        return 1.0
    number = _NAMED_BASES.get(base) if isinstance(base, str) else base
    if isinstance(number, bool) or not isinstance(number, numbers.Real):
        raise InvalidArgumentError(
            f"base must be 'e', '2', '10' or a finite number > 1, got {base!r}"
        )
    value = float(number)
    if not (math.isfinite(value) and value > 1):
        raise InvalidArgumentError(f"base must be a finite number > 1 (2, 10, ...), got {base!r}")
    return math.log(value)


_NAMED_BASES = {"2": 2.0, "10": 10.0}


#: The names of NumPy's bool type (``numpy.bool_``; ``numpy.bool`` since NumPy 2).
NUMPY_BOOLS = ("bool_", "bool")


def check_bool(name: str, value: object) -> bool:
    """``value`` if it is a bool (numpy bools too), else :class:`InvalidTypeError`.

    (NumPy's bool is told by its type's module and name, ``bool_`` before NumPy 2, ``bool``
    since, so that this module does not import NumPy.)
    """
    kind = type(value)
    if isinstance(value, bool) or (kind.__module__ == "numpy" and kind.__name__ in NUMPY_BOOLS):
        return bool(value)
    raise InvalidTypeError(f"{name} must be True or False, got {value!r}")


def check_int(name: str, value: object) -> int:
    """``value`` as an int if it is an integer (numpy integers too; not bool)."""
    if isinstance(value, bool):
        raise InvalidTypeError(f"{name} must be an int, got {value!r}")
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise InvalidTypeError(f"{name} must be an int, got {type(value).__name__}") from None


def check_number(name: str, value: object) -> float:
    """``value`` as a float if it is a real number (numpy numbers too; not bool, not str)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidTypeError(f"{name} must be a number, got {type(value).__name__}")
    return float(value)


def check_iterable(value: Iterable[T], name: str, items: str) -> Iterable[T]:
    """``value`` itself (not consumed: a generator stays lazy), refusing with
    :class:`InvalidTypeError` a single str, bytes or path where an iterable of ``items`` is
    expected: iterating one would silently give its characters.

    >>> check_iterable(["a.txt"], "paths", "paths")
    ['a.txt']
    >>> check_iterable("a.txt", "paths", "paths")
    Traceback (most recent call last):
    ...
    fastppl.errors.InvalidTypeError: paths must be an iterable of paths, not one str: got 'a.txt'
    """
    if isinstance(value, str | bytes | os.PathLike):
        raise InvalidTypeError(
            f"{name} must be an iterable of {items}, not one {type(value).__name__}: "
            f"got {reprlib.repr(value)}"
        )
    return value


def check_tokens(value: Sequence[str], what: str, *, allow_reserved: bool = True) -> list[str]:
    """A list of str tokens, refusing a bare str (a common slip) and, if asked, ``<s>``/``</s>``."""
    if isinstance(value, str):
        raise InvalidTypeError(f"{what} must be a sequence of tokens, not a str (split it first)")
    try:
        tokens = list(value)
    except TypeError:
        raise InvalidTypeError(
            f"{what} must be a sequence of str tokens, got {type(value).__name__}"
        ) from None
    for position, token in enumerate(tokens):
        if not isinstance(token, str):
            raise InvalidTypeError(
                f"{what}[{position}] must be a str token, got {type(token).__name__}"
            )
        if not allow_reserved and token in RESERVED:
            raise InvalidArgumentError(
                f"{what} holds the reserved token {token!r} at position {position}: sentence "
                "markers are added by fastppl (bos_eos=True), do not put them in the text"
            )
    return tokens


#: A UTF-16 surrogate: a Python str may hold one alone (``"\\ud800"``), UTF-8 text, all the core
#: reads, may not.
_SURROGATE = re.compile("[\ud800-\udfff]")


def has_surrogate(text: str) -> bool:
    """Whether ``text`` holds a lone surrogate, which UTF-8 cannot encode.

    >>> has_surrogate("ok \\ud83d"), has_surrogate("ok")
    (True, False)
    """
    return _SURROGATE.search(text) is not None


def not_utf8(name: str, text: str, hint: str = "") -> InvalidArgumentError:
    """The error for ``text`` (the argument ``name``), which the core refused with
    :class:`UnicodeEncodeError` for a lone surrogate: it names the position of the first one,
    and ends with ``hint``. Called only after the core refused it (or :func:`check_utf8` found
    it), never to check a text.

    >>> "('\\\\ud83d') at position 3" in str(not_utf8("text", "ok \\ud83d\\ude00"))
    True
    """
    position = len(_SURROGATE.split(text, maxsplit=1)[0])
    return InvalidArgumentError(
        f"{name} holds a lone surrogate ({text[position : position + 1]!r}) at position "
        f"{position}: fastppl's native code reads UTF-8 text only{hint}"
    )


def check_utf8(name: str, value: str) -> str:
    """``value``, a short str option that the core reads (a prefix of skipped lines), checked
    before it gets there: :func:`not_utf8`'s error naming ``name`` if it holds a lone surrogate,
    with the :class:`UnicodeEncodeError` of encoding it as its cause. (A text, which may be
    long, is never checked this way, but searched only after the core refused it.)

    >>> check_utf8("skip_line_prefixes[0]", "#")
    '#'
    >>> check_utf8("skip_line_prefixes[1]", "%\\udcff")
    Traceback (most recent call last):
    ...
    fastppl.errors.InvalidArgumentError: skip_line_prefixes[1] holds a lone surrogate ...
    """
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as err:
        raise not_utf8(name, value) from err
    return value


def same_file(a: str | None, b: str) -> bool:
    """Whether paths `a` and `b` name one existing file (same device and inode); False when
    `a` is None or ``"-"`` (the command line's standard input or output), or either does not
    exist (yet).

    >>> same_file(__file__, __file__), same_file(None, __file__), same_file(__file__, "/no")
    (True, False, False)
    """
    try:
        return a is not None and a != "-" and os.path.samefile(a, b)
    except OSError:
        return False


#: What ``oov=`` accepts (see `NGramModel.evaluate`).
OovPolicy = Literal["unk", "skip", "error"]
OOV_POLICIES: tuple[str, ...] = get_args(OovPolicy)


def check_oov(oov: object) -> str:
    """``oov``, checked to be one of :data:`OOV_POLICIES` before the core or a Ray actor reads
    it (a non-str got PyO3's bare :class:`TypeError`; a Ray job would fail only in its actors):
    :class:`InvalidTypeError` for a non-str, :class:`InvalidArgumentError` for another str (a
    lone surrogate in it named as :func:`check_utf8` names it).

    >>> check_oov("skip")
    'skip'
    >>> check_oov(None)
    Traceback (most recent call last):
    ...
    fastppl.errors.InvalidTypeError: oov must be 'unk', 'skip' or 'error', got None
    """
    message = f"oov must be 'unk', 'skip' or 'error', got {oov!r}"
    if not isinstance(oov, str):
        raise InvalidTypeError(message)
    if oov not in OOV_POLICIES:
        check_utf8("oov", oov)
        raise InvalidArgumentError(message)
    return oov


class Tracked(Generic[T]):
    """A one-shot iterable of ``items`` that remembers the last item it gave and its index:
    what an error about that item needs once the core has consumed it (a generator cannot be
    searched again). Handed to the core in place of an iterator only: a list costs nothing to
    search again, and is handed over as it is.

    >>> sentences = Tracked(iter([["a"], ["b"]]))
    >>> next(iter(sentences)), sentences.index, sentences.item
    (['a'], 0, ['a'])
    """

    __slots__ = ("_items", "index", "item")

    def __init__(self, items: Iterable[T]) -> None:
        self._items = items
        #: the index of the last item given (-1 before the first)
        self.index = -1
        #: the last item given
        self.item: T | None = None

    def __iter__(self) -> Iterator[T]:
        for index, item in enumerate(self._items):
            self.index, self.item = index, item
            yield item


def _locate(value: object) -> tuple[str, str | None] | None:
    """Where in ``value`` (a str, or an iterable of them, nested to any depth) the first str
    holding a lone surrogate is: its indices (``"[3][7]"``, ``""`` for ``value`` itself) and that
    str; for a :class:`Tracked`, in its last item. None if no str holds one; ``(indices, None)``
    when only the item is known: the last item of a :class:`Tracked` that was a one-shot
    iterator itself, consumed by the core."""
    if isinstance(value, str):
        return ("", value) if has_surrogate(value) else None
    if isinstance(value, Tracked):
        found = _locate(value.item)
        if found is None:
            return (f"[{value.index}]", None) if isinstance(value.item, Iterator) else None
        return f"[{value.index}]{found[0]}", found[1]
    if isinstance(value, bytes | bytearray) or not isinstance(value, Iterable):
        return None
    for index, item in enumerate(value):
        found = _locate(item)
        if found is not None:
            return f"[{index}]{found[0]}", found[1]
    return None


@overload
def surrogate_error(
    named: Mapping[str, object], err: UnicodeEncodeError
) -> InvalidArgumentError: ...


@overload
def surrogate_error(
    named: Mapping[str, object], err: BaseException
) -> InvalidArgumentError | None: ...


def surrogate_error(named: Mapping[str, object], err: BaseException) -> InvalidArgumentError | None:
    """The error to raise for ``err``, the :class:`UnicodeEncodeError` of the core refusing a
    str holding a lone surrogate (or a fastppl error caused by one, for strings made from these
    arguments), naming where the first such str is among ``named``: the arguments the core was
    given, by name, in the order it reads them (a str; a sequence of texts or tokens; sentences
    of tokens; a :class:`Tracked`). The message is :func:`not_utf8`'s, for ``sentences[3][7]``.

    The arguments are searched only now, after the core refused them: the calls that succeed
    pay nothing. None when ``err`` is not about a lone surrogate, or is a fastppl error about a
    str that is none of these; for the core's own :class:`UnicodeEncodeError`, always an error,
    naming the str the core refused when it can no longer be found (consumed by the core, from
    an iterator).

    >>> err = UnicodeEncodeError("utf-8", "b\\ud800", 1, 2, "surrogates not allowed")
    >>> print(surrogate_error({"word": "a", "context": ["<s>", "b\\ud800"]}, err))
    context[1] holds a lone surrogate ('\\ud800') at position 1: fastppl's native ...
    """
    cause = err if isinstance(err, UnicodeEncodeError) else err.__cause__
    if not isinstance(cause, UnicodeEncodeError):
        return None
    for name, value in named.items():
        found = _locate(value)
        if found is not None:
            where, text = found
            if text is None:  # the core consumed it: name the str it refused, in its item
                return _refused(f"{name}{where}", cause)
            return not_utf8(f"{name}{where}", text)
    return _refused(" or ".join(named), cause) if cause is err else None


def _refused(name: str, err: UnicodeEncodeError) -> InvalidArgumentError:
    """:func:`not_utf8`'s error for the str that the core refused (``err.object``), somewhere in
    the argument ``name`` where it can no longer be found."""
    return not_utf8(f"the str {reprlib.repr(err.object)} in {name}", err.object)


@contextlib.contextmanager
def utf8_strings(named: Mapping[str, object]) -> Iterator[None]:
    """Runs its body, which hands the arguments ``named`` to the core, turning the
    :class:`UnicodeEncodeError` of a str holding a lone surrogate into
    :func:`surrogate_error`'s error naming the first such str (``texts[3]``, ``tokens[2]``;
    ``named`` is searched only then). Such an error raised within, for strings made from
    ``named`` (the lines of a text, the words of a sentence), is raised again naming them.
    For one call into the core or a few: a loop that calls the core many times, or a method
    called once a word or a sentence, catches the error itself and calls
    :func:`surrogate_error` (entering a context manager costs a microsecond or two).
    """
    try:
        yield
    except (UnicodeEncodeError, InvalidArgumentError) as err:
        error = surrogate_error(named, err)
        if error is None:
            raise
        raise error from (err if isinstance(err, UnicodeEncodeError) else err.__cause__)
