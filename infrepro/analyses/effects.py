"""Effect sizes and the rows of ``means.csv`` and ``contrasts.csv``."""

from __future__ import annotations

import math

MEANS_COLUMNS = [
    "metric",
    "analysis",
    "subset",
    "property",
    "bin",
    "group",
    "kind",
    "x",
    "estimate",
    "se",
    "n_obs",
]
CONTRAST_COLUMNS = [
    "metric",
    "analysis",
    "subset",
    "property",
    "bin",
    "level1",
    "level2",
    "estimate",
    "se",
    "p_value",
    "p_holm",
    "log10_p",
    "log10_p_holm",
    "p_method",
    "effect_size",
    "effect_label",
]


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
    """Standardized difference (mean_1 - mean_2) / residual SD of the H1 fit (docs/method.md §4)."""
    return difference / sigma if sigma > 0 else math.nan
