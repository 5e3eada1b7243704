"""End-to-end: a job killed with SIGKILL mid-scoring or mid-analysis leaves nothing a rerun would
trust; the rerun's tables equal those of an uninterrupted run.

Scoring jobs run on threads of Snakemake's own process and analysis jobs in its worker processes
(infrepro.workflow.jobs): killing a scoring job means killing Snakemake itself (the rerun then first
removes the stale lock with `--unlock`, as after any crash), killing an analysis job means killing
the worker process that runs it (as plain Snakemake, INFREPRO_PLAIN_SNAKEMAKE=1: the job's own
process)."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from workflow_helpers import MiniExperiment, make_mini_experiment, run_snakemake, snakemake_command

pytestmark = pytest.mark.e2e


def tables_digest(root: Path) -> dict[str, str]:
    files = [root / "results/evaluation.parquet", *sorted((root / "results/tables").glob("*.csv"))]
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


def child_processes(parent: int) -> list[tuple[int, str]]:
    """(pid, command line) of every descendant of ``parent``."""
    found: list[tuple[int, str]] = []
    frontier = [parent]
    while frontier:
        pid = frontier.pop()
        children: list[int] = []
        for task in Path(f"/proc/{pid}/task").glob("*"):
            try:
                children += map(int, (task / "children").read_text().split())
            except OSError:
                continue
        for child in children:
            try:
                command = Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            found.append((child, command))
            frontier.append(child)
    return found


def kill_first_job(root: Path, kind: str, timeout: float = 600) -> int:
    """Start the workflow, SIGKILL the first `kind` job ("score_run" or "analysis"), wait."""
    command = [*snakemake_command(root), "--cores", "2"]
    log = (root / "snakemake-output.txt").open("w")
    process = subprocess.Popen(command, cwd=root, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + timeout
    killed = False
    while time.monotonic() < deadline and process.poll() is None and not killed:
        if kind == "score_run":  # a scoring job has started: its log file exists
            if any((root / "logs" / "score").glob("*.log")):
                os.kill(process.pid, signal.SIGKILL)
                killed = True
        else:  # an analysis job is running in a worker process (or its own, plain)
            for pid, cmdline in child_processes(process.pid):
                if ("multiprocessing" in cmdline and "spawn_main" in cmdline) or (
                    "_script_job" in cmdline and "analysis.py" in cmdline
                ):
                    time.sleep(0.3)  # let the job get into its work
                    try:
                        os.kill(pid, signal.SIGKILL)
                        killed = True
                    except ProcessLookupError:
                        continue
                    break
        time.sleep(0.02)
    process.wait(timeout=timeout)
    log.close()
    assert killed, f"no {kind} job was seen"
    return process.returncode


def processes_working_in(root: Path) -> list[int]:
    """Processes whose working directory is `root` (the workflow's worker processes are)."""
    found = []
    for cwd in Path("/proc").glob("[0-9]*/cwd"):
        try:
            if cwd.resolve() == root.resolve():
                found.append(int(cwd.parent.name))
        except OSError:
            continue
    return found


def mini(root: Path) -> MiniExperiment:
    """The smallest experiment with scoring and analysis jobs to kill: one metric, one property."""
    return make_mini_experiment(root, n_segments=10, metrics=("ter",), properties=("length",))


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    experiment = mini(tmp_path_factory.mktemp("reference") / "exp")
    result = run_snakemake(experiment.root)
    assert result.returncode == 0, result.stderr[-3000:]
    return tables_digest(experiment.root)


@pytest.mark.parametrize("kind", ["score_run", "analysis"])
def test_killed_job_then_rerun_equals_uninterrupted(
    reference: dict[str, str], tmp_path: Path, kind: str
) -> None:
    experiment = mini(tmp_path / "exp")
    returncode = kill_first_job(experiment.root, kind)
    assert returncode != 0
    if kind == "score_run":  # Snakemake itself was killed: its lock is left behind
        # and its worker processes, orphaned, exit on their own (within a second)
        deadline = time.monotonic() + 10
        while processes_working_in(experiment.root) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert processes_working_in(experiment.root) == []
        assert run_snakemake(experiment.root, "--unlock").returncode == 0
    leftovers = [p for p in (experiment.root / "results").rglob("*.tmp")]
    assert leftovers == [] or all(p.name.startswith(".") for p in leftovers)
    rerun = run_snakemake(experiment.root)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert tables_digest(experiment.root) == reference
