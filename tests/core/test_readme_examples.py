"""The README's examples run: every ```python block, and every ``fastppl`` line of its ```bash
blocks parses.

Each ```python block runs with ``exec`` in a fresh namespace, in a temporary folder, one case per
block. A block that uses files or names from elsewhere (``model.arpa.gz``, ``test``, ``fitted``
...) gets them from :data:`SETUPS`, made from the repository's own fixtures (``tests/data``, the
bundled corpus); one that needs an optional extra is skipped when the extra is missing
(:data:`NEEDS`); where the README states a result in a comment, :data:`CHECKS` compares it with
what the block computed. Blocks that cannot run (:data:`NOT_RUNNABLE`, each with its reason) are
still compiled, and the keyword arguments of their fastppl calls checked against the functions'
signatures. The tables are keyed by section heading and the block's rank in the section, so a new
block runs as it is, fails if it cannot, and a stale key fails too. Nothing is downloaded.
"""

from __future__ import annotations

import ast
import gzip
import importlib
import importlib.util
import inspect
import lzma
import math
import re
import shlex
import shutil
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import fastppl
from fastppl.cli import _join_prune_values, build_parser
from helpers.arpa_text import read_arpa
from helpers.hf_tokenizers import train_tokenizer
from helpers.shared_data import REPO_ROOT, fixture_path

README = REPO_ROOT / "README.md"
#: The lmplz 4-gram (``--prune 0 1 2``) of ``machado_train_head_path`` and its ``query`` output.
LMPLZ_STEM = "lmplz-machado-small-2500.o4.prune-0-1-2"

#: The README's sections with Python examples (the keys of the tables below).
QUICK_START = "Quick start"
ARPA = "KenLM's ARPA and binary files"
KENLM_MODULE = "The `kenlm` module, replaced (`fastppl.kenlm`)"
DOCUMENTS = (
    "Document perplexity for data filtering (`fastppl.documents`, extra `fastppl[documents]`)"
)
ANY_MODEL = "Perplexity of any model (`fastppl.metrics`, `fastppl.lda`, `fastppl.hf`)"
RAY = "Training and scoring on a Ray cluster (`fastppl.ray`, extra `fastppl[ray]`)"

Key = tuple[str, int]
Namespace = dict[str, Any]


@dataclass(frozen=True)
class Block:
    """A fenced code block of the README."""

    heading: str  #: the text of the nearest heading above it
    rank: int  #: 1 for the section's first block of its language, 2 for the next...
    line: int  #: the line number of its opening fence
    source: str

    @property
    def key(self) -> Key:
        """What the tables below are keyed by: the section and the rank, not the line."""
        return (self.heading, self.rank)

    @property
    def id(self) -> str:
        """The pytest id: the section's heading, slugged, and the line."""
        slug = re.sub(r"[^a-z0-9]+", "-", self.heading.lower()).strip("-")
        return f"{slug}-L{self.line}"


def readme_blocks(language: str, text: str | None = None) -> list[Block]:
    """The README's fenced blocks of ``language`` (```` ```python ````...), in order."""
    lines = (README.read_text(encoding="utf-8") if text is None else text).splitlines()
    blocks: list[Block] = []
    ranks: dict[tuple[str, str], int] = {}
    heading, fence, body = "", None, []
    for number, line in enumerate(lines, 1):
        if fence is None:
            if line.startswith("#"):
                heading = line.lstrip("#").strip()
            elif line.startswith("```"):
                fence, body = (line[3:].strip(), number), []
        elif line.startswith("```"):
            kind, start = fence
            if kind == language:
                ranks[heading, kind] = ranks.get((heading, kind), 0) + 1
                blocks.append(Block(heading, ranks[heading, kind], start, "\n".join(body) + "\n"))
            fence = None
        else:
            body.append(line)
    return blocks


