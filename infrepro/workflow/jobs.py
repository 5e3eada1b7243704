"""Support for the thin Snakemake rule scripts: log to the rule's log file, fail loudly.

A rule script defines `main(smk)` and ends with
``if __name__ == "__main__": run_rule_script(main, snakemake)``. Every rule runs it from a
one-line `run:` directive, with the job as a :class:`RuleJob` (built from the directive's
namespace), in one of three ways. A rule whose job is cheap next to a Python start-up (the tiny
bookkeeping rules) runs the script inside Snakemake's own process, with `run_in_process`: the
packages it imports are then loaded once per workflow run, not once per job. A rule whose jobs
need a CPU of their own (the analyses: numpy and pandas hold the GIL) runs them, with
`run_in_worker`, in long-lived worker processes (one per core) that keep their imports from job
to job. Both are speed-ups that Snakemake's internals behind ``snakemake_door`` make safe; with
the door shut (plain Snakemake) every job runs its script in a process of its own,
`run_as_script_job`, as Snakemake's ``script:`` directive would.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import gc
import logging
import multiprocessing
import os
import pickle
import resource
import runpy
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infrepro.workflow.resources import parquet_rows

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


@dataclass(frozen=True)
class RuleJob:
    """What a rule script's ``main(smk)`` reads of its job, as the attributes of Snakemake's
    object for script jobs are named. Built from a `run:` directive's namespace (its documented
    names), not with that object's constructor, which is no public API; picklable, for the
    worker processes and `run_as_script_job` (a job's ``resources`` may hold a closure of
    Snakemake's, and no script reads them)."""

    input: Any
    output: Any
    params: Any
    wildcards: Any
    threads: int
    log: Any
    rule: str

    @classmethod
    def of(cls, namespace: Mapping[str, Any]) -> RuleJob:
        """The job of a `run:` block, from its ``locals()``."""
        return cls(
            input=namespace["input"],
            output=namespace["output"],
            params=namespace["params"],
            wildcards=namespace["wildcards"],
            threads=namespace["threads"],
            log=namespace["log"],
            rule=namespace["rule"],
        )


def run_rule_script(main: Callable[[Any], None], smk: Any) -> None:
    """Run ``main(snakemake)`` with logging sent to the rule's ``log`` file and to stderr.

    An exception is logged with its traceback (so the log explains the failure) and re-raised so
    that Snakemake marks the job failed and removes its outputs.
    """
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if len(smk.log):
        handlers.append(logging.FileHandler(str(smk.log[0]), mode="w", encoding="utf-8"))
    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT, handlers=handlers, force=True)
    _call_main(main, smk)


def _call_main(main: Callable[[Any], None], smk: Any) -> None:
    """``main(smk)``; an exception is logged with its traceback, then re-raised."""
    try:
        main(smk)
    except Exception:
        logging.getLogger("infrepro").exception("rule %s failed", smk.rule)
        raise


@functools.cache
def _load_main(script: str) -> Callable[[Any], None]:
    """A rule script's ``main``, loaded once per process (every later job of the rule reuses it;
    its ``__main__`` guard keeps the script job's entry point from running)."""
    with _IMPORT_LOCK:
        return runpy.run_path(script, run_name="infrepro_rule_script")["main"]


class _ThisThread(logging.Filter):
    """Pass only the records of the thread that created the filter (one job of a run: rule)."""

    def __init__(self) -> None:
        super().__init__()
        self.ident = threading.get_ident()

    def filter(self, record: logging.LogRecord) -> bool:
        return record.thread == self.ident


_ROOT_LOCK = threading.Lock()
_IMPORT_LOCK = threading.Lock()  # one script's imports at a time: no two threads import a package
_ROOT_USERS = 0
_ROOT_LEVEL = logging.WARNING


def run_in_process(script: str | Path, smk: Any) -> None:
    """Run a rule script's ``main(smk)`` in this process (a `run:` directive's thread).

    Snakemake runs `run:` jobs on threads of its own process (with `force-use-threads`, set in
    profiles/default); the records this job logs (its thread's) go to the rule's log file only, so
    two jobs running side by side keep separate logs and Snakemake's own logging is untouched.
    An exception is logged with its traceback and re-raised, as in `run_rule_script`.
    """
    global _ROOT_USERS, _ROOT_LEVEL
    main = _load_main(str(script))
    root = logging.getLogger()
    handler: logging.Handler | None = None
    if len(smk.log):
        handler = logging.FileHandler(str(smk.log[0]), mode="w", encoding="utf-8")
        handler.setFormatter(logging.Formatter(LOG_FORMAT))
        handler.addFilter(_ThisThread())
    with _ROOT_LOCK:
        if _ROOT_USERS == 0:
            _ROOT_LEVEL = root.level
            root.setLevel(logging.INFO)
        _ROOT_USERS += 1
        if handler is not None:
            root.addHandler(handler)
    try:
        _call_main(main, smk)
    finally:
        with _ROOT_LOCK:
            if handler is not None:
                root.removeHandler(handler)
                handler.close()
            _ROOT_USERS -= 1
            if _ROOT_USERS == 0:
                root.setLevel(_ROOT_LEVEL)


