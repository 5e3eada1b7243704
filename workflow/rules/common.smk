# Shared set-up: validate every input before any job runs, and name the workflow's outputs.
import functools
import re
from pathlib import Path

from snakemake.exceptions import WorkflowError

from infrepro.io.errors import InputError
from infrepro.io.paths import portable_path
from infrepro.experiment.kept import kept_experiment
from infrepro.core.registry import SUMMARY
from infrepro.core.vocabulary import REPORT_TABLES, RUNS_TABLE, file_stem
from infrepro.io.pattern import is_pattern
from infrepro.workflow import snakemake_door, verbatim
from infrepro.workflow.digests import KeptDigests
from infrepro.io.ledger import run_looks
from infrepro.workflow.ledger import looks_seen, recorded_looks, record_looks
from infrepro.workflow.outputs import DIGEST_STORE, EXPERIMENT_STORE
from infrepro.plumbing.files import file_state

RESULTS = "results"
SCRIPTS = Path(workflow.basedir) / "scripts"
MAIN_PROCESS = snakemake_door.is_main_process(workflow)

try:
    # Jobs that Snakemake runs as its own processes (each SLURM job, for one) re-read this file;
    # the main process has already checked every hypotheses file, so they skip that re-read. A
    # parse whose config and input files are as the last check found them has its result back
    # (infrepro.experiment.kept: a rerun with nothing to do reads no input).
    EXPERIMENT = kept_experiment(
        config, check_hypotheses=MAIN_PROCESS, path=EXPERIMENT_STORE
    )
except InputError as err:
    raise WorkflowError(f"infrepro: invalid input: {err}") from None

RAW_MODE = EXPERIMENT.mode == "raw"
# runs from a path pattern (infrepro.io.pattern): prepare_runs also writes the runs it found
RUNS_FROM_PATTERN = RAW_MODE and is_pattern(config["runs"])
RUNS_CSV = f"{RESULTS}/tables/{RUNS_TABLE}.csv"
# Snakemake's internals (infrepro/workflow/snakemake_door.py), when its version is a tested one
# and INFREPRO_PLAIN_SNAKEMAKE is unset: each input file hashed once per version when jobs
# finish, the params check without pandas, the worker pool, an exit without the scheduler's
# leftover timers. Without them the workflow is plain Snakemake, with the same results.
INTERNALS = snakemake_door.open_door()
INPUT_DIGESTS = KeptDigests.open(DIGEST_STORE)
try:
    # Every rerun that adds runs is a look (docs/method.md §4e.12): the ledger beside the runs
    # sheet or scores file (a runs pattern's: in its folder) says at which look each run
    # arrived; runs it lacks are the next look, recorded when this run completes. None when the
    # runs declare a look column.
    LEDGER = recorded_looks(EXPERIMENT, config, INPUT_DIGESTS.sha256)
except InputError as err:
    raise WorkflowError(f"infrepro: invalid input: {err}") from None
LOOKS = None if LEDGER is None else LEDGER[0]
# the runs table's recorded looks ([] while they are one look and no plan is declared)
RUN_LOOKS = run_looks(LOOKS, config["analyses"]["sequential"]["max_runs"] is not None)
# the report's view: the same before and after a completed run writes the ledger, so that a
# rerun with nothing new reruns nothing
LOOKS_SEEN = looks_seen(LEDGER)
# the table verdicts are read from, as this run found it: a run that rewrites it is a look
VERDICTS = f"{RESULTS}/tables/decisions.csv"
VERDICTS_BEFORE = file_state(VERDICTS)
PROPERTY_OPTIONS = config["property_options"]


def hypotheses_of(wildcards):
    """The hypotheses file of one run."""
    return EXPERIMENT.hypotheses_path(wildcards.run_id)


def content_of(*paths):
    """A job parameter from the SHA-256 of each file's bytes. Snakemake's params trigger reruns
    the job whenever it changes, so a file whose content changed is reread whatever its mtime
    (`cp -p`, `rsync -a`, `tar x`, `touch -d`); the mtime trigger alone would miss an older one.
    A path may be a function of the job's wildcards, as an input function is. Each file is named
    by `portable_path` (relative to the experiment folder when inside it), so moving or cloning a
    finished experiment changes no parameter. A file whose state (size, times, inode) is as the
    last parse found it has its digest back unread (infrepro.workflow.digests)."""

    def digests(wildcards):
        files = [p(wildcards) if callable(p) else p for p in paths]
        return {portable_path(p): INPUT_DIGESTS.sha256(p) for p in files}

    return digests


