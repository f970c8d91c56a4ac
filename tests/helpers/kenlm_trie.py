"""Writes small KenLM binary tries (``build_binary trie`` layout, format version 5, little-endian)
from ARPA n-grams, so that the KenLM reader is tested on a fresh clone, on models of any order.

Written from the layout fastppl's reader documents (``rust/formats/kenlm/``), in plain Python; the
tests check each file with the ``kenlm`` module (an independent reader) when it is installed, so a
misreading shared by this writer and fastppl's reader cannot go unnoticed there.

>>> murmur_hash_64a(b"<unk>") == murmur_hash_64a(b"<unk>") != murmur_hash_64a(b"<UNK>")
True
"""

from __future__ import annotations

import bisect
import math
import struct

MASK = (1 << 64) - 1
MAGIC = b"mmap lm http://kheafield.com/code format version 5\n\0"
TRIE = 2


def murmur_hash_64a(data: bytes, seed: int = 0) -> int:
    """MurmurHash64A (Austin Appleby's public-domain hash), as KenLM hashes vocabulary words."""
    m, r = 0xC6A4A7935BD1E995, 47
    h = (seed ^ (len(data) * m)) & MASK
    whole = len(data) // 8 * 8
    for at in range(0, whole, 8):
        k = int.from_bytes(data[at : at + 8], "little")
        k = (k * m) & MASK
        k ^= k >> r
        k = (k * m) & MASK
        h ^= k
        h = (h * m) & MASK
    tail = data[whole:]
    if tail:
        h ^= int.from_bytes(tail, "little")
        h = (h * m) & MASK
    h ^= h >> r
    h = (h * m) & MASK
    h ^= h >> r
    return h


def _hash(word: str) -> int:
    return murmur_hash_64a(word.encode())


def _bits(max_value: int) -> int:
    return max_value.bit_length()


class _Records:
    """Fixed-width bit-packed records, least significant bit first."""

    def __init__(self, count: int, width: int) -> None:
        self.width = width
        self.value = 0
        self.length = ((1 + count) * width + 7) // 8 + 8

    def put(self, index: int, offset: int, bits: int, value: int) -> None:
        assert 0 <= value < (1 << bits)
        self.value |= value << (index * self.width + offset)

    def to_bytes(self) -> bytes:
        return self.value.to_bytes(self.length, "little")


def _f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


