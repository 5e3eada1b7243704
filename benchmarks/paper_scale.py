"""Benchmark: the whole workflow on an experiment the size of the paper's CNN/DailyMail study.

Usage: `python benchmarks/paper_scale.py [--scale 1.0] [--workdir /tmp/infrepro-paper-scale]
[--cores 2] [--added-seeds 2] [--sample 200]` (the work folder is emptied first)

1. Generates a seeded synthetic summarization experiment (`paper_scale/generate.py`): 11,490
   inputs x `--scale` (sources ~700 words, references ~55, hypotheses ~60), baseline 18 seeds,
   competitor 3 lambda x 2 noise x 5 seeds (48 runs, 551,520 scored segments at full scale),
   metrics TER and ROUGE-1/2/L, properties length, readability, word_rarity, word_rarity_sum,
   every analysis and the HTML report.
2. Runs `snakemake --cores 2` on it from scratch and prints, per stage (rule), the number of
   jobs, the stage's span (first job start to last job end), the summed and the longest job wall
   time (from Snakemake's log, 1 s resolution: `paper_scale/joblog.py`), and the largest peak RSS
   of a job process, of the worker processes and of Snakemake (`paper_scale/monitor.py`: /proc
   polling of VmHWM).
3. Appends `--added-seeds` baseline seeds to the runs sheet and times the incremental rerun.
4. Compares segments scored per second: the workflow's scoring stage (1 thread per job,
   including process start, reading and writing), infrepro's scorer in-process on a sample of
   the same pairs, and a plain loop over sacrebleu's TER and rouge-score's RougeScorer on that
   sample (extrapolated); the sample's scores must be identical (==).

Results are also written to `<workdir>/paper_scale.json`.
"""

from __future__ import annotations

import argparse
import json
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


def run_workflow(workdir: Path, cores: int, name: str) -> dict[str, object]:
    """Run Snakemake under the process monitor; return wall time, job records and exit code."""
    command = [
        sys.executable,
        "-m",
        "snakemake",
        "--snakefile",
        str(REPO / "Snakefile"),
        "--directory",
        str(workdir),
        "--configfile",
        str(workdir / "config.yaml"),
        "--cores",
        str(cores),
    ]
    log = workdir / f"snakemake_{name}.log"
    start = time.monotonic()
    epoch = time.time()
    with log.open("w") as handle:
        process = subprocess.Popen(command, cwd=workdir, stdout=handle, stderr=subprocess.STDOUT)
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


def scoring_speed(workdir: Path, sample: int, seed: int = 0) -> dict[str, float]:
    """Seconds per segment on a seeded sample of the experiment's pairs: infrepro's scorer
    (1 and 2 threads) vs a plain loop over sacrebleu TER and rouge-score ROUGE-1/2/L."""
    from rouge_score.rouge_scorer import RougeScorer
    from sacrebleu.metrics import TER

    from infrepro.metrics import rouge, score_segments, ter

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
        rouge._TOKENIZER = None  # cold tokenizer caches, as in a new job
        ter._TOKENIZER.__class__.__call__.cache_clear()  # type: ignore[attr-defined]
        t0 = time.perf_counter()
        fast = score_segments(hyps, pair_refs, METRICS, threads=threads)
        out[f"fast{threads}_s_per_seg"] = (time.perf_counter() - t0) / sample
        if not all(np.array_equal(fast[m].to_numpy(), plain[m]) for m in METRICS):
            sys.exit("infrepro's scores differ from sacrebleu / rouge-score on the sample")
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/infrepro-paper-scale"))
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the 11,490 inputs")
    parser.add_argument("--seed", type=int, default=6)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--added-seeds", type=int, default=2)
    parser.add_argument("--sample", type=int, default=200, help="pairs for the scorer comparison")
    args = parser.parse_args(argv)
    work = args.workdir.resolve()

    t0 = time.monotonic()
    shutil.rmtree(work, ignore_errors=True)
    runs, testset = generate(work, args.scale, args.seed)
    n_segments = len(testset)
    print(
        f"generated {n_segments} inputs x {len(runs)} runs = {n_segments * len(runs):,} pairs "
        f"in {time.monotonic() - t0:.0f} s under {work}",
        flush=True,
    )

    full = run_workflow(work, args.cores, "full")
    print_stage_table(f"From scratch (scale {args.scale}, --cores {args.cores})", full)

    noop = run_workflow(work, args.cores, "noop")
    print(f"\nrerun with nothing to do: {noop['wall']:.1f} s", flush=True)

    added = add_seeds(work, testset, args.added_seeds, args.seed)
    incremental = run_workflow(work, args.cores, "incremental")
    print_stage_table(
        f"Incremental rerun after adding {len(added)} seeds "
        f"({len(added) * n_segments:,} new pairs)",
        incremental,
    )

    speed = scoring_speed(work, args.sample)
    score_jobs = [j for j in full["jobs"] if j["stage"] == "score_run"]
    workflow_rate = len(score_jobs) * n_segments / sum(j["wall"] for j in score_jobs)
    span = next(r["span_s"] for r in stage_table(full) if r["stage"] == "score_run")
    total = n_segments * len(runs)
    plain = 1 / speed["plain_s_per_seg"]
    print(f"\n### Segments scored per second (TER + ROUGE-1/2/L), {total:,} pairs\n")
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
        "scale": args.scale,
        "segments": n_segments,
        "runs": len(runs),
        "full": {**full, "stages": stage_table(full)},
        "noop_wall": noop["wall"],
        "incremental": {**incremental, "stages": stage_table(incremental)},
        "scoring": {**speed, "workflow_seg_per_s": workflow_rate, "stage_span_s": span},
    }
    (work / "paper_scale.json").write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
