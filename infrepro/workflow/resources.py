"""Memory and wall time of the data-sized jobs, from the rows of the evaluation table.

The workflow's ``assemble``, ``analysis`` and ``collect_tables`` rules take their ``mem_mb``
and ``runtime`` from these functions (Snakemake callable resources), so a cluster job asks for
what its input needs: a 10x experiment gets more than the bundled example without
``--set-resources``. The rows are read from the Parquet footers (``num_rows``), not the data;
while an input does not exist yet (planning a run from scratch), the functions raise
FileNotFoundError for it, which Snakemake shows as ``<TBD>`` and evaluates again when the job
is about to be submitted and its input exists.

Calibration: benchmarks/analysis_scale.py (results in benchmarks/results/analysis_scale.md)
measured every job at 1x, 3x and 10x the paper's 551,520 rows. Each cost is a line
``base + per_million * rows / 1e6`` through the measured peaks (MiB) and CPU times, with
headroom: memory x MEM_HEADROOM, time x TIME_HEADROOM (shared or slower nodes), both x the
attempt number when Snakemake retries a failed job (``--retries``). This module imports only
the standard library and infrepro.core.registry at import time (the workflow parses it on every
invocation).
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from infrepro.core import registry

MEM_HEADROOM = 1.5
TIME_HEADROOM = 4.0
MIN_MEM_MB = 1000
MIN_RUNTIME_MIN = 10
MB_PER_MIB = 1.048576


@dataclass(frozen=True)
class Cost(registry.Cost):
    """A job's cost model (registry.Cost) with the headroom that sizes its request."""

    def mem_mb(self, rows: int, attempt: int = 1, systems: int = 0, runs: int = 0) -> int:
        """``mem_mb`` (MB, as Snakemake and SLURM count) for a table of ``rows`` rows of
        ``systems`` systems, ``runs`` runs the system with the most."""
        mib = self.base_mib + self.mib_per_mrow * rows / 1e6
        mib += self.mib_per_system2 * systems**2 + self.mib_per_run2 * runs**2
        mib *= MEM_HEADROOM
        return max(MIN_MEM_MB, math.ceil(mib * MB_PER_MIB / 100) * 100) * max(1, attempt)

    def runtime(self, rows: int, attempt: int = 1) -> int:
        """``runtime`` (minutes) for a table of ``rows`` rows."""
        seconds = (self.base_s + self.s_per_mrow * rows / 1e6) * TIME_HEADROOM
        return max(MIN_RUNTIME_MIN, math.ceil(seconds / 60)) * max(1, attempt)


# each analysis's cost is in its registry entry (fitted to benchmarks/results/analysis_scale.md)
ANALYSIS_COST = {name: Cost(**vars(spec.cost)) for name, spec in registry.ANALYSES.items()}
ASSEMBLE_COST = Cost(300, 245, 5, 4)
# collect_tables reads the CSV parts of the analyses: rows of the evaluation table do not
# size it; CSV megabytes do (string columns take about ten times their file size)
COLLECT_BASE_MIB = 300
COLLECT_MIB_PER_CSV_MB = 10
COLLECT_COST_PER_CSV_MB_S = 2


def _exists(path: str) -> str:
    if not os.path.exists(path):
        raise FileNotFoundError(2, "input not yet created", str(path))
    return str(path)


def parquet_rows(paths: Iterable[Any]) -> int:
    """Total rows of Parquet files, from their footers (FileNotFoundError for a missing one)."""
    import pyarrow.parquet as pq  # at job-scheduling time only, not while parsing the workflow

    return sum(pq.ParquetFile(_exists(str(path))).metadata.num_rows for path in paths)


def run_counts(runs: Any) -> tuple[int, int]:
    """The runs table's systems and the runs of the system with the most (its ``system``
    column alone is read)."""
    import pyarrow.compute as pc  # at job-scheduling time only, as parquet_rows
    import pyarrow.parquet as pq

    from infrepro.core.vocabulary import SYSTEM

    column = pq.read_table(_exists(str(_single(runs)[0])), columns=[SYSTEM]).column(0)
    counts = pc.value_counts(column).field("counts")
    return len(counts), int(pc.max(counts).as_py() or 0)