def run_block(source: str, namespace: Namespace) -> dict[str, Any]:
    """Runs ``source`` statement by statement in ``namespace``, as a REPL would; returns the
    value of each top-level expression statement, keyed by its source text."""
    values: dict[str, Any] = {}
    for statement in ast.parse(source).body:
        text = ast.get_source_segment(source, statement) or ""
        if isinstance(statement, ast.Expr):
            code = compile(ast.Expression(statement.value), "README.md", "eval")
            values[text] = eval(code, namespace)
        else:
            exec(compile(ast.Module([statement], []), "README.md", "exec"), namespace)
    return values


def decompressed(name: str, target: Path) -> Path:
    """``tests/data/<name>.xz`` decompressed to ``target``."""
    with lzma.open(fixture_path(f"{name}.xz")) as src, target.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    return target


def write_model_arpa_gz(folder: Path) -> None:
    """``model.arpa.gz``: lmplz's pruned 4-gram of the Machado slice, gzip-compressed."""
    source = fixture_path(f"{LMPLZ_STEM}.arpa.xz")
    with lzma.open(source) as src, gzip.open(folder / "model.arpa.gz", "wb") as dst:
        shutil.copyfileobj(src, dst)


def lines_corpus(path: Path) -> fastppl.Corpus:
    """A tokenized text, one sentence a line, read as lmplz and query read it."""
    return fastppl.Corpus.from_file(path, tokenizer="whitespace", sentences="lines")


# ---------------------------------------------------------------- setups: names from elsewhere


def setup_arpa(ns: Namespace, tmp_path: Path) -> None:
    """``model.arpa.gz`` (lmplz's 4-gram), ``test`` (held-out text), ``fitted`` (fastppl's fit of
    lmplz's text with lmplz's options) and ``fastppl``, imported by the Quick start."""
    write_model_arpa_gz(tmp_path)
    train = decompressed("machado-small.train.head-2500.txt", tmp_path / "train.txt")
    test = decompressed("machado.test.head-500.txt", tmp_path / "test.txt")
    ns["fastppl"] = fastppl
    ns["test"] = lines_corpus(test)
    ns["fitted"] = fastppl.NGramModel.fit(lines_corpus(train), order=4, prune=(0, 1, 2))


def setup_kenlm(ns: Namespace, tmp_path: Path) -> None:
    """``model.arpa.gz``."""
    write_model_arpa_gz(tmp_path)


def setup_documents(ns: Namespace, tmp_path: Path) -> None:
    """``en.sp.model`` (a 300-piece SentencePiece model of normalized Machado text), ``model``
    (a trigram of its pieces), ``texts`` (three held-out documents) and ``dataset`` holding
    them in a ``text`` column."""
    import sentencepiece as spm

    from fastppl import documents

    train = decompressed("machado-small.train.head-2500.txt", tmp_path / "train.txt")
    lines = [documents.normalize(line) for line in train.read_text(encoding="utf-8").splitlines()]
    (tmp_path / "sp.txt").write_text("\n".join(lines), encoding="utf-8")
    spm.SentencePieceTrainer.train(
        input=str(tmp_path / "sp.txt"), model_prefix="en.sp", vocab_size=300, minloglevel=2
    )
    sp = spm.SentencePieceProcessor(model_file="en.sp.model")
    pieces = fastppl.Corpus.from_sentences([sp.encode(line, out_type=str) for line in lines])
    test = decompressed("machado.test.head-500.txt", tmp_path / "test.txt")
    held_out = test.read_text(encoding="utf-8").splitlines()
    texts = ["\n".join(held_out[i : i + 5]) for i in range(0, 15, 5)]
    # 300 pieces, each seen often: too few singletons for modified Kneser-Ney's own discounts
    ns["model"] = fastppl.NGramModel.fit(pieces, order=3, discount_fallback=True)
    ns["texts"] = texts
    if importlib.util.find_spec("datasets") is not None:
        import datasets

        ns["dataset"] = datasets.Dataset.from_dict({"text": texts})
    else:
        ns["dataset"] = BatchedDataset({"text": texts})


