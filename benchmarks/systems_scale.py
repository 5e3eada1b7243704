"""Benchmark: the issue-45 experiment at 200 systems (and 20) from scratch and after one new seed,
two source trees side by side: wall time with `snakemake --cores 2` (the worker pool, as a user
runs it), time per job, `results/tables/*.csv` and report size, the page's height at 1400 px;
then one seed added to one system (a new run of S01) and the workflow run again.

Usage: `python benchmarks/systems_scale.py [--before /tmp/before] [--after .] [--systems 20
200] [--scratch-trees before after] [--workdir /tmp/infrepro-systems] [--out
benchmarks/results/systems_scale.json]`

The experiment is growth.py's (`write_design`: many_systems.py's seeded scores, one metric `chrf`
on the points scale, the seed as facet, `length` as property; default analyses, the `baseline`
family), 3 runs per system and 400 segments. The new seed is run 4 of S01: its scores drawn as
`write_experiment` draws a run (seeded). Both trees run from scratch at every size (one after
the other: the machine has 2 cores); the new seed is run for the trees in `--seed-trees` (the
after tree by default). Per job, the time is Snakemake's own (many_systems.job_times).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from growth import write_design
from many_systems import job_times, page_heights

REPO = Path(__file__).resolve().parents[1]
RUNS, SEGMENTS = 3, 400
NEW_SEED_SYSTEM, NEW_SEED = "S01", "4"


def add_seed(root: Path) -> None:
    """Run 4 of S01: its scores are run 1's with a run shift and new segment noise (seeded)."""
    scores = pd.read_csv(root / "scores.csv", dtype={"seed": str})
    rng = np.random.default_rng(45)
    new = scores[(scores["system"] == NEW_SEED_SYSTEM) & (scores["seed"] == "1")].copy()
    new["seed"] = NEW_SEED
    new["chrf"] = (new["chrf"] + rng.normal(0, 1) + rng.normal(0, 5, len(new))).round(4)
    pd.concat([scores, new]).to_csv(root / "scores.csv", index=False)


def run(tree: Path, workdir: Path) -> dict:
    """The tree's workflow in ``workdir``: wall time, per-job times and the output sizes."""
    command = [
        sys.executable, "-m", "snakemake", "--snakefile", str(tree / "Snakefile"),
        "--directory", str(workdir), "--configfile", str(workdir / "config.yaml"),
        "--cores", "2",
    ]  # fmt: skip
    begin = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": str(tree)}  # the tree's own package
    done = subprocess.run(command, cwd=workdir, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - begin
    tables = sorted((workdir / "results" / "tables").glob("*.csv"))
    report = workdir / "results" / "report.html"
    return {
        "ok": done.returncode == 0,
        "wall_s": round(wall, 1),
        "jobs_s": {
            rule: sum(times) for rule, times in job_times(done.stdout + done.stderr).items()
        },
        "tables_mb": round(sum(t.stat().st_size for t in tables) / 1e6, 2),
        "largest_tables_mb": {
            t.name: round(t.stat().st_size / 1e6, 2)
            for t in sorted(tables, key=lambda t: -t.stat().st_size)[:4]
        },
        "report_mb": round(report.stat().st_size / 1e6, 2) if report.is_file() else None,
        "tail": (done.stdout + done.stderr).splitlines()[-3:],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, default=Path("/tmp/before"))
    parser.add_argument("--after", type=Path, default=REPO)
    parser.add_argument("--systems", type=int, nargs="+", default=[20, 200])
    parser.add_argument("--seed-trees", nargs="+", default=["after"])
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/infrepro-systems"))
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks/results/systems_scale.json")
    args = parser.parse_args()
    trees = {"before": args.before.resolve(), "after": args.after.resolve()}
    results: dict = {"trees": {}, "runs": []}
    for name, tree in trees.items():
        head = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True).stdout.strip()  # fmt: skip
        results["trees"][name] = head
    for systems in args.systems:
        data = args.workdir / f"data-{systems}"
        if not (data / "config.yaml").is_file():
            write_design(data, systems, RUNS, SEGMENTS)
        for name, tree in trees.items():
            workdir = args.workdir / f"{systems}-{name}"
            shutil.rmtree(workdir, ignore_errors=True)
            shutil.copytree(data, workdir)
            scratch = run(tree, workdir)
            if scratch["report_mb"] is not None:
                top, page = page_heights(workdir / "results" / "report.html")
                scratch["page_px"], scratch["top_px"] = page, top
            row = {"systems": systems, "tree": name, "scratch": scratch}
            if name in args.seed_trees and scratch["ok"]:
                add_seed(workdir)
                row["new_seed"] = run(tree, workdir)
            print(json.dumps(row), flush=True)
            results["runs"].append(row)
            args.out.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
