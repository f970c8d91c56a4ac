"""An ARPA reader independent of fastppl's, and the lmplz models of the shared folder."""

from __future__ import annotations

import gzip
import lzma
import re
from pathlib import Path

#: The lmplz models in ``<shared>/arpa``: (name, order), trained on ``<name>.train.txt``.
LMPLZ_MODELS = [("machado-small", 5), ("machado", 3)]


def read_arpa(path):
    """{order: {ngram tuple: (log10 prob, log10 backoff or None)}} and the header counts, from
    a plain, .gz or .xz file (read here, independently of fastppl's reader)."""
    header, grams, order = {}, {}, 0
    opener = {".gz": gzip.open, ".xz": lzma.open}.get(Path(path).suffix, open)
    with opener(path, "rt", encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line == "\\data\\" or line == "\\end\\":
                continue
            m = re.fullmatch(r"ngram (\d+)=(\d+)", line)
            if m:
                header[int(m[1])] = int(m[2])
                continue
            m = re.fullmatch(r"\\(\d+)-grams:", line)
            if m:
                order = int(m[1])
                grams[order] = {}
                continue
            fields = line.split("\t")
            backoff = float(fields[2]) if len(fields) > 2 else None
            grams[order][tuple(fields[1].split(" "))] = (float(fields[0]), backoff)
    return header, grams