class BatchedDataset:
    """The part of a Hugging Face ``datasets.Dataset`` the README's ``dataset.map(...,
    batched=True)`` uses, for when ``datasets`` (no dependency of fastppl) is not installed:
    columns by name, and ``map`` adding the columns a function returns for a batch (the whole
    dataset is one batch here)."""

    def __init__(self, columns: Mapping[str, list[Any]]) -> None:
        self.columns = dict(columns)

    def __getitem__(self, name: str) -> list[Any]:
        return self.columns[name]

    def map(self, function: Callable[[dict[str, list[Any]]], dict[str, list[Any]]], *,
            batched: bool) -> BatchedDataset:  # fmt: skip
        """``Dataset.map(function, batched=True)``: this one takes batches only."""
        assert batched, "the stand-in maps batches only"
        return BatchedDataset({**self.columns, **function(dict(self.columns))})


def setup_metrics(ns: Namespace, tmp_path: Path) -> None:
    """Causal-LM ``logits`` (2 sequences of 6 positions, 7 classes) with their ``labels`` and an
    ``attention_mask`` padding the second; ``per_document_logprobs``; and an LDA model (``theta``
    of 3 documents on 2 topics, ``phi`` over 6 words) with its ``docs`` (word ids)."""
    rng = np.random.default_rng(0)
    ns["logits"] = rng.normal(size=(2, 6, 7)).astype(np.float32)
    ns["labels"] = rng.integers(0, 7, size=(2, 6))
    ns["attention_mask"] = np.array([[1] * 6, [1] * 4 + [0] * 2])
    ns["per_document_logprobs"] = [np.log([0.5, 0.25]), np.log([0.1, 0.2, 0.4])]
    ns["theta"] = rng.dirichlet([1.0, 1.0], size=3)
    ns["phi"] = rng.dirichlet([1.0] * 6, size=2)
    ns["docs"] = [[0, 1, 2], [3, 4], [5, 0, 1, 1]]


HF_TEXTS = [
    "the cat sat on the mat",
    "a dog ran in the park and barked at unbelievable squirrels",
    "the quick brown fox jumps over the lazy dog",
]


def setup_hf(ns: Namespace, tmp_path: Path) -> None:
    """Tiny random models built from configs (nothing downloaded): ``model`` a GPT-2 with a
    1024-token context (the example's ``stride=512`` needs more than 512), ``mlm`` a BERT, each
    with a WordPiece tokenizer trained here on ``texts``."""
    import torch
    import transformers

    torch.manual_seed(0)
    causal = train_tokenizer(HF_TEXTS, post_processor=False)
    gpt2 = transformers.GPT2Config(
        n_layer=1, n_head=2, n_embd=16, vocab_size=len(causal), n_positions=1024,
        bos_token_id=causal.bos_token_id, eos_token_id=causal.sep_token_id,
    )  # fmt: skip
    masked = train_tokenizer(HF_TEXTS, post_processor=True)
    bert = transformers.BertConfig(
        vocab_size=len(masked), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=64, pad_token_id=masked.pad_token_id,
    )  # fmt: skip
    ns["model"] = transformers.GPT2LMHeadModel(gpt2).eval()
    ns["tokenizer"] = causal
    ns["mlm"] = transformers.BertForMaskedLM(bert).eval()
    ns["mlm_tokenizer"] = masked
    ns["texts"] = HF_TEXTS


#: Blocks that use files or names defined elsewhere: what each needs, made before it runs.
SETUPS: dict[Key, Callable[[Namespace, Path], None]] = {
    (ARPA, 1): setup_arpa,
    (KENLM_MODULE, 1): setup_kenlm,
    (DOCUMENTS, 1): setup_documents,
    (ANY_MODEL, 1): setup_metrics,
    (ANY_MODEL, 2): setup_hf,
}

#: Blocks that need optional modules: skipped (``importorskip``) when one is missing.
NEEDS: dict[Key, tuple[str, ...]] = {
    (DOCUMENTS, 1): ("sentencepiece",),
    (ANY_MODEL, 2): ("torch", "transformers", "tokenizers"),
    (RAY, 1): ("ray",),
}


