"""End-to-end: runs that arrive in batches (issue 29, acceptance 4; docs/method.md §4e).

A scores-mode experiment with three looks, rerun after each batch as a researcher would, gives
byte for byte the tables of one run on all three looks; the bundled example declared as three
looks (``config/sequential.yaml``) decides sequentially and its report shows the look history
and the decision (the browser test of it is in ``test_report_browser.py``)."""

from __future__ import annotations

import filecmp
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from decision_views import check_views
from workflow_helpers import run_snakemake, scores_config, write_scores

pytestmark = pytest.mark.e2e
SEGMENTS = 80
LOOKS = (1, 2, 3)  # two runs per system arrive at each look


def looks_scores(looks: tuple[int, ...]) -> pd.DataFrame:
    """Per-segment scores of base and comp (comp better by about 2 run-mean SDs), two runs per
    system per look; the same rows for a look whichever looks are written."""
    rng = np.random.default_rng(2029)
    segment = rng.normal(0.0, 0.15, SEGMENTS)
    rows = []
    for look in LOOKS:
        for system, mean in (("base", 0.50), ("comp", 0.53)):
            for k in range(2):
                level = mean + rng.normal(0.0, 0.015)
                scores = np.clip(level + segment + rng.normal(0.0, 0.05, SEGMENTS), 0.0, 1.0)
                if look in looks:
                    rows += [
                        {
                            "segment": f"g{j:03d}",
                            "system": system,
                            "seed": str(2 * (look - 1) + k + 1),
                            "look": look,
                            "score": round(float(v), 6),
                        }
                        for j, v in enumerate(scores)
                    ]
    return pd.DataFrame(rows)


def write_experiment(root: Path, looks: tuple[int, ...]) -> Path:
    """The experiment folder with the scores of ``looks``; its config's path."""
    write_scores(root / "scores.csv", looks_scores(looks))
    analyses = {"run": ["summary"], "planning": {"min_effect": 2.0}, "sequential": {"max_runs": 6}}
    return scores_config(root, "three looks", "base", analyses, look="look")


def run(root: Path, config: Path) -> None:
    result = run_snakemake(root, configfile=config)
    assert result.returncode == 0, result.stderr[-3000:]


@pytest.fixture(scope="module")
def incremental_and_scratch(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The experiment rerun after each look, and run once on all three."""
    base = tmp_path_factory.mktemp("looks")
    incremental, scratch = base / "incremental", base / "scratch"
    for k in range(1, len(LOOKS) + 1):
        run(incremental, write_experiment(incremental, LOOKS[:k]))
    run(scratch, write_experiment(scratch, LOOKS))
    return incremental, scratch


def test_rerun_after_each_look_equals_one_run_on_all_looks(
    incremental_and_scratch: tuple[Path, Path],
) -> None:
    incremental, scratch = incremental_and_scratch
    tables = sorted(p.name for p in (scratch / "results/tables").glob("*.csv"))
    assert {"decisions.csv", "looks.csv", "summary.csv"} <= set(tables)
    match, mismatch, errors = filecmp.cmpfiles(
        scratch / "results/tables", incremental / "results/tables", tables, shallow=False
    )
    assert mismatch == [] and errors == [], (mismatch, errors)
    assert match == tables
    report = "results/report.html"
    assert filecmp.cmp(scratch / report, incremental / report, shallow=False)


def test_the_decision_is_read_at_the_looks(incremental_and_scratch: tuple[Path, Path]) -> None:
    """Three looks of 2, 4, 6 runs per system; the record is the plan's, at a look that exists,
    and its verdict agrees with its repeated interval; the report shows history and decision."""
    _, scratch = incremental_and_scratch
    looks = pd.read_csv(scratch / "results/tables/looks.csv")
    pair = looks[(looks["family"] == "baseline") & (looks["system"] == "comp")]
    assert list(pair["look"]) == [1, 2, 3]
    assert list(pair["runs_reference"]) == list(pair["runs_system"]) == [2, 4, 6]
    assert pair["fraction"].is_monotonic_increasing and pair["fraction"].iloc[-1] == 1.0
    decisions = pd.read_csv(scratch / "results/tables/decisions.csv")
    record = decisions[(decisions["family"] == "baseline")].iloc[0]
    assert record["sequential"] == "plan" and record["looks"] == 3
    assert record["max_runs_reference"] == record["max_runs_system"] == 6
    assert 1 <= record["look"] <= 3
    excludes = record["lower"] > 0 or record["upper"] < 0
    assert (record["verdict"] in ("better", "worse")) == excludes
    html = (scratch / "results/report.html").read_text(encoding="utf-8")
    assert 'id="looks-score"' in html
    assert "repeated" in html


def test_bundled_example_as_three_looks(sequential_example_run: Path) -> None:
    """``config/sequential.yaml`` on a copy of the finished example: scoring is reused (the
    hypotheses did not change), the decision is sequential at three looks, and the report shows
    each comparison's look history and decision."""
    root = sequential_example_run
    dry = (root.parent / "dry-run.txt").read_text()
    assert "score_run" not in dry and "analysis_summary" in dry
    looks = pd.read_csv(root / "results/tables/looks.csv")
    assert set(looks["look"]) == {1, 2, 3}
    decisions = pd.read_csv(root / "results/tables/decisions.csv")
    assert set(decisions["sequential"]) == {"plan"}
    html = (root / "results/report.html").read_text(encoding="utf-8")
    for metric in ("ter", "rouge1", "rougeL"):
        assert f'id="looks-{metric}"' in html
    # the table, the card, the forest, the sentence and the LaTeX say the sequential record
    assert check_views(root / "results", "baseline") == 3