class _Quantizer:
    """Bins of equal population per order, centers their float32 means (the scheme of KenLM's
    ``quantize.cc``, written here from its description); a backoff table reserves bins 0 and 1
    for -0.0 and 0.0."""

    def __init__(self, values: list[float], bits: int, reserved: bool) -> None:
        n = (1 << bits) - (2 if reserved else 0)
        ordered = sorted(values)
        centers: list[float] = []
        for i in range(n):
            chunk = ordered[len(ordered) * i // n : len(ordered) * (i + 1) // n]
            previous = centers[-1] if centers else -math.inf
            centers.append(_f32(sum(chunk) / len(chunk)) if chunk else previous)
        self.reserved = 2 if reserved else 0
        self.centers = [-0.0, 0.0][: self.reserved] + centers

    def encode(self, value: float) -> int:
        """The bin of the nearest center (0.0 for a backoff of 0: "may be extended")."""
        if self.reserved and value == 0.0:
            return 1
        found = bisect.bisect_left(self.centers, value, lo=self.reserved)
        if found == self.reserved:
            return found
        if found == len(self.centers):
            return found - 1
        lower, upper = self.centers[found - 1], self.centers[found]
        return found - (value - lower < upper - value)

    def to_bytes(self) -> bytes:
        return struct.pack(f"<{len(self.centers)}f", *self.centers)


def _f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


def _array_shape(records: int, max_next: int, budget: int) -> tuple[int, int]:
    """(low bits chopped, array length) of array-compressed pointers, as rust/formats/kenlm
    documents KenLM's choice."""
    required = _bits(max_next)
    best = (0, None)
    for chop in range(min(required, budget) + 1):
        change = (max_next >> (required - chop)) * 64 - records * chop
        if best[1] is None or change < best[1]:
            best = (chop, change)
    return best[0], (max_next >> (required - best[0])) + 1


def write_trie(
    grams: dict[int, dict[tuple[str, ...], tuple[float, float | None]]],
    quantize: tuple[int, int] | None = None,
    array_bits: int | None = None,
) -> bytes:
    """The bytes of a trie holding ``grams`` (as ``helpers.arpa_text.read_arpa`` returns them:
    {order: {words: (log10 p, log10 backoff or None)}}, every n-gram's context and suffix among
    the n-grams, ``<unk>``, ``<s>`` and ``</s>`` among the unigrams); ``quantize=(P, B)`` as
    ``build_binary -q P -b B``, ``array_bits=A`` as ``-a A``. Zero backoffs are written as "may
    be extended" (+0.0), which is always correct."""
    order = max(grams)
    # KenLM's trie vocabulary: <unk> is 0, the other words in the order of their hashes
    words = sorted((w for (w,) in grams[1] if w != "<unk>"), key=lambda w: _hash(w))
    ids = {"<unk>": 0} | {w: i + 1 for i, w in enumerate(words)}
    counts = [len(grams[m]) for m in range(1, order + 1)]
    # each order's n-grams as id tuples, in trie order: by reversed words
    levels = {
        m: sorted((tuple(ids[w] for w in g) for g in grams[m]), key=lambda t: t[::-1])
        for m in grams
    }
    values = {m: {tuple(ids[w] for w in g): v for g, v in grams[m].items()} for m in grams}

    def first_children(m: int) -> list[int]:
        """For each record of order m (and one past the end), its first child in order m+1."""
        children = levels[m + 1]
        out, j = [], 0
        for g in levels[m] if m > 1 else [(k,) for k in range(counts[0])]:
            while j < len(children) and children[j][1:][::-1] < g[::-1]:
                j += 1
            out.append(j)
        return [*out, len(children)]

    model_type = TRIE + (1 if quantize else 0) + (2 if array_bits is not None else 0)
    header = bytearray(MAGIC + bytes(56 - len(MAGIC)))
    header += struct.pack("<fffIIIQ", 0.0, 1.0, -0.5, 1, 0xFFFFFFFF, 0, 1)
    header += struct.pack("<B3xfI?3xI", order, 1.5, model_type, True, 1)
    header += struct.pack(f"<{order}Q", *counts)
    header += bytes(-len(header) % 8)
    vocab = struct.pack("<Q", len(words)) + b"".join(struct.pack("<Q", _hash(w)) for w in words)
    vocab += bytes(8 + 8 * counts[0] - len(vocab))
    out = bytearray(header + vocab)
    tables: dict[int, tuple[_Quantizer, _Quantizer | None]] = {}
    if quantize:
        prob_bits, backoff_bits = quantize
        out += bytes([2, prob_bits, backoff_bits]) + bytes(5)
        for m in range(2, order + 1):
            probs = [p for p, _ in grams[m].values()]
            prob_table = _Quantizer(probs, prob_bits, reserved=False)
            backoff_table = None
            if m < order:
                backoffs = [b for _, b in grams[m].values() if b]
                backoff_table = _Quantizer(backoffs, backoff_bits, reserved=True)
            tables[m] = (prob_table, backoff_table)
            out += prob_table.to_bytes() + (backoff_table.to_bytes() if backoff_table else b"")
    nexts = first_children(1)
    for k in range(counts[0]):
        word = "<unk>" if k == 0 else words[k - 1]
        prob, backoff = grams[1][(word,)]
        out += struct.pack("<ffQ", prob, backoff or 0.0, nexts[k])
    out += struct.pack("<ffQ", 0.0, 0.0, nexts[-1]) + bytes(16)
    word_bits = _bits(counts[0])
    value_bits = {True: sum(quantize) if quantize else 63, False: quantize[0] if quantize else 31}
    for m in range(2, order + 1):
        middle = m < order
        next_bits, nexts = 0, []
        if middle:
            nexts = first_children(m)
            next_bits = _bits(counts[m])
            if array_bits is not None:
                # the block: version 0, the bit budget, then from the next multiple of 8 a u64
                # of padding and the first record of each value of the pointers' high bits
                chop, length = _array_shape(counts[m - 1] + 1, counts[m], array_bits)
                next_bits -= chop
                starts = [0] + [
                    next(i for i, n in enumerate(nexts) if n >> next_bits >= h)
                    for h in range(1, length)
                ]
                base = len(out)
                block = bytearray(8 * (1 + length) + 7)
                block[:2] = bytes([0, array_bits])
                first = -base % 8 + 8
                block[first : first + 8 * length] = struct.pack(f"<{length}Q", *starts)
                out += block
        width = word_bits + value_bits[middle] + next_bits
        records = _Records(counts[m - 1], width)
        for i, g in enumerate(levels[m]):
            prob, backoff = values[m][g]
            records.put(i, 0, word_bits, g[0])
            if quantize:
                prob_table, backoff_table = tables[m]
                at = word_bits
                if backoff_table is not None:
                    records.put(i, at, quantize[1], backoff_table.encode(backoff or 0.0))
                    at += quantize[1]
                records.put(i, at, quantize[0], prob_table.encode(prob))
            else:
                records.put(i, word_bits, 31, _f32_bits(prob) & 0x7FFFFFFF)
                if middle:
                    records.put(i, word_bits + 31, 32, _f32_bits(backoff or 0.0))
            if middle:
                records.put(i, word_bits + value_bits[True], next_bits, nexts[i] % (1 << next_bits))
        if middle:
            last = nexts[-1] % (1 << next_bits)
            records.put(counts[m - 1], word_bits + value_bits[True], next_bits, last)
        out += records.to_bytes()
    strings = b"".join(w.encode() + b"\0" for w in ["<unk>", *words])
    return bytes(out + strings)
