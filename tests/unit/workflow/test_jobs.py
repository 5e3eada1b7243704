"""The workflow's worker processes and the end of a run (infrepro.workflow.jobs)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from infrepro.workflow import jobs

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


def _loads(log: Path) -> list[str]:
    return log.read_text().split() if log.exists() else []


def _wait_for_loads(log: Path, count: int) -> None:
    deadline = time.monotonic() + 30
    while len(set(_loads(log))) < count:
        assert time.monotonic() < deadline, "the workers did not load the next script"
        time.sleep(0.05)


def test_the_worker_a_job_leaves_idle_loads_the_next_script(tmp_path: Path) -> None:
    """A job's preload goes to the workers it leaves idle (here the other one of two), which
    loads the next stage's script before any job of it asks; no worker loads it twice."""
    log = tmp_path / "loads.txt"
    first, later = tmp_path / "first.py", tmp_path / "later.py"
    first.write_text(SCRIPT, encoding="utf-8")
    later.write_text(LOADED.format(log=str(log)), encoding="utf-8")
    try:
        smk = SimpleNamespace(output=[str(tmp_path / "env.json")], log=[], rule="first")
        jobs.run_in_worker(first, smk, 2, preload=[later])
        _wait_for_loads(log, 1)  # loaded, no job of it asked yet
        assert len(_loads(log)) == 1  # only the idle worker was asked
        workers = set()
        for i in range(4):
            out = tmp_path / f"later{i}.txt"
            jobs.run_in_worker(later, SimpleNamespace(output=[str(out)], log=[], rule="x"), 2)
            workers.add(out.read_text())
    finally:
        jobs.finish_run()
    loads = _loads(log)
    assert len(loads) == len(set(loads))  # each worker loaded it once at most
    assert workers <= set(loads)


def test_preloads_from_snakemake_s_process_go_to_every_idle_worker(tmp_path: Path) -> None:
    """A job on a thread of Snakemake's process (collect_tables) occupies no worker: each of
    them loads the next script."""
    log = tmp_path / "loads.txt"
    later = tmp_path / "later.py"
    later.write_text(LOADED.format(log=str(log)), encoding="utf-8")
    try:
        jobs.preload_in_workers([later], 2)
        _wait_for_loads(log, 2)
    finally:
        jobs.finish_run()
    assert len(_loads(log)) == 2


def test_a_busy_worker_is_given_no_preload(tmp_path: Path) -> None:
    """With every worker running a job, nothing is preloaded: a preload queued behind the job
    would delay the job queued after it (the workers take their work in order)."""
    log = tmp_path / "loads.txt"
    first, later = tmp_path / "first.py", tmp_path / "later.py"
    first.write_text(SCRIPT, encoding="utf-8")
    later.write_text(LOADED.format(log=str(log)), encoding="utf-8")
    try:
        for i in range(2):  # the second job is queued after any preload of the first
            smk = SimpleNamespace(output=[str(tmp_path / f"env{i}.json")], log=[], rule="first")
            jobs.run_in_worker(first, smk, 1, preload=[later])
    finally:
        jobs.finish_run()
    assert not log.exists()


def test_no_preload_without_scripts() -> None:
    jobs.preload_in_workers([], 2)
    assert jobs._POOL is None


EXIT = """
import gc
from infrepro.workflow import jobs

class Cycle:
    def __del__(self):
        print("collected", flush=True)

gc.disable()  # only the collection at exit may find it
cycle = Cycle()
cycle.me = cycle
del cycle
{call}
print("end", flush=True)
"""


@pytest.mark.parametrize("finished", [False, True])
def test_a_finished_run_exits_without_the_last_collection(finished: bool) -> None:
    """After finish_run the interpreter's exit skips its cyclic collection (0.3 s at the end of
    a paper-scale run); without it, the exit collects as ever."""
    code = EXIT.format(call="jobs.finish_run()" if finished else "")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == (["end"] if finished else ["end", "collected"])


SCRIPT_JOB = """
import json, logging, os, sys
from infrepro.workflow.jobs import run_rule_script

def main(smk):
    logging.getLogger("test").info("in %s", smk.rule)
    if smk.params.fail:
        raise ValueError("planted failure")
    names = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")
    with open(smk.output[0], "w") as handle:
        seen = {n: os.environ.get(n) for n in names}
        seen.update(pid=os.getpid(), path=sys.path, wildcards=smk.wildcards)
        json.dump(seen, handle)

if __name__ == "__main__":
    run_rule_script(main, snakemake)
"""


