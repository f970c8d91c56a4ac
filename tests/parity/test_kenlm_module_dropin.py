"""`fastppl.kenlm.Model` against the kenlm module on a KenLM-made ARPA model (lmplz's pruned
4-gram in tests/data, so that these run on a fresh clone; the State API and n-gram length tests
compare the shared, larger models)."""

from __future__ import annotations

import math
import pickle
import sys
from pathlib import Path

import pytest

import fastppl.kenlm
from fastppl.errors import InvalidArgumentError, InvalidTypeError, ModelFormatError

kenlm = pytest.importorskip("kenlm")


def _sentences(text_path: Path, limit: int = 200) -> list[str]:
    lines = text_path.read_text(encoding="utf-8").splitlines()
    return [*[line for line in lines if line.split()][:limit], "xyzzy palavra_nenhuma ."]


@pytest.fixture(scope="module")
def models(lmplz_o4_arpa_path: Path):
    path = str(lmplz_o4_arpa_path)
    return fastppl.kenlm.Model(path), kenlm.Model(path)


def test_attributes_and_membership(models) -> None:
    ours, theirs = models
    assert ours.order == theirs.order == 4
    assert ours.path == theirs.path
    assert repr(ours) == repr(theirs)  # the file's name, without its folder
    for word in ["o", "dia", "xyzzy", "<s>", "</s>", "<unk>", ""]:
        assert (word in ours) == (word in theirs), word
    assert fastppl.kenlm.LanguageModel is fastppl.kenlm.Model


@pytest.mark.parametrize(
    ("bos", "eos"), [(True, True), (False, True), (True, False), (False, False)]
)
def test_scores_match(models, machado_test_head_path: Path, bos: bool, eos: bool) -> None:
    ours, theirs = models
    for sentence in _sentences(machado_test_head_path):
        expected = list(theirs.full_scores(sentence, bos=bos, eos=eos))
        got = list(ours.full_scores(sentence, bos=bos, eos=eos))
        assert [g[1:] for g in got] == [e[1:] for e in expected], sentence
        assert [g[0] for g in got] == pytest.approx([e[0] for e in expected], abs=1e-6)
        assert {tuple(map(type, g)) for g in got} <= {(float, int, bool)}
        # KenLM sums the sentence in float32
        assert ours.score(sentence, bos=bos, eos=eos) == pytest.approx(
            theirs.score(sentence, bos=bos, eos=eos), abs=1e-4
        )
        # score is split and summed in one Rust call of its own: full_scores' terms, summed
        assert ours.score(sentence, bos=bos, eos=eos) == pytest.approx(
            math.fsum(g[0] for g in got), abs=1e-9
        )
    for sentence in _sentences(machado_test_head_path, limit=20):
        assert ours.perplexity(sentence) == pytest.approx(theirs.perplexity(sentence), rel=1e-4)


@pytest.mark.parametrize(
    "separator", ["\u00a0", "\u3000", "\x1c", "\x1f", "\x85", "\u2028", "\t", "\v", "\r\n"]
)
def test_words_are_split_at_ascii_whitespace_only(models, separator: str) -> None:
    """kenlm splits a sentence's UTF-8 bytes at ASCII whitespace: Unicode spaces are inside a
    word (str.split() would cut there); a bytes sentence, and a bytes word for `in` and
    BaseScore, are UTF-8."""
    ours, theirs = models
    sentence = f"o{separator}dia de  hoje"
    for s in (sentence, sentence.encode()):
        got, expected = list(ours.full_scores(s)), list(theirs.full_scores(s))
        assert [g[1:] for g in got] == [e[1:] for e in expected]
        assert [g[0] for g in got] == pytest.approx([e[0] for e in expected], abs=1e-6)
        assert ours.perplexity(s) == pytest.approx(theirs.perplexity(s), rel=1e-6)
        assert ours.score(s) == pytest.approx(theirs.score(s), abs=1e-5)
    assert (b"dia" in ours, b"\xff" in ours) == (True, False)
    state, out = fastppl.kenlm.State(), fastppl.kenlm.State()
    ours.BeginSentenceWrite(state)
    assert ours.BaseScore(state, b"o", out) == ours.BaseScore(state, "o", out)


