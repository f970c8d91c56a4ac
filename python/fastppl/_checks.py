"""Argument checks shared by the public API (clear exceptions before anything reaches Rust)."""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence

from fastppl.errors import InvalidArgumentError, InvalidTypeError

RESERVED = ("<s>", "</s>")


def log_base_divisor(base: float | str | None) -> float:
    """ln(base): divides natural logs into logs of ``base``; None or ``"e"`` give 1.

    >>> round(log_base_divisor(10), 6)
    2.302585
    """
    if base is None or base == "e":
        return 1.0
    if (
        isinstance(base, bool)
        or not isinstance(base, (int, float))
        or not base > 1
        or not math.isfinite(base)
    ):
        raise InvalidArgumentError(
            f"base must be 'e' or a finite number > 1 (2, 10, ...), got {base!r}"
        )
    return math.log(base)


def check_bool(name: str, value: object) -> bool:
    """``value`` if it is a bool (numpy bools too), else :class:`InvalidTypeError`."""
    if isinstance(value, bool) or type(value).__name__ == "bool_":
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
