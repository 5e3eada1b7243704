"""The Next-experiment section's sentences (docs/method.md §4d.1) from planning.csv rows."""

from __future__ import annotations

import math

import pandas as pd

from infrepro.report.sections.planning import _power_lines


def _rows(current: tuple[int, int]) -> pd.DataFrame:
    base = {"effect_source": "observed", "effect_points": 3.2, "alpha": 0.05, "mc_se": 0.01}
    rows = [
        {**base, "design": "current", "target": math.nan, "power": 0.93},
        {**base, "design": "needed", "target": 0.8, "power": 0.81},
        {**base, "design": "cheapest", "target": 0.8, "power": 0.82},
        {**base, "design": "needed", "target": 0.9, "power": 0.91},
        {**base, "design": "cheapest", "target": 0.9, "power": 0.92},
        {**base, "design": "equal", "target": math.nan, "power": 0.5},
    ]
    frame = pd.DataFrame(rows)
    frame["runs_baseline"] = [current[0], 4, 4, 5, 5, 2]
    frame["runs_competitor"] = [current[1], 4, 3, 5, 4, 2]
    return frame


def test_current_design_with_too_few_runs_claims_nothing_whatever_its_power() -> None:
    line = _power_lines(_rows((10, 2)), "observed")[0]
    assert "cannot hold" in line and "names no winner" in line
    assert "4 runs of the system with fewer would" in line
    assert "power of" not in line


def test_current_design_that_holds_the_level_states_its_power() -> None:
    line = _power_lines(_rows((10, 4)), "observed")[0]
    assert "power of 0.93" in line and "enough for 80 %" in line
