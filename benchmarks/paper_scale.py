"""Benchmark: the whole workflow on an experiment the size of the paper's CNN/DailyMail study,
two source trees side by side in one invocation.

Usage: `python benchmarks/paper_scale.py [--before /tmp/base] [--scale 1.0]
[--workdir /tmp/infrepro-paper-scale] [--cores 2] [--added-seeds 2] [--sample 200]
[--only before|after] [--out benchmarks/results/paper_scale.json]`
(the work folder is emptied first; `--before` is a checkout of the older tree, e.g.
`git clone -q <repo> /tmp/base && git -C /tmp/base checkout -q 094788e`; without it only this
tree runs)

1. Generates a seeded synthetic summarization experiment (`paper_scale/generate.py`): 11,490
   inputs x `--scale` (sources ~700 words, references ~55, hypotheses ~60), baseline 18 seeds,
   competitor 3 lambda x 2 noise x 5 seeds (48 runs, 551,520 scored segments at full scale),
   metrics TER and ROUGE-1/2/L, properties length, readability, word_rarity, word_rarity_sum,
   every analysis and the HTML report. Both trees get the same files.
2. Per tree, one after the other (never at once: the machine has 2 cores), with its own
   Snakefile and `PYTHONPATH=<tree>`: its compiled kernels are loaded once first (numba's cache
   warm, as on any run but a new user's first: `benchmarks/first_run.py` measures that one);
   then `snakemake --cores 2` from scratch, three runs with nothing to do, `--added-seeds`
   baseline seeds appended to the runs sheet and the incremental rerun; and the bundled example
   (`config/config.yaml`) from scratch and three runs with nothing to do. Per stage (rule): the
   number of jobs, the stage's span (first job start to last job end), the summed and the longest
   job wall time (from Snakemake's log, 1 s resolution: `paper_scale/joblog.py`), and the largest
   peak RSS of a job process, of the worker processes and of Snakemake
   (`paper_scale/monitor.py`: /proc polling of VmHWM).
3. A side-by-side table with each goal of issue 31 and its ratio (before / after), and the
   stages side by side.
4. Segments scored per second: the workflow's scoring stage, this tree's scorer in-process on a
   sample of the same pairs, and a plain loop over sacrebleu's TER and rouge-score's RougeScorer
   on that sample (extrapolated); the sample's scores must be identical (==).

Results are also written to `--out` (JSON).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from paper_scale.generate import add_seeds, generate
from paper_scale.joblog import parse_jobs
from paper_scale.monitor import ProcessMonitor, stage_of

REPO = Path(__file__).resolve().parents[1]
METRICS = ["ter", "rouge1", "rouge2", "rougeL"]
GIB = 1024 * 1024  # KiB per GiB
STAGE_ORDER = [
    "prepare_testset",
    "prepare_runs",
    "properties",
    "score_run",
    "assemble",
    "analysis",
    "collect_tables",
    "report_provenance",
    "report",
]
# issue 31's goals: (label, key of the run, seconds at most; None: measured, no goal here)
GOALS = [
    ("from scratch, paper scale", "full", 120.0),
    ("2 added seeds, paper scale", "incremental", 30.0),
    ("nothing to do, paper scale (mean of 3)", "noop", None),
    ("bundled example from scratch", "example_full", None),
    ("nothing to do, bundled example (mean of 3)", "example_noop", 1.3),
]


def _env(tree: Path) -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(tree))


def run_workflow(
    tree: Path, workdir: Path, cores: int, name: str, config: bool = True
) -> dict[str, object]:
    """Run the tree's Snakefile under the process monitor; wall time, job records, peaks."""
    command = [
        sys.executable, "-m", "snakemake", "--snakefile", str(tree / "Snakefile"),
        "--directory", str(workdir), "--cores", str(cores),
    ]  # fmt: skip
    if config:
        command += ["--configfile", str(workdir / "config.yaml")]
    log = workdir / f"snakemake_{name}.log"
    load = os.getloadavg()[0]
    start = time.monotonic()
    epoch = time.time()
    with log.open("w") as handle:
        process = subprocess.Popen(
            command, cwd=workdir, stdout=handle, stderr=subprocess.STDOUT, env=_env(tree)
        )
        monitor = ProcessMonitor(process.pid, workdir)
        monitor.start()
        code = process.wait()
        monitor.stop()
    wall = time.monotonic() - start
    if code != 0:
        sys.exit(f"snakemake failed ({code}); see {log}")
    # job times from Snakemake's log (every job, however it runs); peaks from the processes
    peaks: dict[str, float] = {}
    for r in monitor.jobs.values():
        stage = "workers" if r.label == "workers" else stage_of(r.label)
        peaks[stage] = max(peaks.get(stage, 0.0), r.peak_kib / 1024)
    jobs = [
        {
            "job": j["label"],
            "stage": "analysis" if str(j["rule"]).startswith("analysis") else j["rule"],
            "start": float(j["start"]) - epoch,
            "end": float(j["end"]) - epoch,
            "wall": float(j["end"]) - float(j["start"]),
        }
        for j in parse_jobs(log)
        if j["rule"] != "all"
    ]
    return {
        "wall": wall,
        "jobs": jobs,
        "peaks_mib": peaks,
        "snakemake_peak_mib": monitor.root_peak_kib / 1024,
        "load": [load, os.getloadavg()[0]],
    }


