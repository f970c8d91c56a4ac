"""Placeholder text pipeline (to be replaced by the full module)."""

from __future__ import annotations

import os
from collections.abc import Sequence


def read_text(
    path: str | os.PathLike[str],
    encoding: str = "utf-8",
    errors: str = "strict",
    skip_line_prefixes: Sequence[str] = (),
    lowercase: bool = False,
) -> str:
    with open(path, encoding=encoding, errors=errors) as f:
        text = f.read()
    if skip_line_prefixes:
        p = tuple(skip_line_prefixes)
        text = "".join(x for x in text.splitlines(keepends=True) if not x.startswith(p))
    return text.lower() if lowercase else text


def split_sentences_nltk(text: str, sentences: str, language: str) -> list[list[str]]:
    import nltk

    toks = nltk.word_tokenize(text, language=language)
    out, cur = [], []
    for t in toks:
        cur.append(t)
        if t in ".!?":
            out.append(cur)
            cur = []
    out.append(cur)
    return out


def split_sentences_punkt_whitespace(text: str, language: str) -> list[list[str]]:
    import nltk

    return [s.split() for s in nltk.sent_tokenize(text, language=language)]
