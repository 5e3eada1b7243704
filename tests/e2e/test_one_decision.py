"""End-to-end: one decision, said once (issue 27, acceptance 1 and 2). On the bundled example
and on a 12-system scores-mode experiment with 4 single-run systems, every view of every pair
(the decision table, the headline card, the forest plot, the sentence, the LaTeX row) shows the
decision record's verdict, estimate, interval and p (``decision_views``); a multi-run system
against a single-run one is compared through its model mean; the Kreutzer config is checked in
test_kreutzer_example.py."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from decision_views import check_views
from workflow_helpers import many_systems_experiment, run_snakemake

from infrepro.io.results import read_result_table

pytestmark = pytest.mark.e2e

TWELVE = {
    "base": 3,
    "alpha": 4,
    "beta": 2,
    "gamma": 5,
    "delta": 3,
    "eps": 1,
    "zeta": 2,
    "eta": 1,
    "theta": 4,
    "iota": 1,
    "kappa": 3,
    "lambda": 1,
}


def test_the_bundled_example_says_each_decision_once(example_run: Path) -> None:
    assert check_views(example_run / "results", "baseline") == 3  # one pair, three metrics


def test_twelve_systems_with_four_single_run_ones(tmp_path: Path) -> None:
    root = tmp_path / "twelve"
    config = many_systems_experiment(root, TWELVE)
    result = run_snakemake(root, configfile=config)
    assert result.returncode == 0, result.stderr[-4000:]
    results = root / "results"
    assert check_views(results, "base") == 11
    decisions = read_result_table("decisions", results / "tables" / "decisions.csv")
    kinds = decisions[decisions["family"] == "baseline"].set_index("system")["comparison"]
    assert kinds["eps"] == "vs single output" and kinds["alpha"] == "systems"
    # the named family's records only: the letters' all-pairs records are not written (§4c.5)
    assert len(decisions) == 11 and set(decisions["family"]) == {"baseline"}
    assert set(decisions["comparison"]) == {"systems", "vs single output"}
    # a single output against the baseline's model mean, whatever run scores best (§4c.4)
    evaluation = pd.read_parquet(results / "evaluation.parquet")
    means = evaluation.groupby("system")["score"].mean()
    summary = read_result_table("summary", results / "tables" / "summary.csv")
    model = summary.set_index("system")["model_mean"]
    for row in decisions[decisions["comparison"] == "vs single output"].itertuples():
        single, other = (
            (row.reference, row.system) if row.runs_reference < 2 else (row.system, row.reference)
        )
        expected = model[other] - means[single]
        expected = expected if other == row.system else -expected
        assert row.improvement == pytest.approx(expected, rel=1e-6)
    singles = summary[summary["runs"] == 1]
    assert singles["model_lower"].isna().all() and (singles["group"] == "").all()
    assert (singles["output_group"] != "").all()
