"""Benchmark: wall time and peak memory of the assembly and analysis jobs at 1x, 3x and 10x the
paper's evaluation table (issue 14, goal 2).

Usage: `python benchmarks/analysis_scale.py [--scales 1 3 10] [--workdir /tmp/infrepro-scale]
[--analyses comparison conditional variance metaparam classical] [--jobs assemble analysis
collect_tables] [--reuse]`

1. Generates, per scale, the files the workflow's `assemble` rule reads, as the real workflow
   writes them (`results/inputs/runs.parquet`, `results/properties.parquet`,
   `results/tables/property_bins.csv`, `results/scores/<run>/<metric>.parquet`): a seeded synthetic
   experiment with the paper's design (baseline seeds vs a competitor's lambda x noise x seed
   grid), properties length / readability / word_rarity with tertile bins, metric TER with
   planted system, facet, run, segment and system x length effects. 1x is the paper: 11,490
   segments x 48 runs (18 baseline seeds, 3 lambda x 2 noise x 5 seeds) = 551,520 rows;
   3x = 2x segments x 1.5x runs (27 seeds; 3 lambda x 3 noise x 5 seeds); 10x = 4x segments x
   2.5x runs (45 seeds; 3 lambda x 5 noise x 5 seeds) = 5,515,200 rows.
2. Runs every job as its own process, exactly as Snakemake would run its `script:` (the rule's
   script executed with a `snakemake` object holding the rule's inputs, outputs, params and
   log; one BLAS thread, as Snakemake sets for a `threads: 1` rule): `assemble` (writes
   `results/evaluation.parquet`), then one `analysis` job per analysis
   (comparison, conditional, variance, metaparam after variance, classical), then
   `collect_tables`; one job at a time.
3. Prints and writes (`<workdir>/analysis_scale.json`), per (scale, job): rows of the evaluation
   table, wall time of the process (interpreter start and imports included), its CPU time
   (user + system: the better measure on a loaded machine) and its peak resident memory (the
   kernel's maximum RSS of the process, i.e. VmHWM, from wait4).

`--reuse` keeps generated inputs (and an assembled evaluation table) of an earlier call.
"""

from __future__ import annotations

import argparse
import json
import os
import runpy
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

# the BLAS thread variables Snakemake sets to a job's threads (every job here: one thread)
from infrepro.core.registry import ANALYSES
from infrepro.workflow.jobs import THREAD_VARIABLES

REPO = Path(__file__).resolve().parents[1]
JOBS = ["assemble", "analysis", "collect_tables"]
PROPERTIES = ["length", "readability", "word_rarity"]
FACETS = ["lambda", "noise", "seed"]
METRIC = "ter"
LAMBDAS = ["0.1", "0.5", "0.9"]
NOISES = ["gauss", "drop", "mask", "swap", "blank"]
PAPER_SEGMENTS = 11_490
# scale: (segment factor, baseline seeds, noise levels of the competitor, competitor seeds)
DESIGNS = {
    1: (1, 18, 2, 5),
    3: (2, 27, 3, 5),
    10: (4, 45, 5, 5),
}
SEED = 14


# --------------------------------------------------------------------------- data
def design(scale: int) -> tuple[int, list[dict[str, object]]]:
    """Number of segments and the runs (run_id, system, facets) of one scale."""
    factor, base_seeds, n_noise, comp_seeds = DESIGNS[scale]
    runs: list[dict[str, object]] = [
        {
            "run_id": f"baseline_s{e}",
            "system": "baseline",
            "lambda": None,
            "noise": None,
            "seed": str(e),
        }
        for e in range(1, base_seeds + 1)
    ]
    for lam in LAMBDAS:
        for noise in NOISES[:n_noise]:
            for e in range(1, comp_seeds + 1):
                runs.append(
                    {
                        "run_id": f"competitor_l{lam}_{noise}_s{e}",
                        "system": "competitor",
                        "lambda": lam,
                        "noise": noise,
                        "seed": str(e),
                    }
                )
    return PAPER_SEGMENTS * factor, runs