def test_models_kenlm_has_no_equivalent_of_are_refused(tmp_path: Path) -> None:
    """A fastppl model without sentence markers (bos_eos=False) or of stupid backoff (scores,
    not probabilities) has no KenLM equivalent: refused when opened, not scored as if it had."""
    from fastppl import Corpus, NGramModel
    from fastppl.errors import InvalidArgumentError, NotNormalizedError

    corpus = Corpus.from_sentences([["a", "b"], ["a", "c"]])
    NGramModel.fit(corpus, 2, "laplace", bos_eos=False).save(tmp_path / "no_markers.fppl")
    NGramModel.fit(corpus, 2, "stupid_backoff").save(tmp_path / "scores.fppl")
    with pytest.raises(InvalidArgumentError, match="bos_eos=False"):
        fastppl.kenlm.Model(tmp_path / "no_markers.fppl")
    with pytest.raises(NotNormalizedError, match="stupid_backoff model gives scores"):
        fastppl.kenlm.Model(tmp_path / "scores.fppl")


def test_missing_file_is_an_oserror_as_in_kenlm(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        kenlm.Model(str(tmp_path / "none.arpa"))
    with pytest.raises(OSError):
        fastppl.kenlm.Model(tmp_path / "none.arpa")


def _unreadable_models(folder: Path, arpa: Path) -> dict[str, tuple[Path, str]]:
    """Files neither module can read as a model, each with what fastppl's error says."""
    text = arpa.read_bytes()
    files = {"empty": b"", "not_arpa": b"hello world\n", "truncated": text[: len(text) // 3]}
    found = {}
    for name, content in files.items():
        (folder / name).write_bytes(content)
        found[name] = (folder / name, f"{folder / name}, line ")
    (folder / "folder").mkdir()
    found["folder"] = (folder / "folder", f"cannot read model file '{folder / 'folder'}': Is a")
    return found


@pytest.mark.parametrize("kind", ["empty", "not_arpa", "truncated", "folder"])
def test_unreadable_file_is_an_oserror_as_in_kenlm(
    tmp_path: Path, lmplz_o4_arpa_path: Path, kind: str
) -> None:
    """kenlm raises OSError for any file it cannot read (code written for it catches that);
    fastppl raised ModelFormatError (a ValueError only), or a bare IsADirectoryError."""
    path, message = _unreadable_models(tmp_path, lmplz_o4_arpa_path)[kind]
    with pytest.raises(OSError, match="Cannot read model"):
        kenlm.Model(str(path))
    with pytest.raises(fastppl.kenlm.ModelReadError) as info:
        fastppl.kenlm.Model(path)
    assert isinstance(info.value, OSError) and isinstance(info.value, ModelFormatError)
    assert str(info.value).startswith(message)
    assert info.value.path == str(path)


@pytest.mark.parametrize(
    ("path", "error", "message"),
    [
        (None, InvalidTypeError, "path must be a str, bytes or os.PathLike, got NoneType"),
        (3, InvalidTypeError, "path must be a str, bytes or os.PathLike, got int"),
        ("m\0.arpa", InvalidArgumentError, r"model path 'm\\x00.arpa' holds a NUL character"),
    ],
)
def test_bad_paths_raise_clear_errors(path: object, error: type, message: str) -> None:
    """Not a path: a bare TypeError (expected str, bytes or os.PathLike object) or ValueError
    (embedded null byte) from os, naming no argument; kenlm raises TypeError for the first."""
    with pytest.raises(error, match=f"^{message}$"):
        fastppl.kenlm.Model(path)


def test_code_written_for_kenlm_runs_unchanged(
    lmplz_o4_arpa_path: Path, machado_test_head_path: Path, monkeypatch
) -> None:
    def document_perplexities(path: str, documents: list[list[str]]) -> list[float]:
        import kenlm as module  # whichever module sys.modules holds

        model = module.Model(path)
        out = []
        for lines in documents:
            log_score = sum(model.score(line) for line in lines)
            length = sum(len(line.split()) + 1 for line in lines)
            out.append(10.0 ** (-log_score / length))
        return out

    sentences = _sentences(machado_test_head_path, limit=60)
    documents = [sentences[i : i + 6] for i in range(0, len(sentences), 6)]
    path = str(lmplz_o4_arpa_path)
    expected = document_perplexities(path, documents)
    monkeypatch.setitem(sys.modules, "kenlm", fastppl.kenlm)
    got = document_perplexities(path, documents)
    assert got == pytest.approx(expected, rel=1e-5)


def test_models_pickle_as_their_path_as_in_kenlm(models) -> None:
    """kenlm.Model pickles as its path (``__reduce__``), so that code sending a model to
    multiprocessing workers runs; fastppl's raised TypeError (its Rust model cannot pickle)."""
    ours, theirs = models
    copy = pickle.loads(pickle.dumps(ours))
    assert type(copy) is fastppl.kenlm.Model and copy is not ours
    assert copy.path == ours.path == pickle.loads(pickle.dumps(theirs)).path
    assert copy.order == 4
    assert list(copy.full_scores("o dia xyzzy")) == list(ours.full_scores("o dia xyzzy"))


@pytest.mark.parametrize("text", ["o\0dia", "o dia\0", b"o\0dia", "\0"])
def test_nul_in_a_sentence_or_word_is_refused(models, text: str | bytes) -> None:
    """kenlm reads a sentence or word as a C string, cut at NUL, silently and not even alike
    in score and full_scores; fastppl scored "o\\0dia" as one unknown word. Refused now."""
    ours, theirs = models
    if text == "o\0dia":  # what kenlm does: garbage, not one answer
        assert theirs.score(text) == pytest.approx(theirs.score("o"), abs=1e-6)
        assert next(iter(theirs.full_scores("\0")))[2] is True
        assert theirs.score("\0") == pytest.approx(theirs.score(""), abs=1e-6)
    position = (text.decode() if isinstance(text, bytes) else text).index("\0")
    for call in (ours.score, ours.perplexity, lambda s: list(ours.full_scores(s, bos=False))):
        with pytest.raises(
            InvalidArgumentError,
            match=f"^sentence holds a NUL character at position {position}: the kenlm module reads",
        ):
            call(text)
    state, out = fastppl.kenlm.State(), fastppl.kenlm.State()
    ours.BeginSentenceWrite(state)
    with pytest.raises(
        InvalidArgumentError, match=f"^word holds a NUL character at position {position}"
    ):
        ours.BaseScore(state, text, out)
    assert text not in ours


#: Sentences holding the markers: the kenlm module's own docstring of score() advises the first
#: two ("<s> this is a sentence" with bos=False; "a fragment </s>" with eos=False).
MARKED = ["<s> o dia de hoje", "o dia </s>", "o <s> dia", "</s>", "<s>", "<s> <s> </s> xyzzy"]


@pytest.mark.parametrize("sentence", MARKED)
@pytest.mark.parametrize(
    ("bos", "eos"), [(True, True), (False, True), (True, False), (False, False)]
)
def test_sentence_markers_in_a_sentence_are_words_as_in_kenlm(
    models, sentence: str, bos: bool, eos: bool
) -> None:
    """kenlm scores <s> and </s> written in a sentence as words (its score() docstring shows
    it); fastppl raised InvalidArgumentError ('tokens holds the reserved token')."""
    ours, theirs = models
    got = list(ours.full_scores(sentence, bos=bos, eos=eos))
    expected = list(theirs.full_scores(sentence, bos=bos, eos=eos))
    assert [g[1:] for g in got] == [e[1:] for e in expected]
    assert [g[0] for g in got] == pytest.approx([e[0] for e in expected], abs=1e-6)
    assert ours.score(sentence, bos=bos, eos=eos) == pytest.approx(
        theirs.score(sentence, bos=bos, eos=eos), abs=1e-5
    )
    assert ours.perplexity(sentence) == pytest.approx(theirs.perplexity(sentence), rel=1e-6)
    assert ours.score("<s> o dia", bos=False) == pytest.approx(ours.score("o dia"), abs=1e-6)
    with pytest.raises(InvalidArgumentError, match=r"^sentence holds a lone surrogate"):
        ours.score(sentence + " \ud800")


def test_config_code_written_for_kenlm_runs_unchanged(
    lmplz_o4_arpa_path: Path, monkeypatch
) -> None:
    """kenlm.Config, LoadMethod and ARPALoadComplain: fastppl.kenlm had none (AttributeError)."""
    for name in ("LAZY", "POPULATE_OR_LAZY", "POPULATE_OR_READ", "READ", "PARALLEL_READ"):
        assert getattr(fastppl.kenlm.LoadMethod, name) == getattr(kenlm.LoadMethod, name)
    for name in ("ALL", "EXPENSIVE", "NONE"):
        assert getattr(fastppl.kenlm.ARPALoadComplain, name) == getattr(
            kenlm.ARPALoadComplain, name
        )
    ours, theirs = fastppl.kenlm.Config(), kenlm.Config()
    for name in ("load_method", "show_progress", "arpa_complain"):
        assert getattr(ours, name) == getattr(theirs, name)

    def scores(path: str) -> float:
        import kenlm as module  # whichever module sys.modules holds

        config = module.Config()
        config.load_method = module.LoadMethod.LAZY
        config.show_progress = False
        config.arpa_complain = module.ARPALoadComplain.NONE
        return module.Model(path, config).score("o dia")

    expected = scores(str(lmplz_o4_arpa_path))
    monkeypatch.setitem(sys.modules, "kenlm", fastppl.kenlm)
    assert scores(str(lmplz_o4_arpa_path)) == pytest.approx(expected, abs=1e-5)
