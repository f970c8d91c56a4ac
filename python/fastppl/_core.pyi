"""Type stubs of the compiled core (``fastppl._core``); checked against it by stubtest."""

import os
from collections.abc import Callable, Iterable, Sequence
from typing import Literal, TypeAlias, final

import numpy as np
import numpy.typing as npt

__all__ = [
    "ARPA_SMOOTHINGS",
    "BINARY_MAGIC",
    "KENLM_MAGIC",
    "MAX_ORDER",
    "MIN_MEMORY",
    "SMOOTHINGS",
    "ContextScorer",
    "Corpus",
    "NGramModel",
    "PunktModel",
    "Scores",
    "__version__",
    "canonical_binary",
    "check_output",
    "count_ngrams",
    "distributed_adjust",
    "distributed_assemble",
    "distributed_check",
    "distributed_count",
    "distributed_interpolate",
    "distributed_merge_vocab",
    "distributed_shard_vocab",
    "distributed_stupid_backoff",
    "logits_target_logprobs",
    "nltk_word_tokenize",
    "read_compression",
    "train_arpa",
    "unread_compression",
]

#: Called every ~20 ms during a long call: ``progress(stage, done, total)`` (total 0: unknown).
_ProgressCallback: TypeAlias = Callable[[str, int, int], object]

__version__: str
MAX_ORDER: int
MIN_MEMORY: int
BINARY_MAGIC: bytes
KENLM_MAGIC: bytes
SMOOTHINGS: dict[str, dict[str, float | bool]]
ARPA_SMOOTHINGS: list[str]

@final
class Corpus:
    def __new__(cls) -> Corpus: ...
    def add_sentences(self, sentences: Iterable[Iterable[str]]) -> None: ...
    def add_whitespace_text(self, text: str, mode: str) -> None: ...
    def add_kenlm_text(self, text: str) -> None: ...
    def add_nltk_text(
        self,
        text: str,
        punkt: PunktModel | None,
        sentences: str,
        words: str = "nltk",
        progress: _ProgressCallback | None = None,
    ) -> None: ...
    def add_nltk_bytes(
        self,
        data: bytes,
        punkt: PunktModel | None,
        sentences: str,
        words: str = "nltk",
        skip_line_prefixes: list[str] = ...,
        lowercase: bool = False,
        progress: _ProgressCallback | None = None,
    ) -> bool: ...
    def add_line_bytes(
        self,
        data: bytes,
        reader: str,
        translate_newlines: bool,
        skip_line_prefixes: list[str] = ...,
        lowercase: bool = False,
    ) -> bool: ...
    def limit_vocab(
        self, min_count: int = 1, vocab: list[str] | None = None, vocab_text: str | None = None
    ) -> Corpus: ...
    def expand(
        self,
        pieces: Sequence[Sequence[str]],
        whole: Sequence[tuple[int, Sequence[str]]] = ...,
    ) -> Corpus: ...
    def sentences_with(self, flagged: Sequence[bool]) -> list[int]: ...
    def vocab(self) -> list[str]: ...
    def end_document(self) -> None: ...
    def finish(self) -> None: ...
    @property
    def num_tokens(self) -> int: ...
    @property
    def num_sentences(self) -> int: ...
    @property
    def num_types(self) -> int: ...
    def document_offsets(self) -> npt.NDArray[np.uint64]: ...
    def sentence_lengths(self) -> npt.NDArray[np.uint64]: ...
    def sentences(self, start: int, stop: int) -> list[list[str]]: ...
    def token_counts(self) -> dict[str, int]: ...

@final
class PunktModel:
    def __new__(cls, path: str | os.PathLike[str]) -> PunktModel: ...
    def sent_tokenize(self, text: str) -> list[str]: ...