def stage_table(result: dict[str, object]) -> list[dict[str, object]]:
    """One row per stage: jobs, span, summed and longest job wall time, largest peak RSS."""
    jobs = result["jobs"]
    stages = sorted({j["stage"] for j in jobs}, key=lambda s: (STAGE_ORDER + [s]).index(s))
    rows = []
    for stage in stages:
        mine = [j for j in jobs if j["stage"] == stage]
        rows.append(
            {
                "stage": stage,
                "jobs": len(mine),
                "span_s": max(j["end"] for j in mine) - min(j["start"] for j in mine),
                "sum_s": sum(j["wall"] for j in mine),
                "max_job_s": max(j["wall"] for j in mine),
                "max_job": max(mine, key=lambda j: j["wall"])["job"],
                "peak_mib": result["peaks_mib"].get(stage),
            }
        )
    return rows


def print_stage_table(title: str, result: dict[str, object]) -> None:
    print(f"\n### {title}: {result['wall']:.0f} s wall in total\n")
    print("| stage | jobs | span (s) | job time, sum (s) | longest job (s) | peak RSS, max (MiB) |")
    print("|---|---:|---:|---:|---:|---:|")
    for row in stage_table(result):
        peak = row["peak_mib"]
        print(
            f"| {row['stage']} | {row['jobs']} | {row['span_s']:.0f} | {row['sum_s']:.0f} | "
            f"{row['max_job_s']:.0f} | {'(shared process)' if peak is None else f'{peak:.0f}'} |"
        )
    peaks = result["peaks_mib"]
    if "workers" in peaks:
        print(f"| (worker processes: every job they ran) | | | | | {peaks['workers']:.0f} |")
    own = result["snakemake_peak_mib"]
    print(f"| (snakemake itself, with its run: threads) | | | | | {own:.0f} |")
    worst = max([*peaks.values(), result["snakemake_peak_mib"]])
    verdict = "under" if worst * 1024 < 4 * GIB else "OVER"
    print(f"\nlargest process: {worst:.0f} MiB ({verdict} 4 GiB)")


def warm_kernels(tree: Path) -> float:
    """Load (or compile once) the tree's TER and ROUGE kernels in a process of its own."""
    code = (
        "from infrepro.metrics import score_segments;"
        "score_segments(['a b c d'], [['d a b c']], ['ter', 'rouge1', 'rouge2', 'rougeL'])"
    )
    start = time.monotonic()
    subprocess.run([sys.executable, "-c", code], env=_env(tree), check=True, cwd="/")
    return time.monotonic() - start


def mean_noop(tree: Path, workdir: Path, cores: int, name: str, config: bool = True) -> float:
    """Mean wall time of three reruns with nothing to do."""
    walls = [run_workflow(tree, workdir, cores, f"{name}{i}", config)["wall"] for i in range(3)]
    return sum(walls) / len(walls)  # type: ignore[arg-type]


def run_tree(
    name: str, tree: Path, data: Path, testset: list, work: Path, args
) -> dict[str, object]:
    """Every measurement of one tree on its own copy of the generated experiment."""
    workdir = work / name
    shutil.copytree(data, workdir)
    print(f"\n## {name}: {tree}\n\nkernels loaded in {warm_kernels(tree):.1f} s", flush=True)
    full = run_workflow(tree, workdir, args.cores, "full")
    print_stage_table(f"{name}: from scratch (scale {args.scale}, --cores {args.cores})", full)
    noop = mean_noop(tree, workdir, args.cores, "noop")
    print(f"\n{name}: rerun with nothing to do: {noop:.1f} s (mean of 3)", flush=True)
    added = add_seeds(workdir, testset, args.added_seeds, args.seed)
    incremental = run_workflow(tree, workdir, args.cores, "incremental")
    print_stage_table(
        f"{name}: incremental rerun after adding {len(added)} seeds "
        f"({len(added) * len(testset):,} new pairs)",
        incremental,
    )
    example = work / f"{name}-example"
    example.mkdir()
    shutil.copytree(tree / "config", example / "config")
    shutil.copytree(tree / "resources" / "example", example / "resources" / "example")
    example_full = run_workflow(tree, example, args.cores, "example", config=False)
    example_noop = mean_noop(tree, example, args.cores, "example_noop", config=False)
    print(
        f"\n{name}: bundled example from scratch {example_full['wall']:.1f} s, "
        f"nothing to do {example_noop:.2f} s (mean of 3)",
        flush=True,
    )
    return {
        "tree": str(tree),
        "full": {**full, "stages": stage_table(full)},
        "noop": noop,
        "incremental": {**incremental, "stages": stage_table(incremental)},
        "example_full": example_full["wall"],
        "example_noop": example_noop,
    }


