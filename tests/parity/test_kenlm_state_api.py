"""`fastppl.kenlm`'s incremental API (State, BaseScore, ...) against the kenlm module."""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import pytest

import fastppl.kenlm
from fastppl.errors import InvalidArgumentError, InvalidTypeError

kenlm = pytest.importorskip("kenlm")

MODELS = ["machado.o3.arpa.gz", "machado-small.o5.arpa.gz"]

#: The kenlm module's documented example of stateful queries (its python/example.py), unchanged.
KENLM_STATE_EXAMPLE = """
#Stateful query
state = kenlm.State()
state2 = kenlm.State()
#Use <s> as context.  If you don't want <s>, use model.NullContextWrite(state).
model.BeginSentenceWrite(state)
accum = 0.0
accum += model.BaseScore(state, "a", state2)
accum += model.BaseScore(state2, "sentence", state)
#score defaults to bos = True and eos = True.  Here we'll check without the end
#of sentence marker.
assert (abs(accum - model.score("a sentence", eos = False)) < 1e-3)
accum += model.BaseScore(state, "</s>", state2)
assert (abs(accum - model.score("a sentence")) < 1e-3)
"""


def _sentences(arpa_dir: Path, limit: int = 150) -> list[str]:
    lines = (arpa_dir / "machado.test.txt").read_text(encoding="utf-8").splitlines()
    return [*[line for line in lines if line.split()][:limit], "xyzzy palavra_nenhuma ."]


@pytest.fixture(scope="module", params=MODELS)
def models(request, arpa_dir: Path):
    path = str(arpa_dir / request.param)
    return fastppl.kenlm.Model(path), kenlm.Model(path)


def _chain(module, model, words: list[str], begin: bool) -> list[tuple]:
    """Scores ``words`` one at a time, swapping two states as kenlm users do; returns each
    word's (log_prob, ngram_length, oov) and the state after it."""
    state, out = module.State(), module.State()
    (model.BeginSentenceWrite if begin else model.NullContextWrite)(state)
    steps = []
    for word in words:
        r = model.BaseFullScore(state, word, out)
        steps.append(((r.log_prob, r.ngram_length, r.oov), copy.copy(out)))
        state, out = out, state
    return steps


@pytest.mark.parametrize("begin", [True, False])
def test_chained_scores_and_states_match_kenlm(models, arpa_dir: Path, begin: bool) -> None:
    ours, theirs = models
    our_states, their_states = [], []
    lengths = set()
    for sentence in _sentences(arpa_dir):
        words = [*sentence.split(), "</s>"]
        got = _chain(fastppl.kenlm, ours, words, begin)
        expected = _chain(kenlm, theirs, words, begin)
        assert [g[0][1:] for g in got] == [e[0][1:] for e in expected], sentence
        assert [g[0][0] for g in got] == pytest.approx([e[0][0] for e in expected], abs=1e-6)
        lengths.update(g[0][1] for g in got)
        our_states += [g[1] for g in got]
        their_states += [e[1] for e in expected]
        if begin:
            total = sum(g[0][0] for g in got)
            assert total == pytest.approx(theirs.score(sentence), abs=1e-4)
    assert lengths == set(range(1, ours.order + 1))
    # states are equal exactly when kenlm's are: compare every state with its 40 successors
    same_ours = same_theirs = 0
    for i in range(len(our_states)):
        for j in range(i + 1, min(i + 40, len(our_states))):
            expected = their_states[i] == their_states[j]
            assert (our_states[i] == our_states[j]) == expected, (i, j)
            if expected:
                assert hash(our_states[i]) == hash(our_states[j])
            same_theirs += expected
    same_ours = len(set(our_states))
    assert same_theirs > 0
    assert same_ours == len(set(their_states))


def test_sentence_markers_as_words_match_kenlm(models) -> None:
    ours, theirs = models
    for begin in (True, False):
        for words in (["<s>"], ["o", "<s>"], ["</s>", "o"], ["<unk>", "o"], ["</s>", "</s>"]):
            got = _chain(fastppl.kenlm, ours, words, begin)
            expected = _chain(kenlm, theirs, words, begin)
            assert [g[0][1:] for g in got] == [e[0][1:] for e in expected], words
            assert [g[0][0] for g in got] == pytest.approx([e[0][0] for e in expected], abs=1e-6)
            # the state after <s> is the sentence start's in both
            begin_ours, begin_theirs = fastppl.kenlm.State(), kenlm.State()
            ours.BeginSentenceWrite(begin_ours)
            theirs.BeginSentenceWrite(begin_theirs)
            assert [g[1] == begin_ours for g in got] == [e[1] == begin_theirs for e in expected]


def test_documented_state_example_runs_unchanged(lmplz_o4_arpa_path: Path, monkeypatch) -> None:
    path = str(lmplz_o4_arpa_path)
    monkeypatch.setitem(sys.modules, "kenlm", fastppl.kenlm)
    import kenlm as module  # now fastppl.kenlm

    assert module is fastppl.kenlm
    exec(KENLM_STATE_EXAMPLE, {"kenlm": module, "model": module.Model(path)})


def test_state_value_semantics() -> None:
    a, b = fastppl.kenlm.State(), fastppl.kenlm.State()
    assert a == b and not a < b and a <= b and hash(a) == hash(b)
    a._context = (1,)
    assert a != b and b < a and sorted([a, b]) == [b, a]
    c = copy.deepcopy(a)
    assert c == a and c is not a
    assert a != "state"


def test_bad_arguments_raise_clear_errors(lmplz_o4_arpa_path: Path) -> None:
    model = fastppl.kenlm.Model(lmplz_o4_arpa_path)
    state, out = fastppl.kenlm.State(), fastppl.kenlm.State()
    model.BeginSentenceWrite(state)
    with pytest.raises(InvalidTypeError, match="word must be a str or bytes, got int"):
        model.BaseScore(state, 3, out)
    with pytest.raises(TypeError, match=r"in_state must be a fastppl\.kenlm\.State, got NoneType"):
        model.BaseScore(None, "o", out)
    with pytest.raises(InvalidTypeError, match="out_state"):
        model.BaseFullScore(state, "o", {})
    state._context = (10**9,)
    with pytest.raises(InvalidArgumentError, match="another model"):
        model.BaseScore(state, "o", out)
