"""The Next-experiment cards (docs/method.md §4d.1): the decision's power at the smallest effect
of interest from its record, then the runs needed from planning.csv's rows at that effect."""

from __future__ import annotations

import dataclasses
import math

import pandas as pd
from decision_records import record

from infrepro.core.decisions import PairDecision
from infrepro.core.vocabulary import REPORT_TABLES, columns
from infrepro.report import ReportSettings, build_context, render
from infrepro.report.assets import TEMPLATE_DIR
from infrepro.report.sections.planning import _needed_lines, _record_line, build


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
    assert none == ""  # said once for the section, not on every card


METRICS = ("ter", "rouge1", "rougeL")


def _tables(min_effect: float) -> dict[str, pd.DataFrame]:
    """A decision of bl vs comp in three metrics, the budget on the dev scores they share."""
    tables = {name: pd.DataFrame() for name in REPORT_TABLES}
    power = math.nan if math.isnan(min_effect) else 0.3
    records = [
        _record(metric=m, min_effect=min_effect, power=power + i / 10).row()
        for i, m in enumerate(METRICS)
    ]
    tables["decisions"] = pd.DataFrame(records, columns=columns("decisions"))
    budget = {c: math.nan for c in columns("budget")}
    tables["budget"] = pd.DataFrame(
        [
            {**budget, "metric": m, "system": "comp", "source": "dev_score", "budget": 1}
            | {"crossing_budget": "3"}
            for m in METRICS
        ],
        columns=columns("budget"),
    )
    return tables


def _settings(min_effect: float | None) -> ReportSettings:
    return ReportSettings(
        name="toy",
        baseline="bl",
        systems=["bl", "comp"],
        metrics=list(METRICS),
        better={"ter": "lower", "rouge1": "higher", "rougeL": "higher"},
        config={"analyses": {"planning": {"min_effect": min_effect}}},
    )


def test_without_a_minimum_effect_the_section_says_once_how_to_set_it() -> None:
    """Every card said the same sentence (56 of 56 cards in one experiment); the budget on dev
    scores, the same for every metric, made one card per metric saying the same."""
    section = build(_tables(math.nan), _settings(None))
    assert section.unset
    assert [box.title for box in section.boxes] == ["TER, ROUGE-1, ROUGE-L: bl vs comp"]
    assert [len(box.lines) for box in section.boxes] == [1]
    assert section.boxes[0].lines[0].startswith("Budget (dev scores)")
    html = render(build_context(_tables(math.nan), _settings(None)), TEMPLATE_DIR)
    planning = html.split('<section id="next">', 1)[1].split("</section>", 1)[0]
    assert planning.count("No smallest effect of interest is declared") == 1
    assert "<code>analyses: {planning: {min_effect: 2.0}}</code>" in planning
    assert planning.count('class="card next-box"') == 1
    assert "No planning was computed" not in planning


def test_with_a_minimum_effect_every_metric_has_its_card() -> None:
    section = build(_tables(2.0), _settings(2.0))
    assert not section.unset
    assert [box.title.split(":")[0] for box in section.boxes] == ["TER", "ROUGE-1", "ROUGE-L"]
    assert all("an improvement of 2.00 points" in box.lines[0] for box in section.boxes)
