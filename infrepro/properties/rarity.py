"""Word rarity: mean (or sum) over a segment's tokens of -log p(w).

p(w) = (c(w) + 1) / (N + V + 1): add-one smoothed relative frequency in a frequency corpus of N
lower-cased whitespace tokens and V distinct words; the extra 1 in the denominator is the unseen
word type. Higher means rarer. A segment without tokens has rarity NaN (mean) or 0 (sum).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from infrepro.io.errors import InputError
from infrepro.io.text import decode_utf8, require_file, split_lines


def tokens(text: str) -> list[str]:
    """Lower-cased whitespace tokens, the unit of the rarity measure."""
    return text.lower().split()


@dataclass(frozen=True)
class FrequencyTable:
    """Word counts of a frequency corpus."""

    counts: Counter[str]

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def neg_log_prob(self) -> dict[str, float]:
        """-log p(w) for every seen word; see :meth:`unseen` for the rest."""
        denominator = self.total + len(self.counts) + 1
        return {w: -math.log((c + 1) / denominator) for w, c in self.counts.items()}

    def unseen(self) -> float:
        """-log p(w) of a word the corpus never saw."""
        return -math.log(1 / (self.total + len(self.counts) + 1))

    @classmethod
    def from_texts(cls, texts: Iterable[str]) -> FrequencyTable:
        counts: Counter[str] = Counter()
        for text in texts:
            counts.update(tokens(text))
        return cls(counts)

    @classmethod
    def from_file(cls, path: str | Path) -> FrequencyTable:
        """A text corpus (one text per line) or, for ``.tsv`` files, ``word<TAB>count`` lines."""
        file = Path(path)
        require_file(file, "rarity frequency corpus")
        lines = split_lines(decode_utf8(file.read_bytes(), file))
        if file.suffix != ".tsv":
            return cls.from_texts(lines)
        counts: Counter[str] = Counter()
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            fields = line.split("\t")
            if len(fields) != 2:
                raise InputError(file, "expected 'word<TAB>count'", line=number)
            try:
                count = int(fields[1])
            except ValueError:
                problem = f"count '{fields[1]}' is not an integer"
                raise InputError(file, problem, line=number) from None
            if count < 0:
                raise InputError(file, "count is negative", line=number)
            counts[fields[0].lower()] += count
        return cls(counts)


def word_rarity(texts: Sequence[str], table: FrequencyTable) -> tuple[np.ndarray, np.ndarray]:
    """Mean and sum of -log p(w) over each text's tokens."""
    surprisal = table.neg_log_prob()
    unseen = table.unseen()
    means = np.empty(len(texts), dtype="float64")
    sums = np.empty(len(texts), dtype="float64")
    for i, text in enumerate(texts):
        values = [surprisal.get(token, unseen) for token in tokens(text)]
        sums[i] = math.fsum(values)
        means[i] = sums[i] / len(values) if values else math.nan
    return means, sums