def _single(value: Any) -> list[Any]:
    return [value] if isinstance(value, str | os.PathLike) else list(value)


def analysis_resources(analysis: str) -> tuple[Callable[..., int], Callable[..., int]]:
    """``mem_mb`` and ``runtime`` callables of one analysis's rule: its cost at the evaluation
    table's rows (read from the Parquet footer when the job is submitted) and, for memory, the
    runs table's systems and runs."""
    cost = ANALYSIS_COST[analysis]

    def mem_mb(wildcards: Any, input: Any, attempt: int = 1) -> int:
        rows = parquet_rows(_single(input.evaluation))
        counts = (0, 0)
        if cost.mib_per_system2 or cost.mib_per_run2:
            counts = run_counts(input.runs)
        return cost.mem_mb(rows, attempt, *counts)

    def runtime(wildcards: Any, input: Any, attempt: int = 1) -> int:
        return cost.runtime(parquet_rows(_single(input.evaluation)), attempt)

    return mem_mb, runtime


PRIORITY_ROWS = 551_520  # the paper's evaluation rows: where the analyses' costs are compared


def analysis_priority(analysis: str) -> int:
    """Snakemake ``priority`` of an analysis' jobs: analyses on longer chains of CPU time
    (their own cost at the paper's size plus the longest chain of the analyses that need their
    tables) start first, so that on few cores the short jobs fill the gaps at the end instead
    of a long one running alone (longest-path-first list scheduling)."""
    return 1 + _ranking().index(analysis)


def last_analysis(run: Iterable[str]) -> str:
    """The analysis of ``run`` whose jobs start last (the lowest priority): its jobs have the
    workers they leave idle load the report meanwhile, so the report's imports overlap the
    analyses' last jobs and the collection of their tables instead of delaying the report."""
    return min(run, key=analysis_priority)


@functools.cache
def _ranking() -> list[str]:
    """The analyses by the CPU time of their longest chain, shortest first."""
    return sorted(registry.ANALYSES, key=lambda name: (_chain(name), name))


@functools.cache
def _chain(name: str) -> float:
    cost = ANALYSIS_COST[name]
    users = [a for a, spec in registry.ANALYSES.items() if name in {n.analysis for n in spec.needs}]
    own = cost.base_s + cost.s_per_mrow * PRIORITY_ROWS / 1e6
    return own + max((_chain(a) for a in users), default=0.0)


def _score_rows(scores: Any) -> int:
    """The evaluation table's rows: the rows of one metric's score files (each run has a file
    per metric, ``scores/<run>/<metric>.parquet``, all with its rows)."""
    paths = _single(scores)
    first = os.path.basename(str(paths[0])) if paths else ""
    return parquet_rows(p for p in paths if os.path.basename(str(p)) == first)


def assemble_mem_mb(wildcards: Any, input: Any, attempt: int = 1) -> int:
    """``mem_mb`` of the assembly: the evaluation table's rows are the per-run score rows."""
    return ASSEMBLE_COST.mem_mb(_score_rows(input.scores), attempt)


def assemble_runtime(wildcards: Any, input: Any, attempt: int = 1) -> int:
    """``runtime`` (minutes) of the assembly."""
    return ASSEMBLE_COST.runtime(_score_rows(input.scores), attempt)


def _csv_mb(paths: Iterable[Any]) -> float:
    return sum(os.path.getsize(_exists(str(path))) for path in paths) / 1e6


def collect_mem_mb(wildcards: Any, input: Any, attempt: int = 1) -> int:
    """``mem_mb`` of collect_tables, from the megabytes of the table parts it concatenates."""
    mib = COLLECT_BASE_MIB + COLLECT_MIB_PER_CSV_MB * _csv_mb(_single(input.parts))
    mb = math.ceil(mib * MEM_HEADROOM * MB_PER_MIB / 100) * 100
    return max(MIN_MEM_MB, mb) * max(1, attempt)


def collect_runtime(wildcards: Any, input: Any, attempt: int = 1) -> int:
    """``runtime`` (minutes) of collect_tables."""
    seconds = (5 + COLLECT_COST_PER_CSV_MB_S * _csv_mb(_single(input.parts))) * TIME_HEADROOM
    return max(MIN_RUNTIME_MIN, math.ceil(seconds / 60)) * max(1, attempt)
