"""Effect sizes on the run-mean SD (docs/method.md §4b.8): the SD that decides the tests."""

from __future__ import annotations

import math

import numpy as np
import pytest

from infrepro.analyses.common.data import run_means
from infrepro.analyses.common.effects import effect_scale
from infrepro.analyses.common.fitlog import FitLog
from infrepro.stats.effects import effect_label
from infrepro.validation import calibration
from infrepro.validation.simulate import simulate


def test_d_divides_by_the_sd_of_a_runs_mean() -> None:
    """sqrt(run + residual / segments per run) of the REML fit: about the SD of the run means
    within a system (the segment variance, common to all runs, is not in it)."""
    design = calibration.two_systems((8, 8), (0.02, 0.02), n_segments=60)
    data = simulate(design, 3).metric_data(options=calibration.NO_RESAMPLING)
    scale = effect_scale(data, FitLog(data.metric))
    fitted = FitLog(data.metric).fit(scale.model, data.evaluation, reml=True, analysis="x")
    vc = fitted.variance_components
    assert scale.sd == pytest.approx(math.sqrt(vc["run_id"] + vc["Residual"] / 60), rel=1e-12)
    means = run_means(data)
    within = np.sqrt(np.mean(means.groupby("system")["mean"].var()))
    assert scale.sd == pytest.approx(within, rel=0.3)
    assert scale.sd < 0.2 * math.sqrt(vc.sum())  # far below the old, segment-dominated SD
    assert effect_label(scale.d(3 * scale.sd)) == "large"


def test_no_run_variance_no_d() -> None:
    design = calibration.two_systems((1, 1), (0.0, 0.0), n_segments=30)
    data = simulate(design, 1).metric_data(options=calibration.NO_RESAMPLING)
    scale = effect_scale(data, FitLog(data.metric))
    assert math.isnan(scale.sd) and effect_label(scale.d(0.02)) == "NA"
