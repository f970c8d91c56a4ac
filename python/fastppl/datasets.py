"""Corpora bundled with fastppl."""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def machado() -> Path:
    """Path to the bundled Machado de Assis corpus (ten novels, 1872-1908, public domain).

    An xz-compressed UTF-8 text (3.16 MB uncompressed); lines starting with ``%`` (header) or
    ``#`` (chapter titles) are not prose: pass ``skip_line_prefixes=("#", "%")``.

    >>> machado().name
    'machado.txt.xz'
    """
    return Path(str(resources.files("fastppl") / "data" / "machado.txt.xz"))
