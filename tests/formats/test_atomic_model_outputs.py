"""Every model output is atomic (issue 10, "every output is atomic").

Writes go to a temporary file beside the target, synced and renamed over it: a failed write
keeps the old file byte for byte and leaves no temporary, a loaded (memory-mapped) model can be
written onto its own path, and two concurrent writers leave one complete model.
"""

from __future__ import annotations

import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from fastppl import NGramModel

FIT = "from fastppl import Corpus, NGramModel\n" + textwrap.dedent(
    """
    def fit(n=2000, seed=1):
        import random
        rng = random.Random(seed)
        words = [f"w{i}" for i in range(300)]
        weights = [1 / (i + 1) for i in range(300)]
        text = "\\n".join(" ".join(rng.choices(words, weights, k=12)) for _ in range(n))
        return NGramModel.fit(Corpus.from_text(text), order=3, discount_fallback=True)
    """
)


def _corpus_text(n: int, seed: int) -> str:
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(300)]
    weights = [1 / (i + 1) for i in range(300)]  # Zipf-like, as text is
    return "\n".join(" ".join(rng.choices(words, weights, k=12)) for _ in range(n)) + "\n"


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", FIT + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("name", ["old.arpa", "old.arpa.gz", "old.fppl"])
def test_a_write_cut_short_keeps_the_old_file_and_no_temporary(tmp_path: Path, name: str) -> None:
    """RLIMIT_FSIZE stops the write part-way: the old file is intact, the directory clean."""
    target = tmp_path / name
    old = b"the good old model\n" * 10
    target.write_bytes(old)
    done = _run(
        f"""
        import resource, signal
        from fastppl.errors import FastpplError
        model = fit()
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
        try:
            model.save({str(target)!r}) if {name!r}.endswith(".fppl") else model.to_arpa(
                {str(target)!r})
        except (FastpplError, OSError) as e:
            print("failed:", e)
        """
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("failed:"), done.stdout
    assert target.read_bytes() == old
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


@pytest.mark.parametrize("name", ["self.arpa", "self.fppl"])
def test_a_loaded_model_can_be_written_onto_its_own_path(tmp_path: Path, name: str) -> None:
    """load(p).save(p) / from_arpa(p).to_arpa(p) used to die of SIGBUS (the mapping truncated)."""
    path = tmp_path / name
    done = _run(
        f"""
        path = {str(path)!r}
        model = fit()
        if path.endswith(".fppl"):
            model.save(path)
            loaded = NGramModel.load(path)
            loaded.save(path)
            again = NGramModel.load(path)
        else:
            model.to_arpa(path)
            loaded = NGramModel.from_arpa(path)
            loaded.to_arpa(path)
            again = NGramModel.from_arpa(path)
        text = Corpus.from_text("w1 w2 w3 w4\\nw5 w6 w7")
        a, b = loaded.evaluate(text).perplexity, again.evaluate(text).perplexity
        print("same" if a == b else f"differ {{a}} {{b}}")
        """
    )
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr[-2000:]}"
    assert done.stdout.strip() == "same"
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


def _train(corpus: Path, output: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "fastppl.cli",
            "train",
            "--discount-fallback",
            "-o",
            "3",
            "-q",
            str(corpus),
            str(output),
        ],
        stderr=subprocess.PIPE,
    )


def _wait(proc: subprocess.Popen[bytes]) -> None:
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err


def test_two_concurrent_trains_leave_one_complete_model(tmp_path: Path) -> None:
    """Both writers finish; the file is byte for byte one of their models (the old code mixed
    them: 2 of 3 trials corrupt)."""
    corpora = []
    for seed in (1, 2):
        corpus = tmp_path / f"corpus{seed}.txt"
        corpus.write_text(_corpus_text(3000, seed))
        corpora.append(corpus)
    alone = []
    for i, c in enumerate(corpora):
        out = tmp_path / f"alone{i}.arpa"
        _wait(_train(c, out))
        alone.append(out.read_bytes())
    assert alone[0] != alone[1]
    target = tmp_path / "model.arpa"
    for _ in range(3):
        procs = [_train(c, target) for c in corpora]
        for p in procs:
            _wait(p)
        assert target.read_bytes() in alone
        NGramModel.from_arpa(target)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["alone0.arpa", "alone1.arpa", "corpus1.txt", "corpus2.txt", "model.arpa"]


