# ruff: noqa: RUF001  (full-width and typographic characters are what these tests are about)
"""`fastppl.documents`: CCNet's normalizer and document perplexity, against the step-by-step
reference (`fastppl.reference.ccnet_*`) and CCNet's own documented examples."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import fastppl.kenlm
from fastppl import Corpus, NGramModel, datasets, documents, reference
from fastppl.errors import InvalidArgumentError, InvalidTypeError
from fastppl.text import read_text

#: Characters that exercise every step: CCNet's punctuation, digits of several scripts,
#: accented and combining characters, control characters, Unicode spaces, newlines.
SPECIAL = (
    "".join(reference.CCNET_PUNCT)
    + "0123456789０٣७ÉéçãÅ\u0301\u0327ẞΣς"
    + "\x00\x07\t\r\x0b\x0c\x1c\x1f\x7f\x85\x9f\xa0\u2028\u3000 \n"
    + "ab한국"
)


def test_ccnet_documented_examples() -> None:
    # cc_net/tests/test_normalizer.py
    weird = "，。、„”“«»１」「《》´∶：？！（）；–—．～’…━〈〉【】％"
    replaced = ',.,""""""""""\'::?!();- - . ~\'...-<>[]%'
    plain = {"accent": False, "case": False, "numbers": False}
    assert documents.normalize(weird, **plain, punct=1) == replaced
    assert documents.normalize(weird, **plain, punct=2) == ""
    digits = "０２３４５６７８９ | 0123456789"
    assert documents.normalize(digits, numbers=True) == "000000000 | 0000000000"
    assert documents.normalize(digits, numbers=False) == digits
    dedup = "０２３´∶：\x10 | ;012 hèllo"
    assert documents.normalize(dedup, accent=False, punct=2) == "000 | ;000 hèllo"


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet=st.sampled_from(SPECIAL) | st.characters(), max_size=40),
    accent=st.booleans(),
    case=st.booleans(),
    numbers=st.booleans(),
    punct=st.sampled_from([0, 1, 2]),
)
# a lone surrogate (Python strings may hold one) beside characters beyond U+FFFF
@example(text="\ud800 \U0001f600 É", accent=True, case=True, numbers=False, punct=1)
@example(text="\ud800", accent=False, case=False, numbers=False, punct=0)
def test_normalize_matches_the_step_by_step_reference(text, accent, case, numbers, punct) -> None:
    options = {"accent": accent, "case": case, "numbers": numbers, "punct": punct}
    assert documents.normalize(text, **options) == reference.ccnet_normalize(text, **options)
    # the whole-document path normalizes each line as normalize does, newlines kept
    expected = "\n".join(reference.ccnet_normalize(line, **options) for line in text.split("\n"))
    assert documents._normalized_lines(text, documents._Normalization(options)) == expected


def test_bad_normalize_arguments() -> None:
    with pytest.raises(InvalidArgumentError, match="punct must be 0, 1 or 2, got 3"):
        documents.normalize("a", punct=3)
    for not_an_int in (1.0, True, "1"):  # 1.0 == 1 and True == 1 passed the range test
        with pytest.raises(InvalidTypeError, match="punct must be an int"):
            documents.normalize("a", punct=not_an_int)
    with pytest.raises(InvalidTypeError, match="text must be a str, got bytes"):
        documents.normalize(b"a")
    with pytest.raises(InvalidArgumentError, match="unknown normalize option"):
        documents.perplexity(_tiny_model(), ["a"], normalize={"accents": False})


@pytest.mark.parametrize("option", ["accent", "case", "numbers"])
@pytest.mark.parametrize("value", ["no", 0, None])
def test_normalize_flags_are_not_coerced(option: str, value: object) -> None:
    """The string "no" is not False (bool() took it, and any other value, for a flag)."""
    match = f"{option} must be True or False, got {value!r}"
    with pytest.raises(InvalidTypeError, match=match):
        documents.normalize("Ação 12", **{option: value})
    with pytest.raises(InvalidTypeError, match=match):
        documents.perplexity(_tiny_model(), ["a"], normalize={option: value})


def _tiny_model() -> NGramModel:
    return NGramModel.fit(Corpus.from_sentences([["a", "b"]]), order=2, smoothing="kneser_ney")


@pytest.fixture(scope="module")
def machado_paragraphs() -> list[str]:
    """Raw Machado paragraphs (mixed case, accents, digits, dashes, quotes)."""
    text = read_text(datasets.machado(), skip_line_prefixes=datasets.MACHADO_SKIP_LINE_PREFIXES)
    return [p for p in text.split("\n") if p.strip()][:3000]


