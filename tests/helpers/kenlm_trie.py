"""Writes small KenLM binary tries (``build_binary trie`` layout, format version 5, little-endian)
from ARPA n-grams, so that the KenLM reader is tested on a fresh clone, on models of any order.

Written from the layout fastppl's reader documents (``rust/formats/kenlm/``), in plain Python; the
tests check each file with the ``kenlm`` module (an independent reader) when it is installed, so a
misreading shared by this writer and fastppl's reader cannot go unnoticed there.

>>> murmur_hash_64a(b"<unk>") == murmur_hash_64a(b"<unk>") != murmur_hash_64a(b"<UNK>")
True
"""

from __future__ import annotations

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


def write_trie(grams: dict[int, dict[tuple[str, ...], tuple[float, float | None]]]) -> bytes:
    """The bytes of a plain trie holding ``grams`` (as ``helpers.arpa_text.read_arpa`` returns
    them: {order: {words: (log10 p, log10 backoff or None)}}, every n-gram's context and suffix
    among the n-grams, ``<unk>``, ``<s>`` and ``</s>`` among the unigrams)."""
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

    header = bytearray(MAGIC + bytes(56 - len(MAGIC)))
    header += struct.pack("<fffIIIQ", 0.0, 1.0, -0.5, 1, 0xFFFFFFFF, 0, 1)
    header += struct.pack("<B3xfI?3xI", order, 1.5, TRIE, True, 1)
    header += struct.pack(f"<{order}Q", *counts)
    header += bytes(-len(header) % 8)
    vocab = struct.pack("<Q", len(words)) + b"".join(struct.pack("<Q", _hash(w)) for w in words)
    vocab += bytes(8 + 8 * counts[0] - len(vocab))
    unigrams = bytearray()
    nexts = first_children(1)
    for k in range(counts[0]):
        word = "<unk>" if k == 0 else words[k - 1]
        prob, backoff = grams[1][(word,)]
        unigrams += struct.pack("<ffQ", prob, backoff or 0.0, nexts[k])
    unigrams += struct.pack("<ffQ", 0.0, 0.0, nexts[-1]) + bytes(16)
    body = bytearray(unigrams)
    word_bits = _bits(counts[0])
    for m in range(2, order + 1):
        middle = m < order
        next_bits = _bits(counts[m]) if middle else 0
        records = _Records(counts[m - 1], word_bits + (63 if middle else 31) + next_bits)
        nexts = first_children(m) if middle else []
        for i, g in enumerate(levels[m]):
            prob, backoff = values[m][g]
            records.put(i, 0, word_bits, g[0])
            records.put(i, word_bits, 31, _f32_bits(prob) & 0x7FFFFFFF)
            if middle:
                records.put(i, word_bits + 31, 32, _f32_bits(backoff or 0.0))
                records.put(i, word_bits + 63, next_bits, nexts[i])
        if middle:
            records.put(counts[m - 1], word_bits + 63, next_bits, nexts[-1])
        body += records.to_bytes()
    strings = b"".join(w.encode() + b"\0" for w in ["<unk>", *words])
    return bytes(header + vocab + body + strings)