_POOL: ProcessPoolExecutor | None = None
_POOL_LOCK = threading.Lock()
_RUNNING = 0  # jobs in the workers now (run_in_worker), under _POOL_LOCK
# What Snakemake sets to a script job's `threads` (snakemake/shell.py). Every rule that runs in a
# worker declares one thread; its numba kernels take their thread count from the job itself.
THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "GOTO_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
)
# glibc malloc in the workers (read at a process' start, so set before they are spawned): the
# analyses allocate and free arrays of a column's size (4.6 MB at paper scale) thousands of times.
# By default each comes fresh from the kernel (mmap, zeroed pages) and goes back on free: a
# seventh of a worker's CPU time was the kernel's. Kept in the heap and never trimmed, freed
# memory is reused; a worker's footprint stays at its largest job's peak, which it reached anyway.
WORKER_MALLOC = {"MALLOC_MMAP_THRESHOLD_": str(2**30), "MALLOC_TRIM_THRESHOLD_": str(2**32)}


def _worker_init() -> None:
    """Worker initializer, before numpy is imported: BLAS on one thread, as in a script job, and
    a watch on the parent.

    Two workers with a multi-threaded BLAS each would oversubscribe the cores, and a BLAS thread
    count other than a script job's changes the last digits of some tables. A worker whose
    Snakemake process died without closing the pool (SIGKILL, the out-of-memory killer) exits
    within a second instead of staying behind with its memory.
    """
    for name in THREAD_VARIABLES:
        os.environ[name] = "1"
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="infrepro-parent-watch", daemon=True).start()
    atexit.register(_exit_now)


def _exit_now() -> None:
    """A worker's exit once the pool is shut down: its jobs are done and their files written
    and closed; the interpreter's teardown of a worker's modules and memory (half a second at
    paper scale, which Snakemake waits for) is skipped."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _run_script_in_worker(script: str, smk: Any) -> None:
    """In a worker process: run the script's ``main(smk)`` as a script job would."""
    run_rule_script(_load_main(script), smk)