def test_train_refuses_to_write_over_its_corpus(tmp_path: Path) -> None:
    """`fastppl train -o 3 x.txt x.txt` used to replace the corpus with the model."""
    corpus = tmp_path / "x.txt"
    text = _corpus_text(50, 3)
    corpus.write_text(text)
    done = subprocess.run(
        [sys.executable, "-m", "fastppl.cli", "train", "-o", "3", str(corpus), str(corpus)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode != 0
    assert "is the input corpus" in done.stderr
    assert "Traceback" not in done.stderr
    assert corpus.read_text() == text


def test_a_directory_is_an_is_a_directory_error_naming_it(tmp_path: Path) -> None:
    """A directory given where a model file is read or written raises IsADirectoryError with
    `filename` set, as the README says of every file that cannot be read or written, whatever
    the call; nothing is left in it."""
    from fastppl import Corpus

    model = NGramModel.fit(
        Corpus.from_sentences([["a", "b"], ["b"]]), order=2, smoothing="witten_bell"
    )
    folder = tmp_path / "folder"
    folder.mkdir()
    calls = {
        "save": lambda: model.save(folder),
        "to_arpa": lambda: model.to_arpa(folder),
        "load": lambda: NGramModel.load(folder),
        "from_arpa": lambda: NGramModel.from_arpa(folder),
        "from_file": lambda: NGramModel.from_file(folder),
        "from_kenlm_binary": lambda: NGramModel.from_kenlm_binary(folder),
    }
    for name, call in calls.items():
        with pytest.raises(IsADirectoryError) as raised:
            call()
        assert raised.value.filename == str(folder), name
    assert list(folder.iterdir()) == []


@pytest.mark.parametrize("suffix", [".zst", ".zstd", ".lz4", ".lzma", ".Z", ".7z", ".zip", ".br"])
def test_a_compression_fastppl_does_not_write_is_refused_up_front(
    tmp_path: Path, suffix: str
) -> None:
    """A name ending in it was written as plain ARPA text; each ARPA writer now refuses it
    before it writes (train_arpa before it counts) and leaves nothing behind."""
    from fastppl import Corpus
    from fastppl.errors import InvalidArgumentError
    from fastppl.training import train_arpa

    corpus = Corpus.from_sentences([["a", "b"], ["b"]])
    model = NGramModel.fit(corpus, order=2, smoothing="witten_bell")
    target = tmp_path / f"m.arpa{suffix}"
    stages: list[tuple] = []
    calls = {
        "to_arpa": lambda: model.to_arpa(target),
        "train_arpa": lambda: train_arpa(
            corpus,
            target,
            order=2,
            smoothing="witten_bell",
            memory="64M",
            progress=lambda *stage: stages.append(stage),
        ),
    }
    for name, call in calls.items():
        with pytest.raises(InvalidArgumentError) as raised:
            call()
        assert str(raised.value) == (
            f"{target}: fastppl cannot write {suffix} compression: name the output .gz, .xz or "
            ".bz2 to compress it, or without a compression extension for plain text"
        ), name
    assert stages == []
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("kind", ["a directory", "in a missing directory", "under a file"])
def test_train_arpa_checks_its_output_before_counting(tmp_path: Path, kind: str) -> None:
    """The error came when the ARPA file was opened, once every n-gram was counted (minutes on
    a large corpus): now before the first stage, and the same error."""
    from fastppl import Corpus
    from fastppl.training import train_arpa

    (tmp_path / "folder").mkdir()
    (tmp_path / "file").write_text("")
    target, error = {
        "a directory": (tmp_path / "folder", IsADirectoryError),
        "in a missing directory": (tmp_path / "missing" / "m.arpa", FileNotFoundError),
        "under a file": (tmp_path / "file" / "m.arpa", NotADirectoryError),
    }[kind]
    stages: list[tuple] = []
    with pytest.raises(error) as raised:
        train_arpa(
            Corpus.from_text(_corpus_text(200, 1), tokenizer="whitespace"),
            target,
            order=3,
            memory="64M",
            progress=lambda *stage: stages.append(stage),
        )
    assert raised.value.filename == str(target)
    assert stages == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "folder"]
    assert list((tmp_path / "folder").iterdir()) == []


def test_a_device_or_fifo_is_refused_not_replaced(tmp_path: Path) -> None:
    """A model written to a device or a named pipe is refused (the temporary file renamed over it
    would replace it: as root, /dev/null itself); the command line copies a finished model
    into such outputs instead."""
    import os
    import stat

    from fastppl import Corpus
    from fastppl.errors import InvalidArgumentError
    from fastppl.training import train_arpa

    corpus = Corpus.from_sentences([["a", "b"], ["b"]])
    model = NGramModel.fit(corpus, order=2, smoothing="witten_bell")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for target in (Path(os.devnull), fifo):
        calls = {
            "save": lambda t=target: model.save(t),
            "to_arpa": lambda t=target: model.to_arpa(t),
            "train_arpa": lambda t=target: train_arpa(
                corpus, t, order=2, smoothing="witten_bell", memory="64M"
            ),
        }
        for name, call in calls.items():
            with pytest.raises(InvalidArgumentError, match="is not a regular file"):
                call()
            assert not stat.S_ISREG(os.stat(target).st_mode), (name, target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]
