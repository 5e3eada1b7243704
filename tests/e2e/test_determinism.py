"""End-to-end: two clean runs give byte-identical results/ trees, also across --cores 1 and 2.

Runs a small generated experiment (every analysis, one metric, every property) twice side by
side, once with `--cores 2` and once with `--cores 1`, rather than the whole bundled example:
what could make outputs differ (job order, parallel jobs, collected tables, the report) is the
same, at a fraction of the jobs. The `--cores 2` run is the session's ``mini_run``
(tests/e2e/conftest.py: the same experiment, run once for the tests that compare with it).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from workflow_helpers import beside_mini_run, digest_tree

pytestmark = pytest.mark.e2e


def test_clean_runs_are_byte_identical_across_core_counts(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    # the session's `--cores 2` run, made meanwhile if it is not yet
    first, second, result = beside_mini_run(request, tmp_path / "second", "--cores", "1")
    assert result.returncode == 0, result.stderr[-3000:]
    first_tree, second_tree = digest_tree(first), digest_tree(second)
    assert "results/report.html" in first_tree and "results/tables/glrt.csv" in first_tree
    assert first_tree.keys() == second_tree.keys()
    differing = [name for name in first_tree if first_tree[name] != second_tree[name]]
    assert differing == []