def same_outputs(work: Path, names: list[str]) -> list[str]:
    """Whether the trees' end states agree: every results/tables/*.csv byte for byte and every
    run's scores equal (==), for the paper-scale experiment and the bundled example; one line
    each."""
    import pandas as pd

    lines = []
    for suffix in ("", "-example"):
        a, b = (work / f"{n}{suffix}" / "results" for n in names)
        tables = sorted(p.name for p in (a / "tables").glob("*.csv"))
        differ = [
            t for t in tables if (a / "tables" / t).read_bytes() != (b / "tables" / t).read_bytes()
        ]
        missing = sorted({p.name for p in (b / "tables").glob("*.csv")} ^ set(tables))
        scores = sorted(p.relative_to(a / "scores") for p in (a / "scores").rglob("*.parquet"))
        unequal = [
            s
            for s in scores
            if not pd.read_parquet(a / "scores" / s).equals(pd.read_parquet(b / "scores" / s))
        ]
        what = "bundled example" if suffix else "paper scale"
        verdict = "identical" if not (differ or missing or unequal) else "DIFFERENT"
        lines.append(
            f"{what}: {len(tables)} tables, {len(scores)} runs' scores: {verdict}"
            + (f" (tables {differ + missing}, scores {unequal})" if verdict != "identical" else "")
        )
    return lines


def _seconds(run: dict[str, object], key: str) -> float:
    value = run[key]
    return float(value["wall"] if isinstance(value, dict) else value)  # type: ignore[index]


def print_side_by_side(runs: dict[str, dict[str, object]]) -> None:
    """Each goal's time per tree, the ratio before / after and the goal; the stages."""
    names = list(runs)
    print("\n### Side by side\n")
    ratio = len(names) == 2
    print("| | " + " | ".join(names) + (" | before / after | goal |" if ratio else " | goal |"))
    print("|---" * (len(names) + (3 if ratio else 2)) + "|")
    for label, key, goal in GOALS:
        times = [_seconds(runs[n], key) for n in names]
        cells = [f"{t:.2f} s" if t < 10 else f"{t:.0f} s" for t in times]
        if ratio:
            cells.append(f"{times[0] / times[1]:.2f}x")
        met = "met" if times[-1] <= (goal or 0) else "NOT met"
        verdict = "" if goal is None else f"<= {goal:g} s: {met}"
        print(f"| {label} | " + " | ".join(cells) + f" | {verdict} |")
    for key, title in (("full", "from scratch"), ("incremental", "added seeds")):
        print(f"\n| stage, {title}: span / job time sum (s) | " + " | ".join(names) + " |")
        print("|---" * (len(names) + 1) + "|")
        tables = {n: {r["stage"]: r for r in runs[n][key]["stages"]} for n in names}  # type: ignore
        stages = sorted(
            {s for t in tables.values() for s in t}, key=lambda s: (STAGE_ORDER + [s]).index(s)
        )
        for stage in stages:
            cells = [
                f"{tables[n][stage]['jobs']} x: {tables[n][stage]['span_s']:.0f} / "
                f"{tables[n][stage]['sum_s']:.0f}"
                if stage in tables[n]
                else ""
                for n in names
            ]
            print(f"| {stage} | " + " | ".join(cells) + " |")


