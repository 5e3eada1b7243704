"""End-to-end: adversarially renamed experiments through the whole Snakemake workflow give the
tables of the original (run in-process through the same rule scripts), label for label; metric
names that are no file name (braces, ``..``, ``/``, 200 characters) become encoded file stems."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml
from workflow_helpers import run_snakemake

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from label_experiments import (  # noqa: E402
    assert_same_tables,
    draw_renaming,
    generate,
    rename,
    run_ids,
    run_in_process,
)

from infrepro.core.vocabulary import TABLES, file_stem  # noqa: E402

pytestmark = pytest.mark.e2e

ANALYSES = ("variance", "classical", "summary")
# a metric name per case that no file system takes as is
HOSTILE_METRICS = ("comet{22}", "..", "a/../b", "Ü" * 100 + "l" * 100, "_v0_ `x` 'y' \"z\"")


@pytest.mark.parametrize("case", range(len(HOSTILE_METRICS)))
def test_renamed_experiment_through_the_workflow(case: int, tmp_path: Path) -> None:
    design = 500 + case
    experiment = generate(design)
    base_dir = tmp_path / "base"
    base = run_in_process(experiment, base_dir, ANALYSES)
    renaming = draw_renaming(experiment, design)
    metric = HOSTILE_METRICS[case]
    if metric in renaming.columns.values():  # keep every name different
        other = next(k for k, v in renaming.columns.items() if v == metric)
        renaming.columns[other] = renaming.columns[experiment.metric]
    renaming.columns[experiment.metric] = metric
    renamed = rename(experiment, renaming)
    workdir = tmp_path / "work" / "inner"
    workdir.mkdir(parents=True)
    renamed.scores.to_csv(workdir / "scores.csv", index=False)
    config = renamed.config("scores.csv", ANALYSES)
    (workdir / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    result = run_snakemake(workdir)
    assert result.returncode == 0, result.stderr[-3000:]
    results = workdir / "results"
    tables = {
        name: (results / "tables" / f"{name}.csv").read_text(encoding="utf-8")
        for name in base
        if name in TABLES or name == "property_bins"
    }
    runs = dict(zip(run_ids(base_dir), run_ids_of(results), strict=True))
    assert_same_tables({k: base[k] for k in tables}, tables, renaming, runs)
    stem = file_stem(metric)
    assert (results / "paper" / f"{stem}.tex").is_file()
    assert sorted(p.name for p in (results / "analyses").iterdir()) == [stem]
    assert sorted(p.name for p in (tmp_path / "work").iterdir()) == ["inner"]  # nothing outside
    assert (results / "report.html").is_file()


def run_ids_of(results: Path) -> list[str]:
    import pandas as pd

    return [str(r) for r in pd.read_parquet(results / "inputs" / "runs.parquet")["run_id"]]
