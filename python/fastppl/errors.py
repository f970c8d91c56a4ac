"""Exceptions raised by fastppl (minimal version; the full module replaces it)."""


class FastpplError(Exception):
    """Base class of all fastppl errors."""


class InvalidArgumentError(FastpplError, ValueError):
    """An argument has the wrong shape, dtype, range or value."""
