"""Datasets bundled with fastppl.

>>> path = machado()
>>> path.name
'machado.txt.xz'
>>> from fastppl.text import read_text
>>> text = read_text(path, skip_line_prefixes=MACHADO_SKIP_LINE_PREFIXES, lowercase=True)
>>> text.split()[:6]
['naquele', 'dia,', '—', 'já', 'lá', 'vão']
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from fastppl.errors import CorpusFileNotFoundError

__all__ = ["MACHADO_SKIP_LINE_PREFIXES", "machado"]

#: Lines of the Machado corpus that are not text: ``%`` header lines and ``#`` title lines.
MACHADO_SKIP_LINE_PREFIXES: tuple[str, ...] = ("#", "%")


def machado() -> Path:
    """Path of the bundled Machado de Assis corpus (``machado.txt.xz``).

    Ten novels by Machado de Assis (public domain, Portuguese, 3.16 MB of UTF-8 text, xz
    compressed; see ``fastppl/data/README.md``). Lines starting with ``#`` (titles) or ``%``
    (header) are not text: read it with
    ``read_text(machado(), skip_line_prefixes=MACHADO_SKIP_LINE_PREFIXES)``.

    Returns:
        The path of the compressed file inside the installed package.

    Raises:
        CorpusFileNotFoundError: The installation lacks the data file (a broken build).

    >>> machado().suffix
    '.xz'
    """
    resource = files("fastppl") / "data" / "machado.txt.xz"
    path = Path(str(resource))
    if not path.is_file():
        raise CorpusFileNotFoundError(
            f"bundled dataset missing: {str(path)!r} (is fastppl installed from a complete "
            "wheel or source tree?)",
            path,
        )
    return path