@pytest.fixture(scope="module")
def machado_model(machado_paragraphs, tmp_path_factory) -> fastppl.kenlm.Model:
    """A 3-gram model of normalized Machado text, through the kenlm-module API."""
    lines = [reference.ccnet_normalize(p) for p in machado_paragraphs[:2000]]
    path = tmp_path_factory.mktemp("documents") / "machado.arpa"
    corpus = Corpus.from_texts(["\n".join(lines)], tokenizer="kenlm")
    NGramModel.fit(corpus, order=3, smoothing="modified_kneser_ney").to_arpa(path)
    return fastppl.kenlm.Model(path)


def _documents(paragraphs: list[str]) -> list[str]:
    """Held-out paragraphs grouped 1 to 7 to a document, with blank lines and odd characters."""
    docs, i, size = [], 0, 1
    while i < len(paragraphs):
        docs.append("\n".join(paragraphs[i : i + size]))
        i, size = i + size, size % 7 + 1
    return [*docs, "", "\n", "Linha 1\n\n«Linha» 2０\n", "\u3000só\x07 espaço\u3000\r\n"]


def test_perplexity_matches_the_ccnet_loop(machado_model, machado_paragraphs) -> None:
    docs = _documents(machado_paragraphs[2000:])
    expected = reference.ccnet_document_perplexities(machado_model, docs)
    got = documents.perplexity(machado_model, docs)
    assert got.dtype == np.float64 and got.shape == (len(docs),)
    np.testing.assert_allclose(got, expected, rtol=1e-9)
    unnormalized = reference.ccnet_document_perplexities(machado_model, docs, normalize=False)
    got = documents.perplexity(machado_model._model, docs, normalize=False)
    np.testing.assert_allclose(got, unnormalized, rtol=1e-9)
    assert not np.allclose(got, expected)


def test_documents_from_arrays_and_datasets_batches(machado_model, machado_paragraphs) -> None:
    pa = pytest.importorskip("pyarrow")
    docs = _documents(machado_paragraphs[2000:2100])
    expected = documents.perplexity(machado_model, docs)
    for given_as in (
        np.array(docs),
        np.array(docs, dtype=object),
        pa.array(docs),
        pa.chunked_array([docs[:10], docs[10:]]),
        iter(docs),
    ):
        np.testing.assert_array_equal(documents.perplexity(machado_model, given_as), expected)
    add = documents.map_function(machado_model, text_field="content", output_field="ppl")
    out = add({"content": docs, "id": list(range(len(docs)))})
    assert list(out) == ["ppl"] and out["ppl"] == expected.tolist()
    with pytest.raises(InvalidArgumentError, match="no column 'content'"):
        add({"text": docs})


@pytest.mark.parametrize("normalize", [True, False])
def test_a_lone_surrogate_names_the_document_and_its_position(normalize) -> None:
    """A Python str may hold a lone surrogate, UTF-8 (all the core reads) may not."""
    docs = ["o dia", "o sol", "  \r\nO \ud800 dia", "o \udfff"]
    message = re.escape(
        "documents[2] holds a lone surrogate ('\\ud800') at position 6: fastppl's native code "
        "reads UTF-8 text only"
    )
    with pytest.raises(InvalidArgumentError, match=message):
        documents.perplexity(_tiny_model(), docs, normalize=normalize)


@pytest.mark.parametrize("batch_chars", [documents.BATCH_CHARS, 3])
@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        ("O \ud800 dia", " holds a lone surrogate ('\\ud800') at position 2"),
        ("o dia\nO </s>", ', line 2, holds the reserved token "</s>"'),
    ],
)
def test_an_error_about_a_document_carries_its_index_and_the_rest(
    monkeypatch, batch_chars: int, bad: str, reason: str
) -> None:
    """For a caller to name the document its own way (the CLI names its line of the input):
    the index among all documents, whatever the batch, and the message after the name."""
    monkeypatch.setattr(documents, "BATCH_CHARS", batch_chars)
    with pytest.raises(InvalidArgumentError) as raised:
        documents.perplexity(_tiny_model(), ["o dia", "o sol", bad], normalize=False)
    err = raised.value
    assert err.index == 2 and err.reason.startswith(reason), (err.index, err.reason)
    assert str(err) == f"documents[2]{err.reason}"


def test_bad_documents_raise_clear_errors(machado_model) -> None:
    with pytest.raises(InvalidTypeError, match="document 1 must be a str, got NoneType"):
        documents.perplexity(machado_model, ["a", None])
    with pytest.raises(
        InvalidTypeError, match="documents must be an iterable of texts, not one str"
    ):
        documents.perplexity(machado_model, "a document")
    with pytest.raises(InvalidTypeError, match="model must be"):
        documents.perplexity("model.arpa", ["a"])
    with pytest.raises(InvalidArgumentError, match="reserved token"):
        documents.perplexity(machado_model, ["a <s> b"])