def nltk_word_tokenize(
    text: str,
    punkt: PunktModel | None = None,
    progress: _ProgressCallback | None = None,
    words: str = "nltk",
) -> list[str]: ...
def logits_target_logprobs(
    logits: npt.NDArray[np.float32] | npt.NDArray[np.float64] | npt.NDArray[np.uint16],
    targets: npt.NDArray[np.int64],
    half_format: str | None = None,
) -> npt.NDArray[np.float64]: ...
def count_ngrams(
    corpus: Corpus, order: int, bos_eos: bool = True, progress: _ProgressCallback | None = None
) -> list[int]: ...
def check_output(path: str | os.PathLike[str], arpa: bool) -> None: ...
def read_compression(head: bytes) -> str | None: ...
def unread_compression(head: bytes) -> tuple[str, str] | None: ...
def train_arpa(
    corpus: Corpus,
    path: str | os.PathLike[str],
    order: int,
    smoothing: str,
    memory: int,
    temp_dir: str | os.PathLike[str],
    k: float | None = None,
    discount: float | None = None,
    alpha: float | None = None,
    discount_fallback: bool = False,
    prune: list[int] = ...,
    progress: _ProgressCallback | None = None,
) -> tuple[list[int], int, int]: ...
def distributed_check(
    order: int,
    smoothing: str,
    k: float | None = None,
    discount: float | None = None,
    alpha: float | None = None,
    discount_fallback: bool = False,
    prune: list[int] = ...,
) -> None: ...
def distributed_shard_vocab(corpus: Corpus, job: str | os.PathLike[str], shard: int) -> None: ...
def distributed_merge_vocab(job: str | os.PathLike[str], shards: int) -> int: ...
def distributed_count(
    corpus: Corpus,
    job: str | os.PathLike[str],
    shard: int,
    order: int,
    partitions: int,
    memory: int,
) -> None: ...
def distributed_adjust(
    job: str | os.PathLike[str],
    partition: int,
    shards: int,
    order: int,
    smoothing: str,
    memory: int,
    k: float | None = None,
    discount: float | None = None,
    alpha: float | None = None,
    discount_fallback: bool = False,
    prune: list[int] = ...,
) -> tuple[list[list[int]], list[int]]: ...
def distributed_interpolate(
    stage: Literal["context", "join", "write"],
    job: str | os.PathLike[str],
    partitions: int,
    index: int,
    order: int,
    smoothing: str,
    count_of_counts: list[list[int]],
    ngram_counts: list[int],
    memory: int,
    k: float | None = None,
    discount: float | None = None,
    alpha: float | None = None,
    discount_fallback: bool = False,
    prune: list[int] = ...,
) -> None: ...
def distributed_assemble(
    job: str | os.PathLike[str],
    partitions: int,
    ngram_counts: list[int],
    path: str | os.PathLike[str],
) -> list[int]: ...
def distributed_stupid_backoff(
    job: str | os.PathLike[str],
    partitions: int,
    ngram_counts: list[int],
    memory: int,
    path: str | os.PathLike[str],
    order: int,
    smoothing: str,
    k: float | None = None,
    discount: float | None = None,
    alpha: float | None = None,
    discount_fallback: bool = False,
    prune: list[int] = ...,
) -> list[int]: ...
def canonical_binary(source: str | os.PathLike[str], target: str | os.PathLike[str]) -> None: ...

@final
class NGramModel:
    @staticmethod
    def fit(
        corpus: Corpus,
        order: int,
        smoothing: str,
        bos_eos: bool = True,
        k: float | None = None,
        discount: float | None = None,
        alpha: float | None = None,
        discount_fallback: bool = False,
        prune: list[int] = ...,
        progress: _ProgressCallback | None = None,
    ) -> NGramModel: ...
    @staticmethod
    def from_arpa(
        path: str | os.PathLike[str], progress: _ProgressCallback | None = None
    ) -> NGramModel: ...
    @staticmethod
    def from_kenlm_binary(
        path: str | os.PathLike[str], progress: _ProgressCallback | None = None
    ) -> NGramModel: ...
    def to_arpa(
        self, path: str | os.PathLike[str], progress: _ProgressCallback | None = None
    ) -> None: ...
    def save(
        self, path: str | os.PathLike[str], progress: _ProgressCallback | None = None
    ) -> None: ...
    @staticmethod
    def load(
        path: str | os.PathLike[str],
        verify: bool = True,
        mmap: bool = True,
        progress: _ProgressCallback | None = None,
    ) -> NGramModel: ...
    @property
    def order(self) -> int: ...
    @property
    def vocab_size(self) -> int: ...
    @property
    def bos_eos(self) -> bool: ...
    @property
    def smoothing(self) -> str: ...
    @property
    def normalized(self) -> bool: ...
    @property
    def discounts(self) -> list[tuple[float, float, float]]: ...
    @property
    def ngram_counts(self) -> list[int]: ...
    def vocab(self) -> list[str]: ...
    def contains(self, word: str) -> bool: ...
    def logprob(self, word: str, context: Sequence[str]) -> float: ...
    def logprobs(self, tokens: Sequence[str]) -> npt.NDArray[np.float64]: ...
    def full_scores(
        self, tokens: Sequence[str], bos: bool = True, eos: bool = True
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.uint32], npt.NDArray[np.bool_]]: ...
    def kenlm_score(
        self, text: str, bos: bool = True, eos: bool = True
    ) -> tuple[float, int] | None: ...
    def kenlm_full_scores(
        self, text: str, bos: bool = True, eos: bool = True
    ) -> list[tuple[float, int, bool]] | None: ...
    def count(self, ngram: Sequence[str]) -> int: ...
    def evaluate(
        self,
        corpus: Corpus,
        oov: str = "unk",
        token_logprobs: bool = False,
        progress: _ProgressCallback | None = None,
    ) -> Scores: ...
    def evaluate_texts(
        self,
        texts: list[str],
        tokenizer: str,
        sentences: str,
        punkt: PunktModel | None = None,
        skip_line_prefixes: list[str] = ...,
        lowercase: bool = False,
        oov: str = "unk",
    ) -> Scores: ...

@final
class Scores:
    """An evaluation's per-sentence scores and its documents' sentence offsets, kept in Rust."""

    def totals(self, skip_oov: bool) -> tuple[float, int, int, int]: ...
    def arrays(
        self, skip_oov: bool
    ) -> dict[str, npt.NDArray[np.float64] | npt.NDArray[np.int64]]: ...

@final
class ContextScorer:
    """One word at a time after a context of model ids (fastppl.kenlm's State API)."""

    def __new__(cls, model: NGramModel) -> ContextScorer: ...
    def sentence_start(self) -> list[int]: ...
    def score_word(
        self, context: Sequence[int], word: str
    ) -> tuple[float, int, bool, tuple[int, ...]]: ...
