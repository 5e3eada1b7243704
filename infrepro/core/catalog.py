"""The metrics infrepro computes and the direction in which each is better (docs/method.md §2),
and the scales a scores file's metric may be on.

A dependency-free module, so that config validation can read it without importing the scorers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

KNOWN_METRICS: tuple[str, ...] = ("ter", "rouge1", "rouge2", "rougeL", "rougeLsum", "bleu", "chrf")

BETTER: dict[str, str] = {
    "ter": "lower",
    "rouge1": "higher",
    "rouge2": "higher",
    "rougeL": "higher",
    "rougeLsum": "higher",
    "bleu": "higher",
    "chrf": "higher",
}

# -- the scale of a scores file's metric (scores mode's `scale` option) -------------------------
# fraction: 0-1 as infrepro's own metrics, stored as given; points: 0-100, stored / 100; raw: a
# bounded scale such as 1-5 ratings, stored / 100 like points, so that every table's score column
# holds the stored value and the report, which shows stored values x 100, shows the scores as
# given (docs/reference.md, `scale`).
FRACTION, POINTS, RAW = "fraction", "points", "raw"
GIVEN_PER_STORED = {FRACTION: 1.0, POINTS: 100.0, RAW: 100.0}


@dataclass(frozen=True)
class Scale:
    """A metric's declared scale; ``low`` and ``high`` bound a raw scale."""

    name: str = FRACTION
    low: float | None = None
    high: float | None = None

    @classmethod
    def from_config(cls, value: object) -> Scale:
        """``fraction``, ``points`` or ``{raw: [low, high]}`` as the schema allows them."""
        if isinstance(value, Mapping):
            low, high = value[RAW]
            return cls(RAW, float(low), float(high))
        return cls(str(value))

    @property
    def given_per_stored(self) -> float:
        """A score as given is the score the tables hold times this (stored = given / it)."""
        return GIVEN_PER_STORED[self.name]

    @property
    def unit(self) -> str:
        """The report's unit word: ``points`` (fractions and points are shown as points), none
        for a raw scale (shown as given)."""
        return "" if self.name == RAW else POINTS

    def __str__(self) -> str:
        return f"{{raw: [{self.low:g}, {self.high:g}]}}" if self.name == RAW else self.name
