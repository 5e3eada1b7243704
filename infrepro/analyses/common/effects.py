"""Effect sizes and the rows of ``means.csv`` and ``contrasts.csv``."""

from __future__ import annotations

import math
from dataclasses import dataclass

from infrepro.analyses.common.data import MetricData
from infrepro.analyses.common.fitlog import FitLog
from infrepro.core.registry import EFFECT_SCALE
from infrepro.core.vocabulary import RUN, SYSTEM, effect_scale_formula

RESIDUAL = "Residual"  # the residual's row of LmmResult.variance_components


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


def effect_scale(data: MetricData, log: FitLog) -> EffectScale:
    """Fit the effect-scale model once per metric; NaN when no system has two runs (no run
    variance, so no run-mean SD)."""
    rows = data.evaluation
    formula = effect_scale_formula(data.metric)
    if rows[RUN].nunique() <= rows[SYSTEM].nunique():  # one run per system: no run variance
        return EffectScale(math.nan, formula)
    fitted = log.fit(formula, rows, reml=True, analysis=EFFECT_SCALE)
    if fitted is None:
        return EffectScale(math.nan, formula)
    if not fitted.converged:  # docs/method.md §4.6.1: no scale from a fit without an optimum
        log.note(EFFECT_SCALE, "", f"{formula} did not converge: no effect sizes (d)")
        return EffectScale(math.nan, formula)
    components = fitted.reported_components  # boundary terms at exactly 0
    per_run = len(rows) / rows[RUN].nunique()  # mean segments per run
    var = float(components[RUN]) + float(components[RESIDUAL]) / per_run
    return EffectScale(math.sqrt(var), formula)