def generate(root: Path, scale: int) -> int:
    """Write the assemble rule's inputs for one scale; returns the number of evaluation rows."""
    import pandas as pd

    sys.path.insert(0, str(REPO))
    from infrepro.io import write_csv, write_parquet
    from infrepro.properties.bins import add_bins

    n_seg, runs = design(scale)
    rng = np.random.default_rng([SEED, scale])
    results = root / "results"
    for sub in ("inputs", "scores", "tables"):
        (results / sub).mkdir(parents=True, exist_ok=True)
    segments = pd.DataFrame(
        {
            "segment_id": [f"cnn-{s:06d}" for s in range(n_seg)],
            "length": np.clip(np.round(rng.lognormal(np.log(55), 0.3, n_seg)), 10, 200),
            "readability": rng.normal(55.0, 18.0, n_seg),
            "word_rarity": rng.normal(6.45, 0.3, n_seg),
        }
    )
    properties, bins = add_bins(segments, PROPERTIES, n_bins=3)
    for prop in PROPERTIES:  # the properties rule writes the bins as strings
        properties[prop + "_bin"] = properties[prop + "_bin"].astype(str)
    bins.insert(0, "computed_on", "source")
    write_parquet(properties, results / "properties.parquet")
    write_csv(bins, results / "tables" / "property_bins.csv")
    segment_effect = rng.normal(0.0, 0.1, n_seg)
    centred_length = (segments["length"].to_numpy() - 55.0) / 20.0
    lam_effect = {"0.1": -0.02, "0.5": 0.0, "0.9": 0.03}
    sheet = []
    for run in runs:
        competitor = run["system"] == "competitor"
        run_offset = rng.normal(0.0, 0.012 if competitor else 0.008)
        mean = 0.55 - (0.01 if competitor else 0.0) + run_offset
        mean += lam_effect.get(str(run["lambda"]), 0.0)
        mean += 0.005 * NOISES.index(str(run["noise"])) if competitor else 0.0
        slope = (0.02 if competitor else 0.01) + rng.normal(0.0, 0.003)
        ter = mean + segment_effect + slope * centred_length + rng.normal(0.0, 0.07, n_seg)
        ter = np.round(np.clip(ter, 0.0, None), 6)  # a TER-like score: a ratio >= 0
        scores = pd.DataFrame(
            {"run_id": run["run_id"], "segment_id": segments["segment_id"], METRIC: ter}
        )
        (results / "scores" / run["run_id"]).mkdir(exist_ok=True)
        write_parquet(scores, results / "scores" / run["run_id"] / f"{METRIC}.parquet")
        dev = 0.45 + 2 * (mean - 0.55) / 3 + rng.normal(0.0, 0.005)
        sheet.append(
            {
                **{k: run[k] for k in ("run_id", "system")},
                "dev_score": round(dev, 4),
                **{f: run[f] for f in FACETS},
            }
        )
    write_parquet(pd.DataFrame(sheet), results / "inputs" / "runs.parquet")
    return n_seg * len(runs)


# --------------------------------------------------------------------------- one job
class _Named(SimpleNamespace):
    """Snakemake's Namedlist, as far as the rule scripts use it."""

    def __getitem__(self, key: str) -> object:
        return getattr(self, key)

    def keys(self) -> list[str]:
        return list(vars(self))

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(vars(self).values())

    def __len__(self) -> int:
        return len(vars(self))


def job_spec(root: Path, job: str, analysis: str = "") -> SimpleNamespace:
    """The ``snakemake`` object of one job, with the paths and params of the workflow's rule."""
    sys.path.insert(0, str(REPO))
    from infrepro.core.vocabulary import TABLES

    r = "results"
    run_ids = sorted(p.parent.name for p in (root / r / "scores").glob(f"*/{METRIC}.parquet"))
    if job == "assemble":
        import pandas as pd

        order = list(pd.read_parquet(root / r / "inputs" / "runs.parquet")["run_id"])
        assert sorted(order) == run_ids
        return SimpleNamespace(
            rule="assemble",
            input=_Named(
                runs=f"{r}/inputs/runs.parquet",
                properties=f"{r}/properties.parquet",
                scores=[f"{r}/scores/{run}/{METRIC}.parquet" for run in order],
            ),
            output=_Named(evaluation=f"{r}/evaluation.parquet"),
            params=_Named(facets=FACETS, metrics=[METRIC]),
            wildcards=_Named(),
            log=["logs/assemble.log"],
        )
    if job == "analysis":
        needed = {  # the tables it needs from other analyses (the registry's needs)
            n.argument: f"{r}/analyses/{METRIC}/{n.analysis}/{n.table}.csv"
            for n in ANALYSES[analysis].needs
        }
        tables = ANALYSES[analysis].tables
        return SimpleNamespace(
            rule=f"analysis_{analysis}",
            input=_Named(
                evaluation=f"{r}/evaluation.parquet",
                runs=f"{r}/inputs/runs.parquet",
                bins=f"{r}/tables/property_bins.csv",
                **needed,
            ),
            output=_Named(**{t: f"{r}/analyses/{METRIC}/{analysis}/{t}.csv" for t in tables}),
            params=_Named(
                analysis=analysis,
                metric=METRIC,
                better="lower",
                baseline="baseline",
                facets=FACETS,
                properties=PROPERTIES,
                options={"dev_score_better": "lower"},
            ),
            wildcards=_Named(metric=METRIC),
            log=[f"logs/analysis/{METRIC}/{analysis}.log"],
        )
    if job == "collect_tables":
        return SimpleNamespace(
            rule="collect_tables",
            input=_Named(
                parts=[
                    f"{r}/analyses/{METRIC}/{a}/{t}.csv"
                    for a in ANALYSES
                    for t in ANALYSES[a].tables
                ]
            ),
            output=_Named(**{t: f"{r}/tables/{t}.csv" for t in TABLES}),
            wildcards=_Named(),
            params=_Named(),
            log=["logs/collect_tables.log"],
        )
    raise ValueError(job)