def final_outputs():
    """Everything `rule all` asks for."""
    return [
        f"{RESULTS}/evaluation.parquet",
        f"{RESULTS}/tables/glrt.csv",
        f"{RESULTS}/report.html",
    ]


def rule_script(name):
    """scripts/<name> as the `script` parameter of its rule, by name and content. Editing the
    script reruns its jobs through the params trigger (the code trigger sees only the one-line
    run block), and where the workflow lives (its path from the experiment folder) is no part of
    any job's inputs, so a moved experiment or workflow reruns nothing."""
    return {name: file_digest(SCRIPTS / name)}


@functools.cache
def file_digest(path):
    """SHA-256 of a file of the workflow or the package (a script, a template), once per parse."""
    from infrepro.report.checksums import sha256

    return sha256(path)


def run_script(job, worker=False, preload=()):
    """Run the rule's `script` input for a job of a `run:` directive, ``run_script(locals())``
    (the block's namespace: input, output, params, ...; see infrepro.workflow.jobs): on a thread
    of Snakemake's process, or with `worker` in one of its long-lived worker processes. A job
    that Snakemake runs in a process of its own (a cluster job; a job of a `run:` directive
    without force-use-threads) runs in that process. `preload`: the scripts (in scripts/) of
    the stage after this job, loaded meanwhile by the workers it leaves idle (local runs).
    Plain Snakemake (no INTERNALS): every job in a Python process of its own, as a `script:`
    job."""
    from infrepro.workflow.jobs import (
        RuleJob,
        preload_in_workers,
        run_as_script_job,
        run_in_process,
        run_in_worker,
    )

    smk = RuleJob.of(job)
    (name,) = job["params"].script
    script = SCRIPTS / name
    if not INTERNALS:
        run_as_script_job(script, smk)
        return
    local = MAIN_PROCESS and snakemake_door.runs_locally(workflow)
    ahead = [SCRIPTS / p for p in preload] if local else []
    if worker and MAIN_PROCESS:
        run_in_worker(script, smk, workflow.cores, ahead)
    else:
        preload_in_workers(ahead, workflow.cores)
        run_in_process(script, smk)


def paper_outputs():
    """The paper tables, when the summary analysis runs."""
    if SUMMARY not in ANALYSES_TO_RUN:
        return []
    stems = [file_stem(m) for m in EXPERIMENT.metrics]
    return [f"{RESULTS}/paper/{stem}.{ext}" for stem in stems for ext in ("tex", "md")]


def produced_outputs():
    """Every file the jobs of the target `all` write under results/, sorted: the outputs as the
    rule files declare them (called after they are included)."""
    if RAW_MODE:
        files = [
            f"{RESULTS}/inputs/testset.parquet",
            f"{RESULTS}/properties.parquet",
            *rules.assemble.input.scores,
        ]
    else:
        files = []
    files += [
        *([RUNS_CSV] if RUNS_FROM_PATTERN else []),
        f"{RESULTS}/inputs/runs.parquet",
        f"{RESULTS}/evaluation.parquet",
        *rules.collect_tables.input.parts,
        *(f"{RESULTS}/tables/{name}.csv" for name in REPORT_TABLES),
        f"{RESULTS}/report.html",
        *paper_outputs(),
    ]
    # as text: Snakemake's file objects hold their rule, which a job's pickle cannot take
    return sorted(set(map(str, files)))


def finish():
    """The end of a run: the worker processes stopped, and the process exits when the last job
    is done (Snakemake's leftover scheduling timers cancelled, with INTERNALS)."""
    from infrepro.workflow.jobs import finish_run

    finish_run()
    if INTERNALS:
        snakemake_door.cancel_scheduler_timers()


# A completed run records its new runs as a look (docs/method.md §4e.12), then ends.
onsuccess:
    from infrepro.io.ledger import ledger_path

    ledger = ledger_path(config["runs" if RAW_MODE else "scores"])
    recorded = record_looks(LEDGER, ledger, VERDICTS, VERDICTS_BEFORE)
    if recorded:
        print(recorded)
    finish()


onerror:
    finish()
