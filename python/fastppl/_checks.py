"""Argument checks shared by the public API (clear exceptions before anything reaches Rust)."""

from __future__ import annotations

import contextlib
import math
import numbers
import operator
import os
import re
import reprlib
from collections.abc import Iterable, Iterator, Sequence
from typing import Literal, TypeVar

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
            raise InvalidTypeError(f"{what} must hold str tokens, got {type(token).__name__}")
        if not allow_reserved and token in RESERVED:
            raise InvalidArgumentError(
                f"{what} holds the reserved token {token!r} at position {position}: sentence "
                "markers are added by fastppl (bos_eos=True), do not put them in the text"
            )
    return tokens


#: A UTF-16 surrogate: a Python str may hold one alone (``"\\ud800"``), UTF-8 text, all the core
#: reads, may not.
_SURROGATE = re.compile("[\ud800-\udfff]")


def not_utf8(name: str, text: str, hint: str = "") -> InvalidArgumentError:
    """The error for ``text`` (the argument ``name``), which the core refused with
    :class:`UnicodeEncodeError` for a lone surrogate: it names the position of the first one,
    and ends with ``hint``. Called only after the core refused it, never to check a text.

    >>> "('\\\\ud83d') at position 3" in str(not_utf8("text", "ok \\ud83d\\ude00"))
    True
    """
    position = len(_SURROGATE.split(text, maxsplit=1)[0])
    return InvalidArgumentError(
        f"{name} holds a lone surrogate ({text[position : position + 1]!r}) at position "
        f"{position}: fastppl's native code reads UTF-8 text only{hint}"
    )


@contextlib.contextmanager
def utf8_texts(name: str, texts: Sequence[str]) -> Iterator[None]:
    """Runs its body, which hands ``texts`` (the argument ``name``) to the core, turning the
    :class:`UnicodeEncodeError` of a text holding a lone surrogate into :func:`not_utf8`'s error
    for the first such text, ``name[i]`` (``texts`` are searched only then). Such an error
    raised within, for texts made from ``texts``, is raised again naming them.
    """
    try:
        yield
    except (UnicodeEncodeError, InvalidArgumentError) as err:
        cause = err if isinstance(err, UnicodeEncodeError) else err.__cause__
        if not isinstance(cause, UnicodeEncodeError):
            raise
        for index, text in enumerate(texts):
            if _SURROGATE.search(text):
                raise not_utf8(f"{name}[{index}]", text) from cause
        raise
