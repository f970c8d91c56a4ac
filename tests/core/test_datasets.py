"""Tests of fastppl.datasets: the bundled Machado corpus."""

from __future__ import annotations

import hashlib
import lzma

from fastppl.datasets import MACHADO_SKIP_LINE_PREFIXES, machado
from fastppl.text import read_text

MACHADO_SHA256 = "719a97d34fd4e204e47362f9a93f872591c7185b9b87a296037a9e8fb33faaeb"


def test_machado_is_the_shared_corpus(machado_text_path):
    path = machado()
    assert path.is_file() and path.name == "machado.txt.xz"
    data = lzma.decompress(path.read_bytes())
    assert len(data) == 3_160_188
    assert hashlib.sha256(data).hexdigest() == MACHADO_SHA256
    assert data == machado_text_path.read_bytes()


def test_machado_reads_like_the_shared_file(machado_text_path):
    kwargs = {"skip_line_prefixes": MACHADO_SKIP_LINE_PREFIXES, "lowercase": True}
    assert read_text(machado(), **kwargs) == read_text(machado_text_path, **kwargs)
