"""End-to-end: the workflow as plain Snakemake gives the same bytes as with Snakemake's internals
(infrepro/workflow/snakemake_door.py shut: no patch of Snakemake, no worker pool, no timer
cancelled; every job runs its script in a process of its own).

The rest of the end-to-end suite runs with the door open (the installed, tested Snakemake);
this module is CI's plain-mode run: a small experiment (every rule of the workflow, raw mode)
with a faked untested Snakemake version, compared file by file with the same experiment run
with the door open (the session's ``mini_run``, tests/e2e/conftest.py). The switch
(``INFREPRO_PLAIN_SNAKEMAKE=1``) shuts the same door: tests/unit/workflow/test_snakemake_door.py
shows both paths and their one line. (The whole suite in plain mode passes too, but takes about
twice as long: docs/architecture.md.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from workflow_helpers import beside_mini_run, digest_tree, run_snakemake

from infrepro.workflow.snakemake_door import PLAIN_VARIABLE, TESTED_SNAKEMAKE, VERSION_VARIABLE

pytestmark = pytest.mark.e2e
WARNING = "infrepro: Snakemake "  # the door's one line about an untested version


def differing(first: Path, second: Path) -> list[str]:
    """The files under results/ that are not byte-identical in the two folders (or not in both)."""
    one, other = digest_tree(first), digest_tree(second)
    assert "results/report.html" in one and "results/tables/glrt.csv" in one
    return sorted(name for name in one.keys() | other.keys() if one.get(name) != other.get(name))


def test_an_untested_snakemake_runs_plain_with_the_same_bytes_and_says_so_once(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """A Snakemake version past the tested range (faked) runs the workflow as plain Snakemake:
    one warning naming the version and the range, and every file the door-open run writes; a
    rerun with the door open then has nothing to do (the mode is no input of any job)."""
    untested = TESTED_SNAKEMAKE[1] + ".0"
    # the session's door-open run, made meanwhile if it is not yet
    open_, shut, door_shut = beside_mini_run(
        request, tmp_path / "shut", env={VERSION_VARIABLE: untested}
    )
    assert door_shut.returncode == 0, door_shut.stderr[-3000:]
    assert WARNING not in (open_.parent / "stderr.txt").read_text()
    warnings = [line for line in door_shut.stderr.splitlines() if line.startswith("infrepro:")]
    assert len(warnings) == 1 and warnings[0].startswith(WARNING), warnings
    assert f"Snakemake {untested} " in warnings[0] and f"<{TESTED_SNAKEMAKE[1]}" in warnings[0]
    assert differing(open_, shut) == []
    rerun = run_snakemake(shut, "-n", env={PLAIN_VARIABLE: "0"})
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert "Nothing to be done" in rerun.stdout + rerun.stderr
