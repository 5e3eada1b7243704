"""Benchmark: the conditional analysis (paper GLRTs and the run-aware fit of system x length)
of 4 systems with many runs each on 400 segments, for two source trees side by side (issue 45:
the runs axis, where the run-aware fit takes the engine's sparse path with a full C_BF).

Usage: python benchmarks/conditional_runs.py --before /tmp/before --after . [--runs 250]
       [--segments 400]
Prints each tree's wall and CPU seconds, peak memory, the ratio, and the largest relative
difference between the two trees' tables (the fits end within the optimiser's tolerance).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

CHILD = """
import json, resource, sys, time
import numpy as np
from infrepro.analyses.common.data import MetricData
from infrepro.analyses.common.fitlog import FitLog
from infrepro.analyses.conditional import conditional_analyses
from infrepro.core.schema import defaults
import pandas as pd
import infrepro

k, runs, segments = 4, int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(1)
effect = rng.normal(0, 0.2, segments)
length = rng.integers(5, 60, segments)
frames, run_rows = [], []
for i in range(k):
    for r in range(runs):
        run = f"S{i}_{r}"
        run_rows.append({"run_id": run, "system": f"S{i}"})
        y = 0.4 + 0.01 * i + effect + rng.normal(0, 0.02) + rng.normal(0, 0.05, segments)
        frames.append(pd.DataFrame({"run_id": run, "system": f"S{i}",
            "segment_id": [f"g{j}" for j in range(segments)], "y": y + 0.001 * length,
            "length": length}))
data = MetricData("y", "higher", "S0", pd.concat(frames, ignore_index=True),
                  pd.DataFrame(run_rows), [], ["length"], options=dict(defaults("analyses")))
start = time.perf_counter()
tables = conditional_analyses(data, FitLog("y"))
wall = time.perf_counter() - start
out = {name: t.select_dtypes("number").to_numpy().tolist() for name, t in tables.items()}
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"wall": wall, "peak_mib": peak, "source": infrepro.__file__, "tables": out}))
"""


def measure(tree: Path, runs: int, segments: int) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(runs), str(segments)],
        env={"PYTHONPATH": str(tree.resolve()), "PATH": "/usr/bin:/bin"},
        cwd=tree.resolve(),  # "python -c" puts the working folder first: the tree's package
        capture_output=True,
        text=True,
        check=True,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["total"] = time.perf_counter() - start
    result["cpu"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return result


def largest_difference(a: dict, b: dict) -> float:
    """The largest relative difference between the two trees' numbers (the fits end within the
    optimiser's tolerance of each other, so a change of arithmetic moves the last digits)."""
    import numpy as np

    worst = 0.0
    for key in a.keys() & b.keys():
        x, y = np.array(a[key], float), np.array(b[key], float)
        if x.shape != y.shape:
            return float("inf")
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.abs(x - y) / np.maximum(np.abs(y), 1e-300)
        worst = max(worst, float(np.nanmax(rel, initial=0.0)))
    return worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--after", type=Path, default=Path("."))
    parser.add_argument("--runs", type=int, default=250)
    parser.add_argument("--segments", type=int, default=400)
    args = parser.parse_args()
    got = {
        name: measure(tree, args.runs, args.segments)
        for name, tree in (("after", args.after), ("before", args.before))
    }
    for name, r in got.items():
        print(
            f"{name}: analysis {r['wall']:.1f} s, CPU {r['cpu']:.1f} s, "
            f"peak {r['peak_mib']:.0f} MiB ({r['source']})"
        )
    print(f"before / after: {got['before']['wall'] / got['after']['wall']:.2f}x")
    gap = largest_difference(got["after"]["tables"], got["before"]["tables"])
    print(f"largest relative difference between the trees' tables: {gap:.2g}")


if __name__ == "__main__":
    main()
