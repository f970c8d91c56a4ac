"""Fixtures for data the tests read, and the markers that say which tests need what.

The shared data folder is found by ``helpers.shared_data`` (``$FASTPPL_SHARED``, else
``<repo root>/../shared``). A test that uses one of its fixtures gets the ``shared`` marker and is
skipped with one reason when the folder is absent (failed instead when ``FASTPPL_REQUIRE_SHARED=1``
or ``CI=true``: CI must run everything). Tests that need NLTK's ``punkt_tab`` data get the
``nltk_data`` marker. ``machado_text_path`` needs neither: it is the bundled corpus.

At import, if the shared folder has ``nltk_data/``, ``NLTK_DATA`` is set to it and it is appended
to ``nltk.data.path``, so that ``nltk.word_tokenize`` finds Punkt offline in every test (and in
the subprocesses tests start, which inherit ``NLTK_DATA``).
"""

from __future__ import annotations

import lzma
import os
import shutil
from pathlib import Path

import pytest

from helpers.shared_data import fixture_path, shared_path, shared_required, shared_root

SHARED_NLTK_DATA = shared_root() / "nltk_data"

if SHARED_NLTK_DATA.is_dir():
    os.environ["NLTK_DATA"] = str(SHARED_NLTK_DATA)
    import nltk.data

    if str(SHARED_NLTK_DATA) not in nltk.data.path:
        nltk.data.path.append(str(SHARED_NLTK_DATA))