def _script_job(tmp_path: Path, fail: bool) -> jobs.RuleJob:
    """A job of the script above, as a `run:` block's namespace gives it."""
    namespace = {
        "input": [],
        "output": [str(tmp_path / "out.json")],
        "params": SimpleNamespace(fail=fail),
        "wildcards": {"metric": "ter"},
        "threads": 3,
        "resources": {},
        "log": [str(tmp_path / "job.log")],
        "rule": "plain",
        "jobid": 7,  # a run block's other names are not the script's
    }
    return jobs.RuleJob.of(namespace)


def test_a_script_job_runs_in_a_process_of_its_own_as_snakemake_s_script_directive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Plain Snakemake (the door shut): the script runs as ``__main__`` in a fresh interpreter
    with the job as ``snakemake``, its thread pools on the job's threads (as Snakemake sets them
    for a script job), logging to the rule's log file; the working directory is not put on the
    module path (a user's file there shadows no package)."""
    script = tmp_path / "script.py"
    script.write_text(SCRIPT_JOB, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    jobs.run_as_script_job(script, _script_job(tmp_path, fail=False))
    seen = json.loads((tmp_path / "out.json").read_text())
    assert seen["pid"] != os.getpid()
    assert seen["OPENBLAS_NUM_THREADS"] == seen["OMP_NUM_THREADS"] == "3"
    assert seen["wildcards"] == {"metric": "ter"}
    assert "" not in seen["path"] and str(tmp_path) not in seen["path"]
    assert "in plain" in (tmp_path / "job.log").read_text()
    assert jobs._POOL is None


def test_a_failed_script_job_fails_with_its_traceback_in_the_log(tmp_path: Path) -> None:
    script = tmp_path / "script.py"
    script.write_text(SCRIPT_JOB, encoding="utf-8")
    with pytest.raises(subprocess.CalledProcessError):
        jobs.run_as_script_job(script, _script_job(tmp_path, fail=True))
    log = (tmp_path / "job.log").read_text()
    assert "rule plain failed" in log and "ValueError: planted failure" in log
    assert not (tmp_path / "out.json").exists()


KILLED = """
import os, signal

def main(smk):
    held = bytearray(300 * 2**20)  # 300 MiB resident before the kill
    for i in range(0, len(held), 4096):
        held[i] = 1
    os.kill(os.getpid(), signal.SIGKILL)  # as the kernel's out-of-memory killer does
"""


def test_a_killed_worker_fails_its_job_saying_which_why_and_what_to_do(tmp_path: Path) -> None:
    """The job whose worker was killed fails with WorkerDied naming the rule and its wildcards,
    memory and what to do, also in its log (empty otherwise); later jobs get a new pool."""
    script, log = tmp_path / "killed.py", tmp_path / "job.log"
    script.write_text(KILLED, encoding="utf-8")
    wildcards = {"metric": "chrf"}  # Snakemake's Wildcards have items() too
    table = tmp_path / "evaluation.parquet"
    pd.DataFrame({"y": range(12_345)}).to_parquet(table)
    smk = SimpleNamespace(
        input=[str(table)],
        output=[],
        log=[str(log)],
        rule="analysis_conditional",
        wildcards=wildcards,
        resources=SimpleNamespace(mem_mb=5100),
    )
    try:
        with pytest.raises(jobs.WorkerDied) as err:
            jobs.run_in_worker(script, smk, 1)
        message = str(err.value)
        assert message.startswith(
            "rule analysis_conditional (metric=chrf), 12,345 rows, declared mem_mb 5,100: its "
            "worker process"
        )
        reached = int(re.search(r"reached ([\d,]+) MiB", message)[1].replace(",", ""))
        assert reached >= 300
        assert "out-of-memory killer" in message and "--resources mem_mb=" in message
        assert message in log.read_text(encoding="utf-8")
        later = tmp_path / "script.py"
        later.write_text(SCRIPT, encoding="utf-8")
        out = tmp_path / "env.json"
        jobs.run_in_worker(later, SimpleNamespace(output=[str(out)], log=[], rule="test"), 1)
        assert out.exists()
    finally:
        jobs.finish_run()
