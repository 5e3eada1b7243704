"""Resources of the data-sized rules follow the rows of the evaluation table
(infrepro/workflow/resources.py; issue 14, goal 3)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from infrepro.analyses import ANALYSES
from infrepro.workflow import resources

PAPER_ROWS = 551_520


def fake_table(path: Path, rows: int) -> Path:
    """A Parquet file with ``rows`` rows that costs almost nothing to write (one constant
    int8 column): the resource functions read only the footer."""
    column = pa.array([0], type=pa.int8())
    table = pa.Table.from_arrays([pa.repeat(column[0], rows)], names=["x"])
    pq.write_table(table, path, compression="zstd")
    return path


def test_every_analysis_has_a_cost() -> None:
    assert set(resources.ANALYSIS_COST) == set(ANALYSES)


@pytest.mark.parametrize("analysis", ANALYSES)
def test_requests_grow_with_rows_and_attempts(analysis: str) -> None:
    cost = resources.ANALYSIS_COST[analysis]
    sizes = [0, 7_200, PAPER_ROWS, 3 * PAPER_ROWS, 10 * PAPER_ROWS, 100 * PAPER_ROWS]
    mem = [cost.mem_mb(rows) for rows in sizes]
    time = [cost.runtime(rows) for rows in sizes]
    assert mem == sorted(mem) and time == sorted(time)
    assert mem[0] == resources.MIN_MEM_MB and time[0] == resources.MIN_RUNTIME_MIN
    assert mem[-1] > 8000  # a hundred times the paper needs more than the old fixed 8000 MB
    assert cost.mem_mb(10 * PAPER_ROWS, attempt=2) == 2 * cost.mem_mb(10 * PAPER_ROWS)
    assert cost.runtime(10 * PAPER_ROWS, attempt=3) == 3 * cost.runtime(10 * PAPER_ROWS)


def test_the_measured_peaks_are_covered_with_headroom() -> None:
    """Every request is at least the peak measured by benchmarks/analysis_scale.py."""
    for (scale, job), peak_mib in MEASURED_PEAK_MIB.items():
        rows = scale * PAPER_ROWS
        if job == "assemble":
            mem = resources.ASSEMBLE_COST.mem_mb(rows)
        else:
            mem = resources.ANALYSIS_COST[job].mem_mb(rows)
        assert mem >= 1.4 * peak_mib * resources.MB_PER_MIB, (scale, job, mem, peak_mib)


def runs_table(path: Path, systems: int, runs: int = 3) -> str:
    """A runs table of ``systems`` systems with ``runs`` runs each."""
    names = [f"S{k:03d}" for k in range(systems) for _ in range(runs)]
    pq.write_table(
        pa.table({"run_id": [f"{n}_{i}" for i, n in enumerate(names)], "system": names}), path
    )
    return str(path)


def test_analysis_resources_read_the_rows_and_the_systems(tmp_path: Path) -> None:
    rows = 10 * PAPER_ROWS
    evaluation = str(fake_table(tmp_path / "evaluation.parquet", rows))
    runs = runs_table(tmp_path / "runs.parquet", 7)
    for analysis in ANALYSES:
        wildcards = SimpleNamespace(metric="ter")
        job_input = SimpleNamespace(evaluation=evaluation, runs=runs)
        cost = resources.ANALYSIS_COST[analysis]
        mem_mb, runtime = resources.analysis_resources(analysis)
        assert mem_mb(wildcards, job_input) == cost.mem_mb(rows, systems=7, runs=3)
        assert runtime(wildcards, job_input, 2) == cost.runtime(rows, 2)


# The largest-job peaks (MiB) of the systems axis of benchmarks/results/growth.md (3 runs x 400
# segments a system, plain Snakemake: a job's own processes): (analysis, systems) -> peak
MEASURED_SYSTEMS_PEAK_MIB = {
    ("conditional", 100): 1414,
    ("summary", 100): 735,
    ("comparison", 100): 747,
    ("conditional", 200): 5616,
    ("summary", 200): 2257,
    ("comparison", 200): 2259,
}


def test_many_systems_are_covered_with_headroom() -> None:
    """A run variance per system makes the run-aware models' memory grow with the systems
    squared at a fixed number of rows a system: at 100 systems (120,000 rows) the conditional
    analysis peaked at 1,414 MiB against the 1,000 MB that the rows alone asked for (a job a
    SLURM cluster would have killed). Every request now covers the measured peak."""
    for (analysis, systems), peak_mib in MEASURED_SYSTEMS_PEAK_MIB.items():
        rows = systems * 3 * 400
        mem = resources.ANALYSIS_COST[analysis].mem_mb(rows, systems=systems)
        assert mem >= 1.2 * peak_mib * resources.MB_PER_MIB, (analysis, systems, mem, peak_mib)
    # 4 systems x 300 runs x 400 segments, the seed the facet (metaparam's fixed effects):
    # 3,686 MiB measured, 1,200 MB asked for by the rows alone
    metaparam, rows = resources.ANALYSIS_COST["metaparam"], 4 * 300 * 400
    peak = 3686 * resources.MB_PER_MIB
    assert metaparam.mem_mb(rows, systems=4, runs=300) >= 1.4 * peak > metaparam.mem_mb(rows)
    # ... and the conditional analysis' run columns: 754 MiB measured (growth.md, runs axis;
    # 1,125 before Kenward-Roger took the runs as blocks), beyond the headroom of the 1,000 MB
    # the rows and systems alone ask for
    conditional = resources.ANALYSIS_COST["conditional"]
    peak = 754 * resources.MB_PER_MIB
    assert (
        conditional.mem_mb(rows, systems=4, runs=300)
        >= 1.4 * peak
        > conditional.mem_mb(rows, systems=4)
    )
    rows_only = resources.ANALYSIS_COST["conditional"].mem_mb(100 * 3 * 400)
    assert rows_only < MEASURED_SYSTEMS_PEAK_MIB["conditional", 100] * resources.MB_PER_MIB


def test_assemble_counts_the_rows_of_every_score_table(tmp_path: Path) -> None:
    """Every run's rows, once: each run has a file per metric (scores/<run>/<metric>.parquet)."""
    scores = []
    for i in range(3):
        (tmp_path / f"run{i}").mkdir()
        for metric in ("ter", "chrf"):
            path = tmp_path / f"run{i}" / f"{metric}.parquet"
            scores.append(str(fake_table(path, 1000 * (i + 1))))
    job_input = SimpleNamespace(scores=scores)
    assert resources.parquet_rows(scores) == 12000
    assert resources.assemble_mem_mb(None, job_input) == resources.ASSEMBLE_COST.mem_mb(6000)
    assert resources.assemble_runtime(None, job_input) == resources.ASSEMBLE_COST.runtime(6000)


