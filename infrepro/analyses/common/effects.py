"""The effect scale of a metric: the SD of a run's mean score, from one REML fit (§4b.8)."""

from __future__ import annotations

import math

from infrepro.analyses.common.data import MetricData
from infrepro.analyses.common.fitlog import FitLog
from infrepro.core.registry import EFFECT_SCALE
from infrepro.core.vocabulary import RUN, SYSTEM, effect_scale_formula
from infrepro.stats.effects import EffectScale

RESIDUAL = "Residual"  # the residual's row of LmmResult.variance_components


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
