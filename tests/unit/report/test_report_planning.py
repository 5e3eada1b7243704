"""The Next-experiment cards (docs/method.md §4d.1): the decision's power at the smallest effect
of interest from its record, then the runs needed from planning.csv's rows at that effect."""

from __future__ import annotations

import dataclasses
import math

import pandas as pd
from decision_records import record

from infrepro.core.decisions import PairDecision
from infrepro.report.sections.planning import _needed_lines, _record_line


def _rows(current: tuple[int, int]) -> pd.DataFrame:
    base = {"effect_source": "min_effect", "improvement_points": 2.0, "alpha": 0.05, "mc_se": 0.01}
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
    observed = frame.assign(effect_source="observed (post hoc)", improvement_points=-3.1)
    return pd.concat([frame, observed], ignore_index=True)


def test_runs_needed_come_from_the_smallest_effect_of_interest() -> None:
    lines = _needed_lines(_rows((10, 4)))
    assert lines[0].startswith("80% power: 4 runs per system (power 0.81)")
    assert not any("3.1" in line for line in lines)  # the observed (post hoc) rows are not read


def _record(**changes) -> PairDecision:
    base = dict(family_size=2, df=18.9, p_adjusted="0.03", log10_p_adjusted=-1.5, power=0.23)
    return record(**{**base, "survival": "", "facet_aware_p": "", **changes})


def test_the_cards_power_is_the_records() -> None:
    line = _record_line(_record())
    assert "an improvement of 2.00 points" in line and "a power of 0.23" in line
    assert "max-t over 2 comparisons with the baseline" in line and "not enough" in line
    none = _record_line(dataclasses.replace(_record(), min_effect=math.nan, power=math.nan))
    assert "analyses.planning.min_effect" in none and "post hoc" in none
