"""End-to-end (issue 42, acceptance 2): at ``report.alpha`` 0.01, 0.05 and 0.2, every interval
on every surface (the page's decision table, cards, sentences and forest plot, ``decisions.csv``,
the paste-ready LaTeX and Markdown) is labelled with the level it was computed at, 1 − α
(``decision_views.check_levels``); the model means and ranks say their own 95 %. One small
scores-mode experiment, rerun at each α (a change of α reruns the decision and the report)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from decision_views import check_views
from workflow_helpers import many_systems_experiment, run_snakemake

from infrepro.io.results import read_result_table

pytestmark = pytest.mark.e2e
RUNS = {"base": 3, "comp": 3, "mid": 2}
LEVELS = {0.05: "95 %", 0.01: "99 %", 0.2: "80 %"}


def test_report_alpha_other_than_0_05_labels_every_interval_on_every_surface(
    tmp_path: Path,
) -> None:
    root = tmp_path / "levels"
    path = many_systems_experiment(root, RUNS, segments=40)
    for alpha, level in LEVELS.items():
        config = yaml.safe_load(path.read_text())
        config["report"] = {"alpha": alpha}
        path.write_text(yaml.safe_dump(config, sort_keys=False))
        result = run_snakemake(root, configfile=path)
        assert result.returncode == 0, result.stderr[-4000:]
        results = root / "results"
        assert check_views(results, "base", alpha=alpha) == 2
        decisions = read_result_table("decisions", results / "tables" / "decisions.csv")
        assert set(decisions["interval"]) == {f"step-down {level}"}, alpha
        page = (results / "report.html").read_text(encoding="utf-8")
        assert f"α = {alpha:g}" in page