#: Fixtures that read the shared folder: a test using any of them is marked ``shared``.
SHARED_FIXTURES = frozenset(
    {"shared_dir", "corpora_dir", "machado_tutorial_tokens_path", "gutenberg_dir", "arpa_dir"}
)
#: Fixtures that need NLTK's punkt_tab data: a test using any of them is marked ``nltk_data``.
NLTK_DATA_FIXTURES = frozenset({"nltk_data_dir", "machado_tutorial_sentences"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test by the data its fixtures need (``-m "not shared"`` then works)."""
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        if names & SHARED_FIXTURES:
            item.add_marker(pytest.mark.shared)
        if names & NLTK_DATA_FIXTURES:
            item.add_marker(pytest.mark.nltk_data)


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The shared data folder (``$FASTPPL_SHARED`` or ``../shared``); skips the test if absent."""
    return shared_path()


@pytest.fixture(scope="session")
def nltk_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding NLTK's English and Portuguese ``punkt_tab``, on ``nltk.data.path``.

    ``<shared>/nltk_data``, else wherever NLTK finds it (``$NLTK_DATA``, ``~/nltk_data``), else
    the Punkt parameters bundled with fastppl (``fastppl/data/punkt_tab``, when the package has
    them), copied into an NLTK data folder and put in ``NLTK_DATA`` for subprocesses. Skips the
    test if none has them (fails it in CI).
    """
    if (SHARED_NLTK_DATA / "tokenizers" / "punkt_tab" / "english").is_dir():
        return SHARED_NLTK_DATA
    import nltk.data

    try:
        return Path(str(nltk.data.find("tokenizers/punkt_tab/english"))).parents[2]
    except LookupError:
        pass
    from importlib.resources import files

    bundled = Path(str(files("fastppl") / "data" / "punkt_tab"))
    if (bundled / "english").is_dir():
        root = tmp_path_factory.mktemp("nltk_data")
        # a copy, not a link: NLTK refuses files whose real path is outside its data path
        shutil.copytree(bundled, root / "tokenizers" / "punkt_tab")
        nltk.data.path.append(str(root))
        os.environ["NLTK_DATA"] = str(root)
        return root
    if shared_required():
        pytest.fail(f"NLTK's punkt_tab data not found (expected {SHARED_NLTK_DATA})")
    pytest.skip("needs NLTK's punkt_tab data (../shared/nltk_data or $NLTK_DATA): not found")


@pytest.fixture(scope="session")
def corpora_dir() -> Path:
    """``<shared>/corpora``."""
    return shared_path("corpora")


@pytest.fixture(scope="session")
def machado_text_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The raw Machado de Assis corpus, plain UTF-8 (``#``/``%`` lines are not text).

    The bundled ``fastppl/data/machado.txt.xz``, decompressed once per session: byte for byte
    ``<shared>/corpora/machado/machadodeassiscorpus.txt`` (see ``fastppl/data/README.md``).
    """
    from fastppl import datasets

    path = tmp_path_factory.mktemp("machado") / "machadodeassiscorpus.txt"
    with lzma.open(datasets.machado()) as src, path.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    return path


def _decompressed(name: str, factory: pytest.TempPathFactory) -> Path:
    """``tests/data/<name>.xz`` decompressed into a session's temporary folder."""
    path = factory.mktemp("data") / name
    with lzma.open(fixture_path(f"{name}.xz")) as src, path.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    return path


@pytest.fixture(scope="session")
def machado_train_head_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first 2,500 lines of ``<shared>/arpa/machado-small.train.txt`` (one tokenized,
    lowercased sentence a line; 42,826 tokens with ``</s>``), from ``tests/data``: the text of
    the lmplz pruning fixture."""
    return _decompressed("machado-small.train.head-2500.txt", tmp_path_factory)


@pytest.fixture(scope="session")
def machado_test_head_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first 500 lines of ``<shared>/arpa/machado.test.txt`` (held-out sentences, disjoint
    from the training text), from ``tests/data``."""
    return _decompressed("machado.test.head-500.txt", tmp_path_factory)


@pytest.fixture(scope="session")
def lmplz_o4_arpa_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """KenLM's own 4-gram of ``machado_train_head_path`` (``lmplz -o 4 --prune 0 1 2``, see
    ``tests/data/README.md``) as a plain ARPA file, which the kenlm module reads whatever
    codecs it was built with: a KenLM-made model for the parity tests on a fresh clone."""
    return _decompressed("lmplz-machado-small-2500.o4.prune-0-1-2.arpa", tmp_path_factory)


#: The KenLM binary fixtures of ``lmplz_o4_arpa_path`` in ``tests/data`` (``build_binary`` kinds).
KENLM_BINARY_KINDS = ("probing", "trie", "trie-q8b8", "trie-a22")


@pytest.fixture(scope="session")
def kenlm_binary_fixture(tmp_path_factory: pytest.TempPathFactory):
    """``kind -> (binary path, query output path)`` for the ``build_binary`` files of the pruned
    4-gram in ``tests/data`` (probing, trie, trie ``-q 8 -b 8``, trie ``-a 22``; see its README):
    ``query -v word -v sentence -v summary`` of ``machado_test_head_path`` on each (the ``-a 22``
    trie's is the plain trie's, byte for byte). Decompressed on first use."""
    stem = "lmplz-machado-small-2500.o4.prune-0-1-2"
    found: dict[str, tuple[Path, Path]] = {}

    def get(kind: str) -> tuple[Path, Path]:
        if kind not in found:
            query_kind = "trie" if kind == "trie-a22" else kind
            found[kind] = (
                _decompressed(f"{stem}.{kind}.bin", tmp_path_factory),
                _decompressed(f"{stem}.{query_kind}.query.txt", tmp_path_factory),
            )
        return found[kind]

    return get


@pytest.fixture(scope="session")
def machado_tutorial_tokens_path() -> Path:
    """The tutorial's own token stream (NLTK 3.2.5, one token per line, gzip; 629,885 tokens)."""
    return shared_path("corpora", "machado", "machado.tokens-nltk3.2.5.txt.gz")


@pytest.fixture(scope="session")
def gutenberg_dir() -> Path:
    """``<shared>/corpora/gutenberg`` (five ``.txt.xz`` shards and ``BOOKS.tsv``)."""
    return shared_path("corpora", "gutenberg")


@pytest.fixture(scope="session")
def arpa_dir() -> Path:
    """``<shared>/arpa``: KenLM lmplz models, train/test texts and query outputs."""
    return shared_path("arpa")


@pytest.fixture(scope="session")
def machado_tutorial_sentences(machado_text_path: Path, nltk_data_dir: Path) -> list[list[str]]:
    """The Machado corpus through the tutorial pipeline, with English Punkt: ``#``/``%`` lines
    dropped, lowercased, ``nltk.word_tokenize``, sentences ended by terminator tokens.

    629,335 tokens (NLTK 3.10). Computed once per session (about 15 s); do not mutate.
    """
    from fastppl.text import read_text, tokenize_text

    text = read_text(machado_text_path, skip_line_prefixes=("#", "%"), lowercase=True)
    return tokenize_text(text, tokenizer="nltk", sentences="terminators", language="english")