@pytest.mark.parametrize("batch_chars", [documents.BATCH_CHARS, 3])
def test_a_sentence_marker_names_its_document_and_line(machado_model, monkeypatch, batch_chars):
    """The message said 'sentence 4', the index of the line among all lines of the batch."""
    monkeypatch.setattr(documents, "BATCH_CHARS", batch_chars)
    docs = ["o dia", "\n\n", "de sol\nO </s> DIA\nfim"]
    message = re.escape('documents[2], line 2, holds the reserved token "</s>": sentence markers')
    for normalize in (True, False):
        with pytest.raises(InvalidArgumentError, match=message):
            documents.perplexity(machado_model, docs, normalize=normalize)
    corpus = Corpus.from_sentences([["a", "b"]])
    no_markers = NGramModel.fit(corpus, order=2, smoothing="kneser_ney", bos_eos=False)
    with pytest.raises(InvalidArgumentError, match="bos_eos=False"):
        documents.perplexity(no_markers, ["a b"])


def test_the_core_locates_a_sentence_marker_by_its_sentence():
    from fastppl import _core

    corpus = _core.Corpus()
    corpus.add_kenlm_text("a\n\n")
    with pytest.raises(InvalidArgumentError) as raised:
        corpus.add_kenlm_text("b\nc <s> d\n")
    err = raised.value
    assert err.index == 3
    assert err.reason.startswith('holds the reserved token "<s>": sentence markers')
    assert str(err) == f"sentence 3 {err.reason}"


def test_a_sentence_marker_is_named_whatever_the_core_s_message(machado_model, monkeypatch):
    """documents.perplexity names the document and line from the index of the core's error,
    not from its text."""
    from_texts = Corpus.from_texts.__func__

    def reworded(cls: type[Corpus], *args: object) -> Corpus:
        try:
            return from_texts(cls, *args)
        except InvalidArgumentError as err:
            raise InvalidArgumentError("reworded", err.index, err.reason) from None

    monkeypatch.setattr(Corpus, "from_texts", classmethod(reworded))
    docs = ["o dia", "de sol\nO </s> DIA"]
    message = re.escape('documents[1], line 2, holds the reserved token "</s>": sentence markers')
    with pytest.raises(InvalidArgumentError, match=f"^{message}"):
        documents.perplexity(machado_model, docs, normalize=False)


@pytest.fixture(scope="module", params=[{}, {"add_dummy_prefix": False}], ids=["default", "bare"])
def sp_model(request, machado_paragraphs, tmp_path_factory) -> Path:
    """A 400-piece SentencePiece model trained on normalized Machado text: with SentencePiece's
    defaults (each word cut alone), or without the word-start mark (pieces depend on the line)."""
    spm = pytest.importorskip("sentencepiece")
    folder = tmp_path_factory.mktemp("sp-bare" if request.param else "sp-default")
    train = folder / "train.txt"
    train.write_text(
        "\n".join(documents.normalize(p) for p in machado_paragraphs[:1500]), encoding="utf-8"
    )
    spm.SentencePieceTrainer.train(
        input=str(train),
        model_prefix=str(folder / "sp"),
        vocab_size=400,
        minloglevel=2,
        **request.param,
    )
    return folder / "sp.model"


def test_sentencepiece_documents_match_the_ccnet_loop(
    sp_model: Path, machado_paragraphs, tmp_path: Path
) -> None:
    import sentencepiece

    sp = sentencepiece.SentencePieceProcessor(model_file=str(sp_model))
    # the default model is read word by word, the other line by line
    assert documents._pieces_stay_within_words(sp) == ("bare" not in sp_model.parent.name)
    pieces = [
        " ".join(sp.encode_as_pieces(documents.normalize(p))) for p in machado_paragraphs[:1500]
    ]
    arpa = tmp_path / "pieces.arpa"
    corpus = Corpus.from_texts(["\n".join(pieces)], tokenizer="kenlm")
    NGramModel.fit(corpus, order=4, smoothing="modified_kneser_ney").to_arpa(arpa)
    model = fastppl.kenlm.Model(arpa)
    docs = _documents(machado_paragraphs[2000:2600])
    expected = reference.ccnet_document_perplexities(model, docs, sp=sp)
    np.testing.assert_allclose(documents.perplexity(model, docs, sp_model=sp), expected, rtol=1e-9)
    by_path = documents.perplexity(model, docs, sp_model=sp_model, num_threads=1)
    np.testing.assert_allclose(by_path, expected, rtol=1e-9)
    whole = documents.perplexity(model, docs, sp_model=sp, whole_lines=True)
    np.testing.assert_allclose(whole, expected, rtol=1e-9)
    raw = reference.ccnet_document_perplexities(model, docs, sp=sp, normalize=False)
    got = documents.perplexity(model, docs, sp_model=sp, normalize=False)
    np.testing.assert_allclose(got, raw, rtol=1e-9)
    with pytest.raises(FileNotFoundError, match="SentencePiece model not found"):
        documents.perplexity(model, docs, sp_model=tmp_path / "none.model")
    # a FileNotFoundError ('SentencePiece model not found') before
    with pytest.raises(IsADirectoryError, match="SentencePiece model is a directory"):
        documents.perplexity(model, docs, sp_model=tmp_path)
    with pytest.raises(InvalidArgumentError, match="not a SentencePiece model"):
        documents.perplexity(model, docs, sp_model=arpa)


