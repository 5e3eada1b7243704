"""Effect sizes: a difference over the one SD every effect size of a metric divides by, and
Cohen's words for its size (docs/method.md §4b.8)."""

from __future__ import annotations

import math
from dataclasses import dataclass


def effect_label(d: float) -> str:
    """Cohen's conventions for |d|: negligible < 0.2 <= small < 0.5 <= medium < 0.8 <= large."""
    if math.isnan(d):
        return "NA"
    size = abs(d)
    if size < 0.2:
        return "negligible"
    if size < 0.5:
        return "small"
    if size < 0.8:
        return "medium"
    return "large"


def effect_size(difference: float, sigma: float) -> float:
    """Standardized difference: (mean_1 - mean_2) / the metric's effect scale (EffectScale)."""
    return difference / sigma if sigma > 0 else math.nan


@dataclass(frozen=True)
class EffectScale:
    """The one SD every effect size of a metric divides by, whatever model gave the difference:
    the SD of a run's mean score, sqrt(run + residual variance / segments per run), from a REML
    fit: the SD that decides the run-aware tests (docs/method.md §4b.8)."""

    sd: float
    model: str

    def d(self, difference: float) -> float:
        return effect_size(difference, self.sd)
