"""Effect sizes and the rows of ``means.csv`` and ``contrasts.csv``."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from infrepro.registry import EFFECT_SCALE
from infrepro.vocabulary import RUN, RUN_TERM, SYSTEM, effect_scale_formula

from .data import MetricData
from .fitlog import FitLog


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
    sqrt(segment + run + residual variance) of a REML fit (docs/method.md §4b)."""

    sd: float
    model: str

    def d(self, difference: float) -> float:
        return effect_size(difference, self.sd)


def effect_scale(data: MetricData, log: FitLog) -> EffectScale:
    """Fit the effect-scale model once per metric (runs as a random intercept when estimable)."""
    rows = data.evaluation
    formula = effect_scale_formula(data.metric)
    if rows[RUN].nunique() <= rows[SYSTEM].nunique():  # one run per system: no run variance
        formula = formula.replace(f" + {RUN_TERM}", "")
    fitted = log.fit(formula, rows, reml=True, analysis=EFFECT_SCALE)
    if fitted is None:
        return EffectScale(math.nan, formula)
    return EffectScale(float(np.sqrt(fitted.variance_components.sum())), formula)