def scoring_speed(workdir: Path, sample: int, seed: int = 0) -> dict[str, float]:
    """Seconds per segment on a seeded sample of the experiment's pairs: infrepro's scorer
    (1 and 2 threads) vs a plain loop over sacrebleu TER and rouge-score ROUGE-1/2/L."""
    from rouge_score.rouge_scorer import RougeScorer
    from sacrebleu.metrics import TER

    from infrepro.metrics import pair_memo, rouge, score_segments, ter

    refs = [
        line.split("\t")[2]
        for line in (workdir / "testset.tsv").read_text(encoding="utf-8").splitlines()[1:]
    ]
    runs = [
        line.split("\t")[2]
        for line in (workdir / "runs.tsv").read_text(encoding="utf-8").splitlines()[1:]
    ]
    hyps_of = {path: (workdir / path).read_text(encoding="utf-8").splitlines() for path in runs}
    rng = random.Random(seed)
    picks = [(rng.choice(runs), rng.randrange(len(refs))) for _ in range(sample)]
    hyps = [hyps_of[run][i] for run, i in picks]
    pair_refs = [[refs[i]] for _, i in picks]

    t0 = time.perf_counter()
    metric = TER()
    scorer = RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)
    plain = {m: np.empty(sample) for m in METRICS}
    for k, (h, r) in enumerate(zip(hyps, pair_refs, strict=True)):
        plain["ter"][k] = metric.sentence_score(h, r).score / 100
        scores = scorer.score(r[0], h)
        for m in METRICS[1:]:
            plain[m][k] = scores[m].fmeasure
    t_plain = time.perf_counter() - t0

    score_segments(hyps[:5], pair_refs[:5], METRICS)  # load compiled kernels
    out: dict[str, float] = {"pairs": sample, "plain_s_per_seg": t_plain / sample}
    for threads in (1, 2):
        rouge._ENCODER = None  # cold tokenizer caches and pair memo, as in a new worker
        ter._ENCODER.start_afresh()
        pair_memo.PAIRS.clear()
        t0 = time.perf_counter()
        fast = score_segments(hyps, pair_refs, METRICS, threads=threads)
        out[f"fast{threads}_s_per_seg"] = (time.perf_counter() - t0) / sample
        if not all(np.array_equal(fast[m].to_numpy(), plain[m]) for m in METRICS):
            sys.exit("infrepro's scores differ from sacrebleu / rouge-score on the sample")
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", type=Path, help="a checkout of the older tree")
    parser.add_argument("--after", type=Path, default=REPO)
    parser.add_argument("--only", choices=["before", "after"])
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/infrepro-paper-scale"))
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the 11,490 inputs")
    parser.add_argument("--seed", type=int, default=6)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--added-seeds", type=int, default=2)
    parser.add_argument("--sample", type=int, default=200, help="pairs for the scorer comparison")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks/results/paper_scale.json")
    args = parser.parse_args(argv)
    work = args.workdir.resolve()

    t0 = time.monotonic()
    shutil.rmtree(work, ignore_errors=True)
    data = work / "data"
    runs, testset = generate(data, args.scale, args.seed)
    n_segments = len(testset)
    print(
        f"generated {n_segments} inputs x {len(runs)} runs = {n_segments * len(runs):,} pairs "
        f"in {time.monotonic() - t0:.0f} s under {data}",
        flush=True,
    )
    trees = {"after": args.after.resolve()}
    if args.before is not None:
        trees = {"before": args.before.resolve(), **trees}
    if args.only:
        trees = {args.only: trees[args.only]}
    results = {
        name: run_tree(name, tree, data, testset, work, args) for name, tree in trees.items()
    }
    print_side_by_side(results)
    if len(results) == 2:
        agree = same_outputs(work, list(results))
        print("\nOutputs, before against after:\n\n" + "\n".join(f"- {line}" for line in agree))

    speed = scoring_speed(work / list(trees)[-1], args.sample)
    full = results[list(trees)[-1]]["full"]
    score_jobs = [j for j in full["jobs"] if j["stage"] == "score_run"]  # type: ignore[index]
    workflow_rate = len(score_jobs) * n_segments / sum(j["wall"] for j in score_jobs)
    span = next(r["span_s"] for r in full["stages"] if r["stage"] == "score_run")  # type: ignore
    total = n_segments * len(runs)
    plain = 1 / speed["plain_s_per_seg"]
    print(f"\n### Segments scored per second (TER + ROUGE-1/2/L), {total:,} pairs, this tree\n")
    print("| scorer | segments/s | time for all pairs |")
    print("|---|---:|---:|")
    print(
        f"| workflow scoring stage (--cores {args.cores}; span) | {total / span:,.0f} | "
        f"{span:,.0f} s |"
    )
    print(
        f"| workflow score_run jobs (per job: job time, 1 thread) | {workflow_rate:,.0f} | "
        f"{total / workflow_rate:,.0f} s |"
    )
    for threads in (1, 2):
        rate = 1 / speed[f"fast{threads}_s_per_seg"]
        print(
            f"| infrepro score_segments in-process, {threads} thread(s), {args.sample} pairs "
            f"| {rate:,.0f} | {total / rate:,.0f} s (extrapolated) |"
        )
    print(
        f"| plain loop sacrebleu TER + rouge-score, {args.sample} pairs | {plain:,.1f} | "
        f"{total / plain:,.0f} s (extrapolated) |"
    )
    print("\n(sample scores identical to sacrebleu / rouge-score: yes)")

    report = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "scale": args.scale,
        "segments": n_segments,
        "runs": len(runs),
        "trees": results,
        "outputs": same_outputs(work, list(results)) if len(results) == 2 else None,
        "scoring": {**speed, "workflow_seg_per_s": workflow_rate, "stage_span_s": span},
    }
    args.out.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
