"""Tests of fastppl.errors: the hierarchy the Rust core relies on, messages, pickling."""

from __future__ import annotations

import pickle
import re
from pathlib import Path

import pytest

from fastppl import errors
from fastppl.errors import (
    CorpusDecodeError,
    CorpusFileNotFoundError,
    CountOverflowError,
    DistributedTaskError,
    EmptyCorpusError,
    FastpplError,
    FastpplWarning,
    InvalidArgumentError,
    InvalidTypeError,
    ModelFileNotFoundError,
    ModelFormatError,
    NotNormalizedError,
    OutOfVocabularyError,
    PunktDataError,
    PunktDataNotFoundError,
    ZeroProbabilityWarning,
)

HIERARCHY = [
    (FastpplError, (Exception,)),
    (InvalidArgumentError, (FastpplError, ValueError)),
    (InvalidTypeError, (FastpplError, TypeError)),
    (ModelFileNotFoundError, (FastpplError, FileNotFoundError)),
    (EmptyCorpusError, (FastpplError, ValueError)),
    (CorpusDecodeError, (FastpplError, ValueError)),
    (CorpusFileNotFoundError, (FastpplError, FileNotFoundError)),
    (OutOfVocabularyError, (FastpplError, KeyError)),
    (ModelFormatError, (FastpplError, ValueError)),
    (NotNormalizedError, (FastpplError, ValueError)),
    (CountOverflowError, (FastpplError, OverflowError)),
    (DistributedTaskError, (FastpplError, RuntimeError)),
    (FastpplWarning, (UserWarning,)),
    (ZeroProbabilityWarning, (FastpplWarning,)),
    (PunktDataError, (FastpplError, ValueError)),
    (PunktDataNotFoundError, (FastpplError, LookupError)),
]


@pytest.mark.parametrize(("cls", "bases"), HIERARCHY)
def test_hierarchy(cls, bases):
    assert cls.__bases__ == bases
    assert cls.__module__ == "fastppl.errors"
    assert cls.__doc__ and len(cls.__doc__) > 40


def test_all_is_complete():
    assert sorted(errors.__all__) == sorted(cls.__name__ for cls, _ in HIERARCHY)


def test_out_of_vocabulary_error():
    err = OutOfVocabularyError(None, "mulher", 3, 7)
    assert (err.word, err.sentence_index, err.position) == ("mulher", 3, 7)
    assert str(err) == "word 'mulher' (sentence 3, position 7) is not in the model's vocabulary"
    assert str(OutOfVocabularyError(None, word="x")) == (
        "word 'x' is not in the model's vocabulary"
    )
    assert str(OutOfVocabularyError("custom message")) == "custom message"  # not quoted
    with pytest.raises(KeyError):
        raise err


def test_invalid_argument_error_located():
    """The core locates a fault in an item (a sentence, a logits row) by attributes, None by
    default."""
    err = InvalidArgumentError("sentence 3 holds x", 3, "holds x")
    assert (str(err), err.index, err.reason) == ("sentence 3 holds x", 3, "holds x")
    plain = InvalidArgumentError("order must be >= 1, got 0")
    assert (plain.index, plain.reason) == (None, None)


def test_punkt_errors_pickle():
    err = PunktDataError("bad line", "/p/ortho_context.tab", 3)
    assert (err.path, err.line, str(err)) == ("/p/ortho_context.tab", 3, "bad line")
    missing = PunktDataNotFoundError(None, "german", ["/data"])
    assert "'german'" in str(missing) and "nltk.downloader punkt_tab" in str(missing)
    for e in (err, missing):
        again = pickle.loads(pickle.dumps(e))
        assert type(again) is type(e) and str(again) == str(e)


def test_corpus_decode_error():
    err = CorpusDecodeError(None, "/a/b.txt", 12, 2)
    assert (err.path, err.byte_offset, err.line) == ("/a/b.txt", 12, 2)
    assert str(err) == "'/a/b.txt' is not valid text: undecodable byte at byte offset 12 (line 2)"
    assert str(CorpusDecodeError("just a message")) == "just a message"


def test_corpus_file_not_found_error():
    err = CorpusFileNotFoundError(None, "/no/such.txt")
    assert str(err) == "corpus file not found: '/no/such.txt'"
    assert (err.path, err.filename, err.errno) == ("/no/such.txt", "/no/such.txt", 2)
    assert isinstance(err, OSError)


def test_model_format_error():
    err = ModelFormatError(None, "m.arpa", 5)
    assert (err.path, err.line) == ("m.arpa", 5)
    assert "m.arpa" in str(err) and "line 5" in str(err)


@pytest.mark.parametrize(
    "err",
    [
        InvalidArgumentError("order must be >= 1, got 0"),
        InvalidArgumentError("sentence 3 holds x", 3, "holds x"),
        EmptyCorpusError("no token"),
        NotNormalizedError("stupid_backoff"),
        CorpusDecodeError(None, "p", 1, 1),
        CorpusFileNotFoundError(None, "p"),
        OutOfVocabularyError(None, "w", 0, 1),
        ModelFormatError("bad header", "m.arpa", 1),
    ],
)
def test_pickle_round_trip(err):
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is type(err)
    assert str(back) == str(err)
    assert back.__dict__ == err.__dict__


def test_message_only_construction_like_rust():
    """The Rust side may raise any class with a single message argument."""
    for cls, _ in HIERARCHY:
        if issubclass(cls, FastpplError):
            err = cls("boom")
            assert str(err) == "boom"


def test_every_class_the_rust_core_raises_is_a_fastppl_error():
    """rust/py/errors.rs raises classes of fastppl.errors by name: each exists and is a
    FastpplError (a misspelt name would silently become the fallback ValueError)."""
    root = next(p for p in Path(__file__).parents if (p / "rust").is_dir())
    source = (root / "rust" / "py" / "errors.rs").read_text()
    raised = set(re.findall(r'raise\(py, "(\w+)"', source))
    assert {"CountOverflowError", "ModelFormatError", "InvalidArgumentError"} <= raised
    for name in raised:
        assert issubclass(getattr(errors, name), FastpplError), name
