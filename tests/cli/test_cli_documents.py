"""``fastppl score --documents``: JSON lines in, each record back with its perplexity."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fastppl import Corpus, NGramModel, datasets, documents
from fastppl.cli import main
from fastppl.errors import InvalidArgumentError
from fastppl.text import read_text


@pytest.fixture(scope="module")
def paragraphs() -> list[str]:
    text = read_text(datasets.machado(), skip_line_prefixes=datasets.MACHADO_SKIP_LINE_PREFIXES)
    return [p for p in text.split("\n") if p.strip()][:1200]


@pytest.fixture(scope="module")
def model_path(paragraphs, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("cli-documents") / "m.arpa"
    corpus = Corpus.from_texts(["\n".join(map(documents.normalize, paragraphs[:1000]))], "kenlm")
    NGramModel.fit(corpus, order=3, smoothing="modified_kneser_ney").to_arpa(path)
    return path


@pytest.fixture()
def records(paragraphs) -> list[dict]:
    held_out = paragraphs[1000:]
    return [
        {"id": i, "content": "\n".join(held_out[i : i + 3]), "meta": {"ok": True}}
        for i in range(0, len(held_out), 3)
    ]


def _write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")
    return path


def test_an_input_of_no_record_gives_none_and_says_so(model_path, tmp_path, capsys) -> None:
    source = tmp_path / "docs.jsonl"
    source.write_text("\n\n", encoding="utf-8")
    assert main(["score", str(model_path), str(source), "--documents"]) == 0
    assert capsys.readouterr() == (
        "",
        f"fastppl: note: {str(source)!r} holds no JSON record: nothing to score\n",
    )


def test_records_come_back_with_their_perplexity(model_path, records, tmp_path, capsys) -> None:
    source = _write_jsonl(tmp_path / "docs.jsonl", records)
    model = NGramModel.from_file(model_path)
    texts = [r["content"] for r in records]
    argv = ["score", str(model_path), str(source), "--documents", "--text-field", "content", "-q"]
    assert main(argv) == 0
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [{k: v for k, v in r.items() if k != "perplexity"} for r in out] == records
    expected = documents.perplexity(model, texts, normalize=False)
    np.testing.assert_array_equal([r["perplexity"] for r in out], expected)
    target = tmp_path / "out.jsonl"
    argv += ["--normalize", "--perplexity-field", "ppl", "-o", str(target)]
    assert main(argv) == 0
    assert capsys.readouterr().out == ""
    out = [json.loads(line) for line in target.read_text("utf-8").splitlines()]
    expected = documents.perplexity(model, texts, normalize=True)
    np.testing.assert_array_equal([r["ppl"] for r in out], expected)


def test_line_separators_inside_strings_are_not_line_ends(model_path, tmp_path) -> None:
    """JSON Lines end at "\\n" only: U+2028, U+2029 and U+0085 may stand unescaped in a JSON
    string (this command writes them so, ensure_ascii=False), and its output reads back."""
    records = [{"text": f"o dia{sep}e a noite", "n": i} for i, sep in enumerate("\u2028\u2029\x85")]
    source = _write_jsonl(tmp_path / "docs.jsonl", records)
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    argv = ["score", str(model_path), "--documents", "-q"]
    assert main([*argv[:2], str(source), *argv[2:], "-o", str(first)]) == 0
    assert (
        main([*argv[:2], str(first), *argv[2:], "--perplexity-field", "again", "-o", str(second)])
        == 0
    )
    out = [json.loads(line) for line in second.read_text("utf-8").split("\n") if line]
    assert [r["text"] for r in out] == [r["text"] for r in records]
    assert [r["again"] for r in out] == [r["perplexity"] for r in out]


def test_a_lone_surrogate_outside_the_text_comes_back_escaped(model_path, tmp_path) -> None:
    """JSON may escape a lone surrogate ("\\ud800"), which UTF-8 cannot encode: such a record
    came back as a UnicodeEncodeError traceback (and no output); it is now written with its
    non-ASCII characters escaped, and reads back as it was."""
    source = tmp_path / "docs.jsonl"
    source.write_text('{"text": "o dia", "id": "\\ud800é"}\n{"text": "é", "id": 2}\n', "utf-8")
    target = tmp_path / "out.jsonl"
    assert (
        main(["score", str(model_path), str(source), "--documents", "-q", "-o", str(target)]) == 0
    )
    lines = target.read_text("utf-8").splitlines()
    assert lines[0].startswith('{"text": "o dia", "id": "\\ud800\\u00e9", "perplexity": ')
    assert lines[1].startswith('{"text": "é", "id": 2, "perplexity": ')
    assert [json.loads(line)["id"] for line in lines] == ["\ud800é", 2]


def test_sentencepiece_from_standard_input(
    model_path, records, paragraphs, tmp_path, capsys
) -> None:
    spm = pytest.importorskip("sentencepiece")
    train = tmp_path / "train.txt"
    train.write_text("\n".join(map(documents.normalize, paragraphs[:800])), "utf-8")
    prefix = tmp_path / "sp"
    spm.SentencePieceTrainer.train(
        input=str(train), model_prefix=str(prefix), vocab_size=300, minloglevel=2
    )
    sp_model = f"{prefix}.model"
    lines = "".join(json.dumps({"text": r["content"]}) + "\n" for r in records)
    proc = subprocess.run(
        [sys.executable, "-m", "fastppl.cli", "score", str(model_path), "--documents",
         "--normalize", "--sp-model", sp_model, "-q"],
        input=lines.encode(), capture_output=True, check=True,
    )  # fmt: skip
    got = [json.loads(line)["perplexity"] for line in proc.stdout.decode().splitlines()]
    expected = documents.perplexity(
        NGramModel.from_file(model_path),
        [r["content"] for r in records],
        sp_model=sp_model,
    )
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    source = tmp_path / "docs.jsonl"
    source.write_text(lines, "utf-8")
    argv = ["score", str(model_path), str(source), "--documents", "--normalize", "-q"]
    assert main([*argv, "--sp-model", sp_model, "--whole-lines"]) == 0
    got = [json.loads(line)["perplexity"] for line in capsys.readouterr().out.splitlines()]
    np.testing.assert_allclose(got, expected, rtol=1e-9)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"text": "ok"', "docs.jsonl:3: not valid JSON"),
        ("[1, 2]", "docs.jsonl:3: not a JSON object"),
        ('{"body": "x"}', "docs.jsonl:3: no field 'text'"),
        ('{"text": 5}', "docs.jsonl:3: field 'text' is int, not text"),
        # named 'documents[0]' (its index in a batch of 10,000) before
        (
            '{"text": "o \\ud800"}',
            "docs.jsonl:3: field 'text' holds a lone surrogate ('\\ud800') at position 2",
        ),
        # named 'sentence 2' (its index among the lines of a batch) before
        (
            '{"text": "a\\nb </s>"}',
            "docs.jsonl:3: field 'text', line 2, holds the reserved token \"</s>\"",
        ),
        # a RecursionError traceback before
        (
            '{"text": "a", "x": ' + "[" * 100_000 + "]" * 100_000 + "}",
            "docs.jsonl:3: JSON nested too deeply",
        ),
    ],
)
def test_bad_records_name_their_line_and_leave_no_output(
    model_path, tmp_path, capsys, line: str, message: str
) -> None:
    source = tmp_path / "docs.jsonl"
    source.write_text('{"text": "a"}\n\n' + line + "\n", "utf-8")
    target = tmp_path / "out.jsonl"
    assert main(["score", str(model_path), str(source), "--documents", "-o", str(target)]) == 1
    assert message in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == [source]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("missing.model", "SentencePiece model not found: '{}'"),
        ("folder", "SentencePiece model is a directory: '{}'"),  # said 'not found' before
    ],
)
def test_a_bad_sentencepiece_path_is_named(model_path, tmp_path, capsys, name, message) -> None:
    pytest.importorskip("sentencepiece")
    source = tmp_path / "docs.jsonl"
    source.write_text('{"text": "a"}\n', "utf-8")
    (tmp_path / "folder").mkdir()
    sp_model = tmp_path / name
    argv = ["score", str(model_path), str(source), "--documents", "--sp-model", str(sp_model)]
    assert main(argv) == 1
    assert capsys.readouterr().err == f"fastppl: error: {message.format(sp_model)}\n"


def test_a_bad_text_is_named_by_its_line_in_any_batch(model_path, tmp_path, capsys, monkeypatch):
    import fastppl.cli

    monkeypatch.setattr(fastppl.cli, "DOCUMENT_BATCH", 2)
    source = tmp_path / "docs.jsonl"
    lines = ['{"text": "a"}'] * 4 + ["", '{"text": "x", "body": "a"}', '{"text": "<s>"}']
    source.write_text("\n".join(lines) + "\n", "utf-8")
    assert main(["score", str(model_path), str(source), "--documents", "-q"]) == 1
    err = capsys.readouterr().err
    assert f"{source}:7: field 'text', line 1, holds the reserved token \"<s>\"" in err


def test_a_bad_text_is_named_whatever_the_message_of_its_error(
    model_path, tmp_path, capsys, monkeypatch
) -> None:
    """The line is found from the index that documents.perplexity's error carries, not from
    its message (read by a regex on 'documents[N]' before)."""

    def reworded(model: object, texts: list[str], **options: object) -> None:
        raise InvalidArgumentError("reworded", 1, " is not liked")

    monkeypatch.setattr(documents, "perplexity", reworded)
    source = tmp_path / "docs.jsonl"
    source.write_text('{"text": "a"}\n\n{"text": "b"}\n', "utf-8")
    assert main(["score", str(model_path), str(source), "--documents", "-q"]) == 1
    assert f"{source}:3: field 'text' is not liked" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("output", "error"),
    [("folder", "Is a directory"), ("missing/out.jsonl", "No such file or directory")],
)
def test_an_output_that_cannot_be_written_is_named(
    model_path, tmp_path, capsys, output: str, error: str
) -> None:
    """The error names the output as given, not the temporary file written beside it."""
    source = tmp_path / "docs.jsonl"
    source.write_text('{"text": "a"}\n', "utf-8")
    (tmp_path / "folder").mkdir()
    target = tmp_path / output
    assert main(["score", str(model_path), str(source), "--documents", "-o", str(target)]) == 1
    err = capsys.readouterr().err
    assert f"{error}: '{target}'" in err and ".partial" not in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs.jsonl", "folder"]
    assert list((tmp_path / "folder").iterdir()) == []


def test_document_options_need_documents(model_path, tmp_path, capsys) -> None:
    text = tmp_path / "t.txt"
    text.write_text("a b\n", "utf-8")
    assert main(["score", str(model_path), str(text), "--normalize", "-q"]) == 1
    assert "go with --documents" in capsys.readouterr().err
    argv = ["score", str(model_path), str(text), "--documents", "--tokens", "-q"]
    assert main(argv) == 1
    assert "do not go together" in capsys.readouterr().err


@pytest.mark.parametrize(
    "fields",
    [
        ["--perplexity-field", "text"],
        ["--text-field", "perplexity"],
        ["--text-field", "body", "--perplexity-field", "body"],
    ],
)
def test_the_perplexity_does_not_replace_the_text(tmp_path, capsys, fields: list[str]) -> None:
    """Refused before anything is read (neither the model nor the records exist here), and no
    output is written."""
    target = tmp_path / "out.jsonl"
    argv = ["score", str(tmp_path / "m.arpa"), str(tmp_path / "docs.jsonl"), "--documents"]
    assert main([*argv, *fields, "-o", str(target), "-q"]) == 1
    field = fields[-1]
    assert capsys.readouterr().err == (
        f"fastppl: error: --perplexity-field {field!r} is the field of the text (--text-field): "
        "the perplexity would replace each document's text; name another field\n"
    )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_the_output_gets_the_mode_of_a_new_file(
    model_path, tmp_path, umask: int, mode: int
) -> None:
    """-o's file is readable as any file the user creates (0o666 less the umask), not left
    with the 0o600 of the temporary file it was written as."""
    source = tmp_path / "docs.jsonl"
    source.write_text('{"text": "a"}\n', "utf-8")
    target = tmp_path / "out.jsonl"
    previous = os.umask(umask)
    try:
        argv = ["score", str(model_path), str(source), "--documents", "-q", "-o", str(target)]
        assert main(argv) == 0
    finally:
        os.umask(previous)
    assert stat.S_IMODE(target.stat().st_mode) == mode


@pytest.mark.parametrize("which", ["model", "input"])
def test_the_output_is_neither_the_model_nor_the_input(
    model_path, tmp_path, capsys, which: str
) -> None:
    """-o naming the model (a slip of the hand) or the input would replace that file by the
    records: refused, as train refuses to write over its corpus."""
    model = tmp_path / "m.arpa"
    model.write_bytes(model_path.read_bytes())
    source = tmp_path / "docs.jsonl"
    source.write_text('{"text": "a"}\n', "utf-8")
    given, name = {"model": (model, "the model"), "input": (source, "the input")}[which]
    argv = ["score", str(model), str(source), "--documents", "-q", "-o", str(given)]
    assert main(argv) == 1
    assert capsys.readouterr().err == (
        f"fastppl: error: the output {str(given)!r} is {name} {str(given)!r}: refusing to "
        "overwrite it (give another output path)\n"
    )
    assert model.read_bytes() == model_path.read_bytes()
    assert source.read_text("utf-8") == '{"text": "a"}\n'
