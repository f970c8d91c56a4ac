"""Document perplexity for data filtering: the ``kenlm`` module + ``sentencepiece`` + a Python
normalizer loop (CCNet's ``DocLM``) vs ``fastppl.documents.perplexity``, same inputs.

    python benches/bench_documents.py [--mb 100] [--repeat 3] [--json out.json]
    python benches/bench_documents.py --quick        # ~1 MB of the bundled corpus, seconds

Documents: the Project Gutenberg shards of ``../shared/corpora/gutenberg`` (the bundled Machado
corpus, repeated, when they are absent), paragraphs as lines (wrapped lines joined), each book
cut into documents of ``--paragraphs`` paragraphs, until ``--mb`` MB of UTF-8. A SentencePiece
model is trained on a sample of them, then a modified Kneser-Ney model (``--order``) with fastppl
on the normalized, SentencePiece-cut sample (with lmplz's ``--discount_fallback``: a piece
vocabulary has few rare pieces), written as ARPA; both sides load that ARPA file and
the SentencePiece model before the clock starts. Each side scores every document
(``reference.ccnet_document_perplexities``, the CCNet loop, vs ``documents.perplexity``); the
medians of ``--repeat`` runs are reported with their ratio. ``whole_lines=True`` (CCNet's
pieces exactly) is run once beside them; its numbers must agree to float32 precision, those of
the default (each distinct word cut once) too except where a near-tie broke the other way
(counted, and within 1%).
"""

from __future__ import annotations

import argparse
import json
import lzma
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

import fastppl.kenlm
from fastppl import Corpus, NGramModel, datasets, documents, reference

ROOT = Path(__file__).resolve().parents[1]
GUTENBERG = sorted((ROOT.parent / "shared" / "corpora" / "gutenberg").glob("gutenberg-*.txt.xz"))
#: kenlm sums each line in float32: document perplexities agree to this relative tolerance
AGREEMENT_RTOL = 1e-4
#: ... and word by word (the default), a near-tie of two cuts of a word that SentencePiece
#: broke the other way in a long line moves a document's perplexity by this much at most
WORD_CUT_RTOL = 1e-2


def paragraphs(text: str) -> Iterator[str]:
    """The paragraphs of `text` (blocks between blank lines), wrapped lines joined by spaces."""
    for block in text.split("\n\n"):
        paragraph = " ".join(line.strip() for line in block.split("\n") if line.strip())
        if paragraph:
            yield paragraph


def book_texts(quick: bool) -> Iterator[str]:
    """Whole texts to cut into documents: the Gutenberg shards, else the bundled corpus (again
    and again; one pass in quick mode)."""
    if GUTENBERG and not quick:
        for shard in GUTENBERG:
            with lzma.open(shard, "rt", encoding="utf-8") as f:
                yield f.read()
        return
    machado = datasets.machado()
    while True:
        with lzma.open(machado, "rt", encoding="utf-8") as f:
            yield "\n\n".join(
                line for line in f.read().split("\n") if not line.startswith(("#", "%"))
            )
        if quick:
            return


def build_documents(megabytes: float, per_document: int, quick: bool) -> list[str]:
    """Documents of `per_document` paragraphs, one per line, until `megabytes` MB of UTF-8."""
    target = megabytes * 1e6
    docs: list[str] = []
    size = 0
    for text in book_texts(quick):
        paras = list(paragraphs(text))
        for i in range(0, len(paras), per_document):
            doc = "\n".join(paras[i : i + per_document])
            docs.append(doc)
            size += len(doc.encode("utf-8"))
            if size >= target:
                return docs
    return docs


def train_models(
    docs: list[str], folder: Path, vocab_size: int, order: int, sample_mb: float
) -> tuple[Path, Path]:
    """A SentencePiece model and an ARPA model of its pieces, both trained on every k-th
    document up to `sample_mb` MB of text."""
    import sentencepiece

    total = sum(map(len, docs))
    step = max(1, round(total / (sample_mb * 1e6)))
    sample = [documents.normalize(line) for doc in docs[::step] for line in doc.split("\n")]
    train = folder / "sample.txt"
    train.write_text("\n".join(sample), encoding="utf-8")
    sentencepiece.SentencePieceTrainer.train(
        input=str(train),
        model_prefix=str(folder / "sp"),
        vocab_size=vocab_size,
        input_sentence_size=200_000,
        shuffle_input_sentence=True,
        minloglevel=2,
    )
    sp = sentencepiece.SentencePieceProcessor(model_file=str(folder / "sp.model"))
    pieces = [" ".join(p) for p in sp.encode(sample, out_type=str)]
    corpus = Corpus.from_texts(["\n".join(pieces)], tokenizer="kenlm")
    arpa = folder / "pieces.arpa"
    # a SentencePiece vocabulary has few rare pieces: the unigram discounts can be out of
    # range, as lmplz users meet them (lmplz --discount_fallback)
    model = NGramModel.fit(
        corpus, order=order, smoothing="modified_kneser_ney", discount_fallback=True
    )
    model.to_arpa(arpa)
    return folder / "sp.model", arpa


