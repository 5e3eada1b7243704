"""End-to-end: two clean runs give byte-identical results/ trees, also across --cores 1 and 2.

Runs a small generated experiment (every analysis, one metric, every property) twice side by
side, once with `--cores 2` and once with `--cores 1`, rather than the whole bundled example:
what could make outputs differ (job order, parallel jobs, collected tables, the report) is the
same, at a fraction of the jobs. The `--cores 2` run is the session's ``mini_run``
(tests/e2e/conftest.py: the same experiment, run once for the tests that compare with it).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from workflow_helpers import MINI_RUN, digest_tree, make_mini_experiment, run_snakemake

pytestmark = pytest.mark.e2e


def test_clean_runs_are_byte_identical_across_core_counts(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    second = make_mini_experiment(tmp_path / "second", **MINI_RUN).root
    with ThreadPoolExecutor(max_workers=1) as pool:
        run = pool.submit(run_snakemake, second, "--cores", "1")
        first = request.getfixturevalue("mini_run")  # `--cores 2`, meanwhile (if not yet run)
        result = run.result()
    assert result.returncode == 0, result.stderr[-3000:]
    first_tree, second_tree = digest_tree(first), digest_tree(second)
    assert "results/report.html" in first_tree and "results/tables/glrt.csv" in first_tree
    assert first_tree.keys() == second_tree.keys()
    differing = [name for name in first_tree if first_tree[name] != second_tree[name]]
    assert differing == []
