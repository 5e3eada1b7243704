"""The run-count rule (docs/method.md §4b.6, "Run counts"): Welch's exact level by quadrature,
checked against simulation, and the designs it admits."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from infrepro.stats.runcounts import holds_level, runs_to_hold, welch_level, worst_level


def _simulated_level(n_a: int, n_b: int, ratio: float, samples: int = 200_000) -> float:
    rng = np.random.default_rng(11)
    a = rng.normal(0.0, 1.0, (samples, n_a))
    b = rng.normal(0.0, np.sqrt(ratio), (samples, n_b))
    p = stats.ttest_ind(a, b, axis=1, equal_var=False).pvalue
    return float(np.mean(p < 0.05))


@pytest.mark.parametrize(("n_a", "n_b", "ratio"), [(10, 2, 1.0), (10, 2, 4.0), (5, 3, 0.25)])
def test_quadrature_equals_simulated_welch_level(n_a: int, n_b: int, ratio: float) -> None:
    exact = float(welch_level(n_a, n_b, np.array([ratio]), 0.05)[0])
    simulated = _simulated_level(n_a, n_b, ratio)
    assert abs(exact - simulated) < 4 * np.sqrt(exact * (1 - exact) / 200_000)


def test_equal_variances_and_equal_runs_are_near_the_level() -> None:
    # n_a = n_b, equal variances: Welch's t is slightly conservative (0.048 at 8 vs 8)
    assert float(welch_level(8, 8, np.array([1.0]), 0.05)[0]) == pytest.approx(0.048, abs=0.001)


def test_designs_admitted_and_refused() -> None:
    for admitted in [(2, 2), (3, 2), (3, 3), (5, 3), (10, 4), (50, 4), (6, 6)]:
        assert holds_level(*admitted, 0.05), admitted
    for refused in [(10, 2), (4, 2), (50, 2), (6, 3), (20, 3)]:
        assert not holds_level(*refused, 0.05), refused
    assert worst_level(2, 10, 0.05) == worst_level(10, 2, 0.05) > 0.10
    assert np.isnan(worst_level(1, 10, 0.05))


def test_runs_that_would_hold_the_level() -> None:
    assert runs_to_hold(10, 2, 0.05) == 4
    assert runs_to_hold(2, 10, 0.05) == 4
    assert runs_to_hold(3, 3, 0.05) == 3
    assert runs_to_hold(10, 2, 0.01) > 4  # a smaller alpha needs more runs
