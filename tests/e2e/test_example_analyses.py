"""End-to-end: the bundled example's analyses write every table and recover the planted truth."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from workflow_helpers import REPO_ROOT

from infrepro.analyses import TABLES
from infrepro.core.vocabulary import LOOKS_TABLE, TABLE_SPECS, columns

pytestmark = pytest.mark.e2e  # runs on the worker of the example run (tests/conftest.py)
PLANTED = json.loads((REPO_ROOT / "resources/example/planted.json").read_text())


def table(root: Path, name: str) -> pd.DataFrame:
    return pd.read_csv(root / "results" / "tables" / f"{name}.csv")


def test_every_table_is_written_with_its_columns(example_run: Path) -> None:
    """Every table has rows, except the look history: the example declares no looks (its rows
    are tested on config/sequential.yaml, tests/e2e/test_sequential_looks.py)."""
    for name in TABLES:
        frame = table(example_run, name)
        assert frame.empty == (name == LOOKS_TABLE), name
        if not TABLE_SPECS[name].extra:
            assert list(frame.columns) == columns(name)


def test_no_p_value_is_zero(example_run: Path) -> None:
    for name in ("glrt", "contrasts", "slopes", "classical"):
        frame = pd.read_csv(example_run / "results/tables" / f"{name}.csv", dtype=str)
        for column in ("p_value", "p_holm"):
            if column in frame:
                values = frame[column].dropna()
                assert not values.isin(["0", "0.0"]).any(), (name, column)


def rows_of(root: Path, name: str, **where: str) -> pd.DataFrame:
    """The rows of table ``name`` whose columns equal ``where`` (no property reads "")."""
    frame = table(root, name).fillna({"property": ""})
    keep = pd.Series(True, index=frame.index)
    for column, value in where.items():
        keep &= frame[column] == value
    return frame[keep]


def one_row(root: Path, name: str, analysis: str, metric: str, prop: str) -> pd.Series:
    """The one row of table ``name`` for the analysis, metric and property."""
    rows = rows_of(root, name, metric=metric, analysis=analysis, property=prop)
    assert len(rows) == 1, rows
    return rows.iloc[0]


def glrt(root: Path, analysis: str, metric: str = "ter", prop: str = "") -> pd.Series:
    return one_row(root, "glrt", analysis, metric, prop)


def contrast(root: Path, analysis: str, metric: str = "ter") -> float:
    frame = table(root, "contrasts")
    rows = frame[(frame["metric"] == metric) & (frame["analysis"] == analysis)]
    assert len(rows) == 1
    return float(rows["estimate"].iloc[0])


def test_best_vs_best_favours_the_competitor(example_run: Path) -> None:
    # TER: lower is better; the contrast is baseline - competitor.
    assert contrast(example_run, "best_vs_best") > 0
    assert glrt(example_run, "best_vs_best")["log10_p"] < -3


def test_all_runs_favour_the_baseline_and_run_aware_test_is_weaker(example_run: Path) -> None:
    assert contrast(example_run, "all_runs") < 0
    assert glrt(example_run, "all_runs")["log10_p"] < -10
    assert (
        glrt(example_run, "all_runs_run_aware")["log10_p"]
        > glrt(example_run, "all_runs")["log10_p"]
    )
    assert 10 ** glrt(example_run, "all_runs_run_aware")["log10_p"] > 0.05


def test_best_runs_are_selected_by_dev_score(example_run: Path) -> None:
    summary = table(example_run, "run_summary")
    ter = summary[summary["metric"] == "ter"].set_index("system")
    assert ter.loc["baseline", "best_run"] == PLANTED["best_by_dev"]["baseline"]
    assert ter.loc["competitor", "best_run"] == PLANTED["best_by_dev"]["competitor"]
    assert (summary["selected_by"] == "dev_score").all()


def test_lambda_dominates_the_competitor(example_run: Path) -> None:
    importance = table(example_run, "importance")
    dominant = importance[(importance["system"] == "competitor") & importance["dominant"]]
    assert set(dominant["facet"]) == {"lambda"}


def test_planted_interactions_are_found(example_run: Path) -> None:
    assert glrt(example_run, "conditional_interaction", prop="length")["log10_p"] < -5
    where = {"metric": "ter", "subset": "competitor", "property": "length"}
    lam = rows_of(example_run, "glrt", analysis="metaparam_interaction", **where)
    assert lam["facet"].iloc[0] == "lambda"
    assert lam["log10_p"].iloc[0] < -5
    slopes = rows_of(example_run, "slopes", analysis="metaparam", **where)
    lam_slopes = slopes.set_index("group")["slope"]
    lam_slopes.index = lam_slopes.index.astype(str)
    assert lam_slopes.loc["0.1"] < lam_slopes.loc["0.5"] < lam_slopes.loc["0.9"]


def test_reliability_recovers_planted_phi(example_run: Path) -> None:
    reliability = table(example_run, "reliability")
    ter = reliability[(reliability["metric"] == "ter") & (reliability["vca"] == "run-aware")]
    ter = ter.set_index("system")
    for system in ("baseline", "competitor"):
        planted = PLANTED["variance_components"][system]["phi"]
        assert ter.loc[system, "phi"] == pytest.approx(planted, abs=0.05)


def run_aware_test(root: Path, analysis: str, metric: str = "ter", prop: str = "") -> pd.Series:
    return one_row(root, "tests", analysis, metric, prop)


def test_run_aware_headline_is_per_system_with_kenward_roger_df(example_run: Path) -> None:
    # issue 13, acceptance 4: per-system run variance, KR df (lmerTest: p 0.02228, df 18.87)
    row = run_aware_test(example_run, "all_runs_per_system")
    assert row["method"] == "Kenward-Roger"
    assert 0.01 < 10 ** row["log10_p"] < 0.04
    assert row["dendf"] == pytest.approx(18.87, abs=0.01)
    assert row["estimate"] < 0  # baseline - competitor: the competitor's TER is higher
    assert 'dummy(system, "competitor")|run_id' in row["model"]
    facet = run_aware_test(example_run, "all_runs_facet_aware")
    assert facet["dendf"] < 5  # few lambda levels: few df, however small


def test_run_aware_length_interaction_is_moderate(example_run: Path) -> None:
    # with the runs' own slopes, system x length is p ~ 0.0036 (df 22), not the paper's 2.6e-8
    row = run_aware_test(example_run, "conditional_runaware_interaction", prop="length")
    assert 0.001 < 10 ** row["log10_p"] < 0.01
    assert "(0 + length_c | run_id)" in row["model"]  # run slopes on length centred
    assert 'dummy(system, "competitor")|run_id' in row["model"]  # run variance per system
    paper = glrt(example_run, "conditional_interaction", prop="length")
    assert paper["log10_p"] < row["log10_p"] - 3


def test_planning_and_budget(example_run: Path) -> None:
    """Issue 21: power at the current design (6 baseline vs 18 competitor runs), runs needed, and
    the budget curves' crossing named in the report (or that there is none)."""
    plan = table(example_run, "planning")
    ter = plan[(plan["metric"] == "ter") & (plan["effect_source"] == "observed (post hoc)")]
    current = ter[ter["design"] == "current"].iloc[0]
    assert (current["runs_baseline"], current["runs_competitor"]) == (6, 18)
    assert 0 < current["power"] < 1 and 0 < current["mc_se"] < 0.02
    curve = ter[ter["design"] == "equal"]
    assert list(curve["runs_baseline"]) == list(range(2, 31))
    assert set(plan["effect_source"]) == {"observed (post hoc)", "min_effect"}  # config: 2 points
    assert (plan[plan["effect_source"] == "min_effect"]["improvement_points"] == 2.0).all()
    budget = pd.read_csv(
        example_run / "results" / "tables" / "budget.csv", dtype={"crossing_budget": str}
    )
    assert set(budget["source"]) == {"dev_score", "test_mean"}
    crossing = budget[budget["system"] == "competitor"]["crossing_budget"]
    assert crossing.str.fullmatch(r"none|\d+").all()
    html = (example_run / "results" / "report.html").read_text()
    assert "changes sides at B =" in html or "not a budget effect" in html


def test_the_report_and_paper_files_name_no_issue(example_run: Path) -> None:
    """What the reader sees (the report's text, its figures' labels, the paste-ready files)
    points to docs/method.md, never to the project's issues ("issue 23")."""
    from html.parser import HTMLParser

    class Text(HTMLParser):
        def __init__(self) -> None:
            super().__init__(convert_charrefs=True)
            self.parts: list[str] = []

        def handle_data(self, data: str) -> None:
            self.parts.append(data)

        def handle_starttag(self, tag: str, attrs: list) -> None:
            self.parts += [v for k, v in attrs if k in ("aria-label", "title") and v]

    page = Text()
    page.feed((example_run / "results" / "report.html").read_text(encoding="utf-8"))
    texts = [" ".join(page.parts)]
    texts += [p.read_text(encoding="utf-8") for p in (example_run / "results" / "paper").iterdir()]
    assert len(texts) > 1 and "docs/method.md" in texts[0]
    for text in texts:
        assert re.findall(r"\bissues?\s*#?\s*\d+", text, flags=re.IGNORECASE) == []