@pytest.mark.parametrize(
    ("option", "error", "message"),
    [
        ({"whole_lines": "yes"}, InvalidTypeError, "whole_lines must be True or False, got 'yes'"),
        ({"whole_lines": 1}, InvalidTypeError, "whole_lines must be True or False, got 1"),
        ({"num_threads": "x"}, InvalidTypeError, "num_threads must be an int, got str"),
        ({"num_threads": 2.0}, InvalidTypeError, "num_threads must be an int, got float"),
        (
            {"num_threads": 0},
            InvalidArgumentError,
            r"num_threads must be at least 1 \(or None\), got 0",
        ),
        ({"num_threads": -1}, InvalidArgumentError, r"at least 1 \(or None\), got -1"),
    ],
)
@pytest.mark.parametrize("with_sp", [False, True])
def test_bad_sentencepiece_options_are_refused(sp_model: Path, option, error, message, with_sp):
    """They were accepted silently, with or without a SentencePiece model."""
    sp = {"sp_model": sp_model} if with_sp else {}
    with pytest.raises(error, match=message):
        documents.perplexity(_tiny_model(), ["a b"], **sp, **option)


@pytest.mark.parametrize("whole_lines", [False, True])
def test_sentence_markers_in_the_text_are_cut_by_sentencepiece(
    sp_model: Path, machado_model, machado_paragraphs, whole_lines
) -> None:
    """SentencePiece cuts "<s>" and "</s>" into other pieces, as CCNet scores them: read word
    by word (the default), such a document raised 'sentence 1 holds the reserved token "<s>"'
    while whole_lines=True scored it."""
    import sentencepiece

    sp = sentencepiece.SentencePieceProcessor(model_file=str(sp_model))
    assert "<s>" not in sp.encode("a <s> b </s>", out_type=str)
    docs = _documents(machado_paragraphs[2000:2040])
    docs[1:3] = ["O <s> dia\nde</s> SOL\n<s>", "</s>", "x<s>y\n\no dia"]
    expected = reference.ccnet_document_perplexities(machado_model, docs, sp=sp)
    got = documents.perplexity(machado_model, docs, sp_model=sp, whole_lines=whole_lines)
    np.testing.assert_allclose(got, expected, rtol=1e-9)


@pytest.mark.parametrize("whole_lines", [False, True])
def test_a_lone_surrogate_with_sentencepiece_names_the_document(
    sp_model: Path, machado_model, whole_lines
) -> None:
    """Lines cut whole reach SentencePiece first, which refuses a lone surrogate (TypeError)."""
    with pytest.raises(InvalidArgumentError, match=r"documents\[1\] holds a lone surrogate"):
        documents.perplexity(
            machado_model, ["o dia", "o \ud800"], sp_model=sp_model, whole_lines=whole_lines
        )


def test_long_lines_are_cut_whole(sp_model: Path, machado_model, machado_paragraphs, monkeypatch):
    import sentencepiece

    sp = sentencepiece.SentencePieceProcessor(model_file=str(sp_model))
    docs = _documents(machado_paragraphs[2000:2300])
    expected = documents.perplexity(machado_model, docs, sp_model=sp, whole_lines=True)
    monkeypatch.setattr(documents, "_LONG_LINE", 200)
    cut = []
    monkeypatch.setattr(sp, "encode", lambda lines, **kw: cut.append(len(lines)) or
                        sentencepiece.SentencePieceProcessor.encode(sp, lines, **kw))  # fmt: skip
    got = documents.perplexity(machado_model, docs, sp_model=sp)
    np.testing.assert_allclose(got, expected, rtol=1e-9)
    long_lines = sum(len(documents.normalize(p)) > 200 for p in machado_paragraphs[2000:2300])
    assert documents._pieces_stay_within_words(sp) is False or cut[1] >= long_lines > 0


def test_batches_give_the_same_numbers(machado_model, machado_paragraphs, monkeypatch) -> None:
    docs = _documents(machado_paragraphs[2000:2300])
    whole = documents.perplexity(machado_model, docs)
    monkeypatch.setattr(documents, "BATCH_CHARS", 5000)
    assert len(list(documents._batches(docs))) > 10
    np.testing.assert_array_equal(documents.perplexity(machado_model, docs), whole)
    assert documents.perplexity(machado_model, []).shape == (0,)