# ---------------------------------------------------------------- checks: results the README states


def check_quick_start(ns: Namespace, values: dict[str, Any]) -> None:
    """``logprob`` is a natural log, ``base=10`` its log10; evaluating the training text finds
    no OOV."""
    ln = values['m.logprob("dia", context=("o",))']
    assert values['m.logprob("dia", context=("o",), base=10)'] == pytest.approx(ln / math.log(10))
    assert len(values['m.logprobs(["o", "dia"])']) == 3  # one per token, then </s>
    assert ns["r"].num_oov == 0


def check_arpa(ns: Namespace, values: dict[str, Any]) -> None:
    """The perplexity is query's "excluding OOVs" on the same model and text, and ``to_arpa``
    writes lmplz's n-grams and numbers to 1e-5 in log10."""
    summary = decompressed(f"{LMPLZ_STEM}.probing.query.txt", Path("query.txt"))
    line = next(s for s in summary.read_text().splitlines() if s.startswith("Perplexity excl"))
    expected = float(line.split("\t")[1])
    assert values['m.evaluate(test, oov="skip").perplexity'] == pytest.approx(expected, rel=1e-6)
    header, grams = read_arpa(fixture_path(f"{LMPLZ_STEM}.arpa.xz"))
    mine_header, mine = read_arpa(Path("out.arpa.xz"))
    assert mine_header == header
    for order, entries in grams.items():
        assert mine[order].keys() == entries.keys()
        for gram, (prob, backoff) in entries.items():
            assert mine[order][gram][0] == pytest.approx(prob, abs=1e-5), gram
            assert (mine[order][gram][1] or 0.0) == pytest.approx(backoff or 0.0, abs=1e-5), gram


def check_kenlm(ns: Namespace, values: dict[str, Any]) -> None:
    """``total == model.score("o")``."""
    assert ns["total"] == pytest.approx(ns["model"].score("o"), abs=1e-5)


def check_documents(ns: Namespace, values: dict[str, Any]) -> None:
    """``normalize``'s result as the comment shows it; one perplexity per text, the same through
    ``map_function``."""
    assert values['documents.normalize("Été 2024 — «Olá»")'] == 'ete 0000  -  "ola"'
    assert len(ns["ppl"]) == len(ns["texts"])
    assert list(ns["dataset"]["perplexity"]) == pytest.approx(list(ns["ppl"]))


def check_metrics(ns: Namespace, values: dict[str, Any]) -> None:
    """``exp(mean NLL)``, and the stated 2.41506..."""
    nll = np.mean([1.2, 0.3, 2.0])
    assert values["metrics.perplexity([-1.2, -0.3, -2.0])"] == pytest.approx(np.exp(nll))
    value = values["metrics.perplexity(probs=[0.4, 0.3, 0.2, 0.5, 0.7, 0.6])"]
    assert f"{value:.5f}" == "2.41506"


#: Results the README states in comments, compared with what the block computed.
CHECKS: dict[Key, Callable[[Namespace, dict[str, Any]], None]] = {
    (QUICK_START, 1): check_quick_start,
    (ARPA, 1): check_arpa,
    (KENLM_MODULE, 1): check_kenlm,
    (DOCUMENTS, 1): check_documents,
    (ANY_MODEL, 1): check_metrics,
}

#: Blocks that cannot run here, why, and the modules whose calls in them are checked instead.
NOT_RUNNABLE: dict[Key, tuple[str, dict[str, str]]] = {
    (RAY, 1): (
        "a multi-machine job: cluster paths (/shared/..., /local/...) and an elided file list "
        "(`...`); fastppl.ray's train and score run on a local cluster in "
        "tests/parity/test_ray_distributed.py",
        {"fray": "fastppl.ray"},
    ),
}


