"""Scores of (hypothesis, references) pairs remembered per process, across calls.

A workflow worker process scores run after run against one test set, and the runs of a system
often produce the same output for a segment (seeds of an MT system on short sentences, say): a
pair scored for one run is looked up for the next instead of scored again. A key is the 16-byte
BLAKE2b digest of the pair (length-prefixed UTF-8 strings); one table per metric. The scorers
are bit-identical whichever path computes a pair, so a remembered score is the score.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence

import numpy as np

# remembered pairs per metric before the memo starts afresh (about 100 bytes each)
MEMO_PAIRS = 2_000_000


def digest(hypothesis: str, references: Sequence[str]) -> bytes:
    """The pair's key: BLAKE2b-128 of each string's UTF-8 bytes, each prefixed by its length."""
    h = hashlib.blake2b(digest_size=16)
    for text in (hypothesis, *references):
        data = text.encode("utf-8", "surrogatepass")
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.digest()


class PairMemo:
    """metric -> {pair key: score}, shared by the calls of one process (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._scores: dict[str, dict[bytes, float]] = {}

    def clear(self) -> None:
        with self._lock:
            self._scores = {}

    def lookup(self, keys: Sequence[bytes], metrics: Sequence[str]) -> dict[str, np.ndarray]:
        """Per metric, the remembered score of each key (NaN where none), and under "" whether
        every metric of the key is remembered."""
        out: dict[str, np.ndarray] = {}
        known = np.ones(len(keys), dtype=bool)
        with self._lock:
            for m in metrics:
                table = self._scores.get(m, {})
                values = np.fromiter(
                    (table.get(k, np.nan) for k in keys), dtype=np.float64, count=len(keys)
                )
                known &= np.fromiter((k in table for k in keys), dtype=bool, count=len(keys))
                out[m] = values
        out[""] = known
        return out

    def store(self, keys: Sequence[bytes], scores: dict[str, np.ndarray]) -> None:
        """Remember each key's scores (starting afresh past MEMO_PAIRS pairs of a metric)."""
        with self._lock:
            for m, values in scores.items():
                table = self._scores.setdefault(m, {})
                if len(table) + len(keys) > MEMO_PAIRS:
                    table.clear()
                table.update(zip(keys, values.tolist(), strict=True))


PAIRS = PairMemo()