def median_seconds(run: Callable[[], object], repeat: int) -> tuple[float, list[float], object]:
    """Median wall seconds of `repeat` calls of `run`, every time, and the last result."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    return statistics.median(times), times, result


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=100.0, help="MB of documents (default 100)")
    parser.add_argument("--paragraphs", type=int, default=40, help="paragraphs per document")
    parser.add_argument("--order", type=int, default=5, help="model order (default 5)")
    parser.add_argument("--vocab-size", type=int, default=8000, help="SentencePiece pieces")
    parser.add_argument("--sample-mb", type=float, default=10.0, help="MB to train on")
    parser.add_argument("--repeat", type=int, default=3, help="runs per side (median)")
    parser.add_argument("--quick", action="store_true", help="~1 MB of the bundled corpus")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    if args.quick:
        args.mb, args.order, args.vocab_size, args.sample_mb = 1.0, 3, 300, 0.5
    import kenlm
    import sentencepiece

    docs = build_documents(args.mb, args.paragraphs, args.quick)
    with tempfile.TemporaryDirectory() as tmp:
        sp_path, arpa = train_models(docs, Path(tmp), args.vocab_size, args.order, args.sample_mb)
        sp = sentencepiece.SentencePieceProcessor(model_file=str(sp_path))
        theirs = kenlm.Model(str(arpa))
        ours = fastppl.kenlm.Model(arpa)
        kenlm_s, kenlm_runs, expected = median_seconds(
            lambda: reference.ccnet_document_perplexities(theirs, docs, sp=sp), args.repeat
        )
        fastppl_s, fastppl_runs, got = median_seconds(
            lambda: documents.perplexity(ours, docs, sp_model=sp), args.repeat
        )
        whole_s, _, whole = median_seconds(
            lambda: documents.perplexity(ours, docs, sp_model=sp, whole_lines=True), 1
        )
    expected = np.asarray(expected)
    # whole lines: CCNet's pieces exactly
    np.testing.assert_allclose(whole, expected, rtol=AGREEMENT_RTOL)
    # word by word: the same but where a near-tie of two cuts of a word broke the other way
    apart = np.abs(got / expected - 1) > AGREEMENT_RTOL
    np.testing.assert_allclose(got, expected, rtol=WORD_CUT_RTOL)
    figures = {
        "documents": len(docs),
        "lines": sum(doc.count("\n") + 1 for doc in docs),
        "megabytes": sum(len(doc.encode("utf-8")) for doc in docs) / 1e6,
        "source": "bundled Machado" if args.quick or not GUTENBERG else "Gutenberg shards",
        "order": args.order,
        "sentencepiece_pieces": args.vocab_size,
        "kenlm_seconds": kenlm_s,
        "kenlm_runs": kenlm_runs,
        "fastppl_seconds": fastppl_s,
        "fastppl_runs": fastppl_runs,
        "speedup": kenlm_s / fastppl_s,
        "max_relative_difference": float(np.max(np.abs(got / expected - 1))),
        "documents_apart": int(apart.sum()),
        "whole_lines_seconds": whole_s,
        "whole_lines_speedup": kenlm_s / whole_s,
        "whole_lines_max_relative_difference": float(np.max(np.abs(whole / expected - 1))),
    }
    print(
        f"{figures['megabytes']:.1f} MB, {len(docs)} documents, {figures['lines']} lines "
        f"({figures['source']}); order {args.order}, {args.vocab_size} pieces\n"
        f"kenlm + sentencepiece + Python normalizer loop: {kenlm_s:.2f} s (median of "
        f"{args.repeat})\nfastppl.documents.perplexity: {fastppl_s:.2f} s\n"
        f"speedup: {figures['speedup']:.2f}x; largest relative difference "
        f"{figures['max_relative_difference']:.1e} ({figures['documents_apart']} documents "
        f"beyond {AGREEMENT_RTOL:g})\nwhole_lines=True (CCNet's pieces exactly): {whole_s:.2f} s "
        f"(one run), {figures['whole_lines_speedup']:.2f}x; largest relative difference "
        f"{figures['whole_lines_max_relative_difference']:.1e}"
    )
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return figures


if __name__ == "__main__":
    main(sys.argv[1:])