def assert_calls_bind(source: str, modules: Mapping[str, ModuleType]) -> int:
    """Every call ``name.function(...)`` in ``source``, ``name`` a key of ``modules``: the
    function exists and takes as many positional arguments and each keyword by name (not through
    ``**kwargs``). Returns how many calls were checked."""
    checked = 0
    for node in ast.walk(ast.parse(source)):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id in modules
        ):
            continue
        function = getattr(modules[node.func.value.id], node.func.attr)
        parameters = inspect.signature(function).parameters
        named = {
            name
            for name, p in parameters.items()
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        }
        keywords = {k.arg for k in node.keywords}
        assert keywords <= named, f"{node.func.attr} takes no {sorted(keywords - named)}"
        inspect.signature(function).bind(*node.args, **dict.fromkeys(keywords))
        checked += 1
    return checked


PYTHON_BLOCKS = readme_blocks("python")


def test_the_tables_name_readme_blocks() -> None:
    """Every key of the tables names a block of the README (a renamed section or a removed
    block must not leave a stale entry), and no block is both run and excused."""
    keys = {block.key for block in PYTHON_BLOCKS}
    for table in (SETUPS, NEEDS, CHECKS, NOT_RUNNABLE):
        assert set(table) <= keys, sorted(set(table) - keys)
    assert not set(NOT_RUNNABLE) & (set(SETUPS) | set(CHECKS))
    assert len(PYTHON_BLOCKS) >= 6


def test_blocks_are_found_with_their_section() -> None:
    text = "# A\n```python\nx = 1\n```\n## B\n```bash\nls\n```\n```python\ny = 2\n```\n"
    blocks = readme_blocks("python", text)
    assert [(b.key, b.line, b.source) for b in blocks] == [
        (("A", 1), 2, "x = 1\n"),
        (("B", 1), 9, "y = 2\n"),
    ]
    assert blocks[1].id == "b-L9"


@pytest.mark.parametrize("block", PYTHON_BLOCKS, ids=[b.id for b in PYTHON_BLOCKS])
def test_python_example_runs(block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for module in NEEDS.get(block.key, ()):
        pytest.importorskip(module)
    compile(block.source, "README.md", "exec")
    if block.key in NOT_RUNNABLE:
        reason, names = NOT_RUNNABLE[block.key]
        modules = {name: importlib.import_module(module) for name, module in names.items()}
        assert assert_calls_bind(block.source, modules) > 0
        pytest.skip(f"not run: {reason} (compiled, and its calls checked against the signatures)")
    monkeypatch.chdir(tmp_path)
    namespace: Namespace = {"__name__": "readme_example"}
    if block.key in SETUPS:
        SETUPS[block.key](namespace, tmp_path)
    values = run_block(block.source, namespace)
    if block.key in CHECKS:
        CHECKS[block.key](namespace, values)


def fastppl_commands(blocks: Iterable[Block]) -> list[tuple[str, list[str]]]:
    """``(id, argv)`` of each ``fastppl`` command in the bash blocks (after ``&&`` or ``|`` too),
    its ``#`` comment removed."""
    commands = []
    for block in blocks:
        for offset, line in enumerate(block.source.splitlines(), 1):
            for part in re.split(r"&&|\|", line.split(" #", 1)[0]):
                words = shlex.split(part)
                if words[:1] == ["fastppl"]:
                    commands.append((f"L{block.line + offset}-{words[1]}", words[1:]))
    return commands


FASTPPL_COMMANDS = fastppl_commands(readme_blocks("bash"))


@pytest.mark.parametrize(
    "argv", [argv for _, argv in FASTPPL_COMMANDS], ids=[i for i, _ in FASTPPL_COMMANDS]
)
def test_bash_fastppl_command_parses(argv: Sequence[str]) -> None:
    """The command line's parser takes each ``fastppl`` command of the README (it is parsed as
    ``fastppl.cli.main`` parses it, not run)."""
    build_parser().parse_args(_join_prune_values(argv))


def test_bash_blocks_have_fastppl_commands() -> None:
    assert {argv[0] for _, argv in FASTPPL_COMMANDS} >= {"train", "eval", "score", "demo"}