def test_collect_tables_follows_the_size_of_its_parts(tmp_path: Path) -> None:
    small = tmp_path / "small.csv"
    small.write_text("a,b\n1,2\n")
    large = tmp_path / "large.csv"
    large.write_text("a,b\n" + "1.234567,2.345678\n" * 600_000)  # about 11 MB
    parts = [str(small)] + [str(large)] * 20  # about 220 MB of parts
    mem_small = resources.collect_mem_mb(None, SimpleNamespace(parts=[str(small)]))
    mem_large = resources.collect_mem_mb(None, SimpleNamespace(parts=parts))
    assert mem_small == resources.MIN_MEM_MB < mem_large
    time_small = resources.collect_runtime(None, SimpleNamespace(parts=[str(small)]))
    assert time_small == resources.MIN_RUNTIME_MIN
    assert resources.collect_runtime(None, SimpleNamespace(parts=parts), 2) >= 2 * time_small


def test_a_missing_input_is_reported_as_that_file_not_found(tmp_path: Path) -> None:
    """Snakemake shows a resource as <TBD> (and evaluates it again at submission) when the
    callable raises FileNotFoundError naming one of the job's input files."""
    missing = str(tmp_path / "results" / "evaluation.parquet")
    mem_mb, _ = resources.analysis_resources("comparison")
    with pytest.raises(FileNotFoundError) as err:
        mem_mb(SimpleNamespace(metric="ter"), SimpleNamespace(evaluation=missing, runs=missing))
    assert err.value.filename == missing


def test_importing_the_module_is_light() -> None:
    """The workflow imports it while parsing: no pandas, pyarrow or numpy."""
    code = (
        "import sys, infrepro.workflow.resources; "
        "print(sorted(m for m in ('pandas', 'pyarrow', 'numpy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# Peak RSS (MiB) measured by benchmarks/analysis_scale.py (benchmarks/results/analysis_scale.md).
MEASURED_PEAK_MIB = {
    (1, "assemble"): 308,
    (1, "comparison"): 518,
    (1, "conditional"): 594,
    (1, "variance"): 378,
    (1, "metaparam"): 508,
    (1, "classical"): 336,
    (3, "assemble"): 594,
    (3, "comparison"): 1105,
    (3, "conditional"): 1284,
    (3, "variance"): 690,
    (3, "metaparam"): 1243,
    (3, "classical"): 593,
    (10, "assemble"): 1526,
    (10, "comparison"): 3072,
    (10, "conditional"): 3525,
    (10, "variance"): 1493,
    (10, "metaparam"): 4698,
    (10, "classical"): 1380,
}


def test_priorities_run_longest_chains_first() -> None:
    """An analysis whose table another one needs starts before it; among the others, the
    costlier at the paper's size first; every analysis has its own priority."""
    priority = {name: resources.analysis_priority(name) for name in ANALYSES}
    assert sorted(priority.values()) == list(range(1, len(ANALYSES) + 1))
    for name, spec in ANALYSES.items():
        for need in spec.needs:
            assert priority[need.analysis] > priority[name], (need.analysis, name)

    def own(name: str) -> float:
        cost = resources.ANALYSIS_COST[name]
        return cost.base_s + cost.s_per_mrow * resources.PRIORITY_ROWS / 1e6

    needed = {n.analysis for spec in ANALYSES.values() for n in spec.needs}
    needing = {name for name, spec in ANALYSES.items() if spec.needs}
    alone = sorted(set(ANALYSES) - needed - needing, key=priority.get)
    assert [own(name) for name in alone] == sorted(own(name) for name in alone)


def test_the_last_analysis_is_the_one_whose_jobs_start_last() -> None:
    """The rule whose jobs preload the report: the lowest priority among those that run."""
    priority = {name: resources.analysis_priority(name) for name in ANALYSES}
    assert resources.last_analysis(ANALYSES) == min(priority, key=priority.get)
    some = sorted(ANALYSES)[:3]
    assert resources.last_analysis(some) == min(some, key=priority.get)
