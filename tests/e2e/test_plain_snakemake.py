"""End-to-end: the workflow as plain Snakemake gives the same bytes as with Snakemake's internals
(infrepro/workflow/snakemake_door.py shut: no patch of Snakemake, no worker pool, no timer
cancelled; every job runs its script in a process of its own).

The rest of the end-to-end suite runs with the door open (the installed, tested Snakemake);
this module is CI's plain-mode run: the bundled example with a faked untested Snakemake version,
compared file by file with the example run. The switch (``INFREPRO_PLAIN_SNAKEMAKE=1``) shuts
the same door: tests/unit/workflow/test_snakemake_door.py shows both paths and their one line.
(The whole suite in plain mode passes too, but takes about twice as long:
docs/architecture.md.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from workflow_helpers import copy_example, digest_tree, run_snakemake

from infrepro.workflow.snakemake_door import PLAIN_VARIABLE, TESTED_SNAKEMAKE, VERSION_VARIABLE

pytestmark = pytest.mark.e2e
WARNING = "infrepro: Snakemake "  # the door's one line about an untested version


def differing(first: Path, second: Path) -> list[str]:
    """The files under results/ that are not byte-identical in the two folders (or not in both)."""
    one, other = digest_tree(first), digest_tree(second)
    assert "results/report.html" in one and "results/tables/glrt.csv" in one
    return sorted(name for name in one.keys() | other.keys() if one.get(name) != other.get(name))


def test_an_untested_snakemake_runs_the_example_plain_with_the_same_bytes(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """A Snakemake version past the tested range (faked) runs the bundled example as plain
    Snakemake: one warning naming the version and the range, every table, the report and the
    paper tables byte for byte those of the example's run with the door open; a rerun with the
    door open then has nothing to do (the mode is no input of any job)."""
    untested = TESTED_SNAKEMAKE[1] + ".0"
    root = copy_example(tmp_path / "plain")
    config = root / "config" / "config.yaml"
    plain = run_snakemake(root, configfile=config, env={VERSION_VARIABLE: untested})
    assert plain.returncode == 0, plain.stderr[-4000:]
    said = [line for line in plain.stderr.splitlines() if line.startswith("infrepro:")]
    assert len(said) == 1 and said[0].startswith(WARNING), said
    assert f"Snakemake {untested} " in said[0] and f"<{TESTED_SNAKEMAKE[1]}" in said[0]
    example_run = request.getfixturevalue("example_run")  # after the long run: no wait for it
    assert differing(root, example_run) == []
    rerun = run_snakemake(root, "-n", configfile=config, env={PLAIN_VARIABLE: "0"})
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert "Nothing to be done" in rerun.stdout + rerun.stderr