def run_job_here(root: Path, job: str, analysis: str) -> None:
    """Child process: run the rule's script as Snakemake's ``script:`` directive would."""
    os.chdir(root)
    smk = job_spec(root, job, analysis)
    for path in [*smk.output, *smk.log]:
        Path(str(path)).parent.mkdir(parents=True, exist_ok=True)
    script = {
        "assemble": "assemble.py",
        "analysis": "analysis.py",
        "collect_tables": "collect_tables.py",
    }[job]
    runpy.run_path(
        str(REPO / "scripts" / script), init_globals={"snakemake": smk}, run_name="__main__"
    )


def measure(root: Path, job: str, analysis: str = "", timeout: float = 0) -> dict[str, float]:
    """Run one job in a child process; its wall time, CPU time and peak RSS (ru_maxrss, the
    kernel's VmHWM). With ``timeout`` (s), a job still running then is killed and reported
    with ``timed_out``: its numbers are lower bounds."""
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--job",
        job,
        "--analysis",
        analysis,
        "--workdir",
        str(root),
    ]
    # one BLAS thread, as Snakemake runs a rule with `threads: 1` (it sets these variables)
    threads = {v: "1" for v in THREAD_VARIABLES}
    env = {**os.environ, **threads, "PYTHONPATH": str(REPO)}
    stderr_path = root / "logs" / f"{job}{'_' + analysis if analysis else ''}.stderr"
    stderr_path.parent.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    with stderr_path.open("w") as stderr:
        process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=stderr)
        timer = threading.Timer(timeout, process.kill) if timeout else None
        if timer is not None:
            timer.start()
        _, status, usage = os.wait4(process.pid, 0)
        if timer is not None:
            timer.cancel()
    wall = time.monotonic() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    timed_out = bool(timeout) and wall >= timeout and process.returncode != 0
    if process.returncode != 0 and not timed_out:
        err = stderr_path.read_text(errors="replace")
        sys.exit(f"{job} {analysis} failed in {root}:\n{err[-4000:]}")
    cpu = usage.ru_utime + usage.ru_stime
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "peak_mib": usage.ru_maxrss / 1024.0,
        "timed_out": timed_out,
        "load_avg_1min": os.getloadavg()[0],  # the machine's load when the job ended
    }


# --------------------------------------------------------------------------- main
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scales", type=int, nargs="+", default=[1, 3, 10])
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/infrepro-scale"))
    parser.add_argument("--analyses", nargs="+", default=list(ANALYSES))
    parser.add_argument("--jobs", nargs="+", default=JOBS)
    parser.add_argument("--reuse", action="store_true", help="keep generated inputs")
    parser.add_argument(
        "--timeout", type=float, default=0, help="kill a job after this many seconds (0: never)"
    )
    parser.add_argument("--job", help=argparse.SUPPRESS)  # child process
    parser.add_argument("--analysis", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.job:
        run_job_here(args.workdir, args.job, args.analysis)
        return
    records = []
    out = args.workdir / "analysis_scale.json"
    print(
        f"{'scale':>5} {'rows':>10} {'job':<24} {'wall s':>8} {'cpu s':>8} {'peak MiB':>9}",
        flush=True,
    )
    for scale in args.scales:
        root = args.workdir / f"x{scale}"
        n_seg, runs = design(scale)
        rows = n_seg * len(runs)
        if not (args.reuse and (root / "results" / "inputs" / "runs.parquet").exists()):
            start = time.monotonic()
            generate(root, scale)
            print(
                f"# x{scale}: generated {rows:,} rows in {time.monotonic() - start:.0f} s",
                flush=True,
            )
        plan: list[tuple[str, str]] = []
        if "assemble" in args.jobs:
            plan.append(("assemble", ""))
        if "analysis" in args.jobs:
            plan += [("analysis", a) for a in ANALYSES if a in args.analyses]
        if "collect_tables" in args.jobs:
            plan.append(("collect_tables", ""))
        for job, analysis in plan:
            result = measure(root, job, analysis, args.timeout)
            label = f"analysis:{analysis}" if analysis else job
            record = {
                "scale": scale,
                "rows": rows,
                "segments": n_seg,
                "runs": len(runs),
                "job": label,
                **result,
            }
            records.append(record)
            print(
                f"{scale:>5} {rows:>10,} {label:<24} {result['wall_s']:>8.1f} "
                f"{result['cpu_s']:>8.1f} {result['peak_mib']:>9.0f}"
                + ("  (killed at the timeout: lower bounds)" if result["timed_out"] else ""),
                flush=True,
            )
            previous = json.loads(out.read_text()) if out.exists() else []
            out.write_text(json.dumps([*previous, record], indent=1))


if __name__ == "__main__":
    main()