def _pool(workers: int) -> ProcessPoolExecutor:
    """The run's worker processes, started (with multiprocessing's "spawn", not a fork of this
    threaded process) on first use."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            for name, value in WORKER_MALLOC.items():  # a user's own setting wins
                os.environ.setdefault(name, value)
            _POOL = ProcessPoolExecutor(
                max_workers=max(1, int(workers)),
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_worker_init,
            )
        return _POOL


def run_in_worker(
    script: str | Path, smk: Any, workers: int, preload: Sequence[str | Path] = ()
) -> None:
    """Run a rule script's ``main(smk)`` in one of `workers` long-lived Python processes.

    The workers are started on the first call and serve every later job of this Snakemake run,
    so each worker imports pandas, scipy and the analyses once instead of once per job. Each job
    logs to its rule's log file as a script job does (`run_rule_script`); its exception is
    re-raised here. A pool whose worker died (killed, out of memory) fails the job that was
    running, with :class:`WorkerDied` saying which job, why and what to do (also in the job's
    log), and is replaced for later jobs. ``preload``: scripts of the jobs that come next,
    loaded by the workers this job leaves idle (`preload_in_workers`), after this job is queued.
    """
    global _POOL, _RUNNING
    pool = _pool(workers)
    with _POOL_LOCK:
        _RUNNING += 1
    try:
        job = pool.submit(_run_script_in_worker, str(script), smk)
        preload_in_workers(preload, workers)
        job.result()
    except BrokenProcessPool as err:
        with _POOL_LOCK:
            if _POOL is pool:
                _POOL = None
        pool.shutdown(wait=True)  # a broken pool: its processes are joined, the dead one reaped
        message = worker_died(smk, workers)
        if len(smk.log):  # the job's log is empty otherwise: its process was killed
            with open(str(smk.log[0]), "a", encoding="utf-8") as handle:
                handle.write(message + "\n")
        raise WorkerDied(message) from err
    finally:
        with _POOL_LOCK:
            _RUNNING -= 1


class WorkerDied(RuntimeError):
    """A job's worker process ended without a result or an error of the job's own: it was
    killed, most often by the kernel for memory (issue 45)."""


def worker_died(smk: Any, workers: int) -> str:
    """What Snakemake's error and the job's log say when the job's worker process died: which
    job, the likely cause and what to do (Python's own message, "A process in the process pool
    was terminated abruptly", says none of them)."""
    wildcards = getattr(smk, "wildcards", None)  # Snakemake's Wildcards: items() as a dict's
    items = list(wildcards.items()) if hasattr(wildcards, "items") else []
    job = f"rule {smk.rule}" + (f" ({', '.join(f'{k}={v}' for k, v in items)})" if items else "")
    # the largest ended child of this process: the pool has reaped the killed worker by now
    reached = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024  # KiB on Linux
    return (
        f"{job}{_job_size(smk)}: its worker process ended abruptly, without a result or an error "
        f"of the job's own: it was killed (or another of the {workers} workers was, which fails "
        "every job they were running). The largest process of this run that has ended (most "
        f"likely that worker) reached {reached:,} MiB. The usual cause is memory: the kernel's "
        "out-of-memory killer ends the largest process when the machine runs out (`dmesg | "
        "grep -i -E 'out of memory|killed process'` shows it). What to do: give Snakemake the "
        "memory the machine has, `--resources mem_mb=<MiB>`, so that it runs together only "
        "jobs whose declared mem_mb fit in it, or run with fewer --cores; on a cluster, the "
        "SLURM profile (profiles/slurm) gives each job its own memory; a job that alone needs "
        "more memory than the machine has needs a smaller design (fewer systems or segments)."
    )


def _job_size(smk: Any) -> str:
    """``, 240,000 rows (declared mem_mb 5,100)``: the rows of the job's Parquet inputs and
    the memory its rule declared, where known."""
    inputs = [str(p) for p in getattr(smk, "input", []) if str(p).endswith(".parquet")]
    mem_mb = getattr(getattr(smk, "resources", None), "mem_mb", None)
    parts = []
    with contextlib.suppress(Exception):  # an unreadable footer: say nothing of the rows
        if inputs:
            parts.append(f"{parquet_rows(inputs):,} rows")
    if isinstance(mem_mb, int | float):
        parts.append(f"declared mem_mb {int(mem_mb):,}")
    return f", {', '.join(parts)}" if parts else ""


def preload_in_workers(scripts: Sequence[str | Path], workers: int) -> None:
    """Have the idle workers load rule scripts, with everything they import, before the scripts'
    first jobs arrive: queued like jobs, once per worker that no job of this run occupies now,
    not waited for. A stage's jobs start when the one before ends (the analyses after assemble,
    the report after the last analyses and collect_tables), while that one leaves workers idle;
    the imports (about half a second for the report's) then cost no wall time. Only idle
    workers: a preload queued behind a running job would delay the jobs queued after it. A
    worker that has loaded a script finds it loaded again at once; a script that fails to load
    fails its own job, which loads it again."""
    if not scripts:
        return
    with _POOL_LOCK:
        idle = max(1, int(workers)) - _RUNNING
    if idle <= 0:
        return
    pool = _pool(workers)
    with contextlib.suppress(BrokenProcessPool, RuntimeError):  # the job's to report
        for script in scripts:
            for _ in range(idle):
                pool.submit(_preload, str(script))


def _preload(script: str) -> None:
    """In a worker: load a rule script (its ``main`` is kept for the script's jobs)."""
    _load_main(script)


def finish_run() -> None:
    """At the end of a Snakemake run (its ``onsuccess`` and ``onerror``): stop the worker
    processes, and have the interpreter's exit skip its last garbage collection
    (:func:`_skip_last_collection`). Snakemake's leftover scheduling timers are the door's
    (``snakemake_door.cancel_scheduler_timers``)."""
    _skip_last_collection()
    global _POOL
    with _POOL_LOCK:
        pool, _POOL = _POOL, None
    if pool is not None:
        pool.shutdown(wait=True)


@functools.cache
def _skip_last_collection() -> None:
    """Have the process' exit skip its final cyclic garbage collection: at interpreter exit,
    before the modules are torn down, every object still alive (the DAG, jobs and files
    Snakemake built) is moved out of the collector's reach (``gc.freeze``), so the collection
    the interpreter runs at exit has nothing to traverse (0.3 s of a paper-scale run's end;
    the objects are released with the process as they would have been). Registered once, at
    the end of a run; a process that goes on (Snakemake's API in a session) collects as ever
    until it exits."""
    atexit.register(gc.freeze)


# The entry point of a job in its own process: the pickled job on stdin, the script as argument.
_SCRIPT_JOB = "from infrepro.workflow.jobs import _script_job; _script_job()"


def run_as_script_job(script: str | Path, smk: RuleJob) -> None:
    """Run a rule script in a Python process of its own, as Snakemake's ``script:`` directive
    runs one (plain Snakemake, ``snakemake_door``): a fresh interpreter whose BLAS and other
    thread pools take the job's threads (the variables Snakemake sets for a script job), and
    the script's own ``__main__`` guard (`run_rule_script`: the rule's log file). A failure
    raises here, which fails the job; its traceback is in the log and on stderr."""
    env = {**os.environ, **dict.fromkeys(THREAD_VARIABLES, str(smk.threads))}
    command = [sys.executable, "-P", "-c", _SCRIPT_JOB, str(script)]
    subprocess.run(command, input=pickle.dumps(smk), env=env, check=True)


def _script_job() -> None:
    """In a job's own process: run the script as ``__main__`` with the job as ``snakemake``."""
    smk = pickle.load(sys.stdin.buffer)
    runpy.run_path(sys.argv[1], init_globals={"snakemake": smk}, run_name="__main__")
