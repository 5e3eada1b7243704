"""The workflow's worker processes and the end of a run (infrepro.workflow.jobs)."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from infrepro.workflow import jobs


class _Scheduler:
    """Stands in for Snakemake's JobScheduler: its timers run a lambda defined in a method of
    this (misspelled, as Snakemake spells it) name."""

    def __init__(self) -> None:
        self.released = threading.Event()

    def _schedule_reevalutation(self, delay: float) -> threading.Timer:
        timer = threading.Timer(delay, lambda: self.released.set())
        timer.start()
        return timer


def test_finish_run_cancels_only_the_schedulers_timers() -> None:
    scheduler = _Scheduler()
    theirs = scheduler._schedule_reevalutation(30.0)
    other_fired = threading.Event()
    other = threading.Timer(30.0, other_fired.set)
    other.start()
    try:
        jobs.finish_run()
        theirs.join(timeout=5)
        assert not theirs.is_alive() and not scheduler.released.is_set()
        assert other.is_alive()
    finally:
        other.cancel()
        theirs.cancel()


SCRIPT = """
import json, os

def main(smk):
    names = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "OPENBLAS_NUM_THREADS")
    with open(smk.output[0], "w") as handle:
        json.dump({"pid": os.getpid(), **{n: os.environ.get(n) for n in names}}, handle)
"""


def test_workers_keep_freed_memory_and_stop_at_the_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in jobs.WORKER_MALLOC:
        monkeypatch.delenv(name, raising=False)
    script = tmp_path / "script.py"
    script.write_text(SCRIPT, encoding="utf-8")
    out = tmp_path / "env.json"
    smk = SimpleNamespace(output=[str(out)], log=[], rule="test")
    try:
        jobs.run_in_worker(script, smk, 1)
    finally:
        jobs.finish_run()
    seen = json.loads(out.read_text())
    assert jobs._POOL is None
    assert {n: seen[n] for n in jobs.WORKER_MALLOC} == jobs.WORKER_MALLOC
    assert seen["OPENBLAS_NUM_THREADS"] == "1"
    with pytest.raises(ProcessLookupError):  # the worker has exited and been reaped
        os.kill(seen["pid"], 0)
