"""The workflow's worker processes and the end of a run (infrepro.workflow.jobs)."""

from __future__ import annotations

import json
import os
import threading
import time
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


LOADED = """
import os, time
with open({log!r}, "a") as handle:  # one line per load of this script, by process
    handle.write(f"{{os.getpid()}}\\n")
time.sleep(0.3)  # imports that take a while

def main(smk):
    with open(smk.output[0], "w") as handle:
        handle.write(str(os.getpid()))
"""


def test_preloaded_scripts_are_loaded_once_per_worker_before_their_jobs(tmp_path: Path) -> None:
    """The workers a job leaves idle load the next stage's script meanwhile; its jobs then find
    it loaded (each worker loads it once, whichever worker runs them)."""
    log = tmp_path / "loads.txt"
    first, later = tmp_path / "first.py", tmp_path / "later.py"
    first.write_text(SCRIPT, encoding="utf-8")
    later.write_text(LOADED.format(log=str(log)), encoding="utf-8")
    try:
        smk = SimpleNamespace(output=[str(tmp_path / "env.json")], log=[], rule="first")
        jobs.run_in_worker(first, smk, 2, preload=[later])
        deadline = time.monotonic() + 30
        while len(set(log.read_text().split()) if log.exists() else ()) < 2:
            assert time.monotonic() < deadline, "the workers did not load the next script"
            time.sleep(0.05)  # both workers load it, no job of it asked yet
        preloaded = set(log.read_text().split())
        workers = set()
        for i in range(4):
            out = tmp_path / f"later{i}.txt"
            jobs.run_in_worker(later, SimpleNamespace(output=[str(out)], log=[], rule="x"), 2)
            workers.add(out.read_text())
    finally:
        jobs.finish_run()
    loads = log.read_text().split()
    assert sorted(loads) == sorted(preloaded)  # no job loaded it again
    assert workers <= preloaded


def test_no_preload_without_scripts() -> None:
    jobs.preload_in_workers([], 2)
    assert jobs._POOL is None
