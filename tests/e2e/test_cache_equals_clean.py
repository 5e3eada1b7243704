"""End-to-end: an experiment run, then rerun after each of two batches of new seeds, with its
kept stores (``.snakemake/infrepro/``: the checked experiment, the input digests, the ROUGE
tokens, the meta-parameter units, the report's figures) and the worker processes, ends with
every file under ``results/`` byte-identical to a run from scratch of the same final inputs in a
fresh folder (docs/architecture.md, "What a rerun keeps"). No file is left out of the
comparison: the logs, Snakemake's metadata and the stores live outside ``results/``, and the
report names no date or path."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from workflow_helpers import MiniExperiment, make_mini_experiment, snakemake_command

from infrepro.io.ledger import ledger_path

pytestmark = pytest.mark.e2e

# Two batches of new seeds of one system: the other system's units and figures are kept through
# both reruns to the end, so that a kept value that differed from a fresh one would show there.
FIRST_BATCH = (("comp_s3", "comp", "3", 303), ("comp_s4", "comp", "4", 304))
SECOND_BATCH = (("comp_s5", "comp", "5", 305),)
STORES = ("experiment.json", "digests.json", "tokens.json", "figures.json", "units")
SHAPE = {"n_segments": 12, "metrics": ("ter", "rouge1"), "properties": ("length",)}


def worker_pids(root: int) -> set[int]:
    """The worker processes (multiprocessing's spawned children) among ``root``'s descendants."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        children.setdefault(int(text[text.rfind(")") + 2 :].split()[1]), []).append(
            int(stat.parent.name)
        )
    found, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), []):
            todo.append(child)
            try:
                command = (Path("/proc") / str(child) / "cmdline").read_bytes()
            except OSError:
                continue
            if b"multiprocessing.spawn" in command:
                found.add(child)
    return found


def run_with_workers(exp: MiniExperiment) -> str:
    """Run the workflow on ``exp`` with 2 cores (the default profile: the worker pool), watching
    for its worker processes; returns Snakemake's output."""
    command = [*snakemake_command(exp.root), "--cores", "2"]
    process = subprocess.Popen(
        command, cwd=exp.root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    seen: set[int] = set()
    done = threading.Event()

    def watch() -> None:
        while not done.wait(0.05):
            seen.update(worker_pids(process.pid))

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    output, _ = process.communicate(timeout=900)
    done.set()
    watcher.join()
    assert process.returncode == 0, output[-4000:]
    assert len(seen) >= 2, "the jobs did not run in the worker pool"
    kept = exp.root / ".snakemake" / "infrepro"
    assert [name for name in STORES if not (kept / name).exists()] == []
    return output


def logged(exp: MiniExperiment, pattern: str) -> list[int]:
    """The first number of each line matching ``pattern`` in the run's logs."""
    numbers = []
    for log in sorted((exp.root / "logs").rglob("*.log")):
        numbers += [int(m) for m in re.findall(pattern, log.read_text(encoding="utf-8"))]
    return numbers


def add_batch(exp: MiniExperiment, batch: tuple[tuple[str, str, str, int], ...]) -> None:
    for run_id, system, seed, rng_seed in batch:
        exp.add_run(run_id, system, seed, rng_seed)


def results(exp: MiniExperiment) -> dict[str, bytes]:
    folder = exp.root / "results"
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


@pytest.fixture(scope="module")
def compiled_kernels() -> None:
    """The scorers' kernels compiled (numba's cache), so that the scoring jobs use them and the
    ROUGE token memo, not the reference packages a first run uses while they compile."""
    code = "from infrepro.metrics.kernels import compile_all; compile_all()"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]


def test_two_batches_of_new_seeds_equal_a_clean_run(tmp_path: Path, compiled_kernels: None) -> None:
    kept = make_mini_experiment(tmp_path / "kept", **SHAPE)
    run_with_workers(kept)
    for batch in (FIRST_BATCH, SECOND_BATCH):
        add_batch(kept, batch)
        for log in (kept.root / "logs").rglob("*.log"):
            log.unlink()  # this rerun's logs only
        run_with_workers(kept)
        # each store was read: units of the unchanged system, figures of unchanged data, and
        # the tokens of earlier runs' words were taken from the last run
        assert any(logged(kept, r"units: (\d+) of \d+ from the last run")), batch
        assert any(logged(kept, r"figures: (\d+) of \d+ from the last render")), batch
        assert any(logged(kept, r"ROUGE tokens: (\d+) pieces from earlier runs")), batch

    clean = make_mini_experiment(tmp_path / "clean", **SHAPE)
    add_batch(clean, FIRST_BATCH + SECOND_BATCH)
    assert clean.runs_path.read_bytes() == kept.runs_path.read_bytes()
    # the looks are an input (docs/method.md §4e.12): the clean run reads the same ledger
    ledger = ledger_path(kept.runs_path)
    shutil.copy(ledger, ledger_path(clean.runs_path))
    run_with_workers(clean)

    after_seeds, from_scratch = results(kept), results(clean)
    assert sorted(after_seeds) == sorted(from_scratch)
    differ = [name for name in sorted(from_scratch) if after_seeds[name] != from_scratch[name]]
    assert differ == [], f"{len(differ)} of {len(from_scratch)} files differ: {differ}"
