"""The user who declares nothing (issue 41, acceptance 1; docs/method.md §4e.12): runs arrive
one per system per rerun, from 3 to 10 runs per system, no look column, and the user stops at
the first directional verdict. Every rerun is a look recorded in the ledger by the workflow's
own functions; the decision is the summary analysis' own (``infrepro/validation/undeclared.py``).

Cells: null experiments (no difference) at run-SD ratios 1 and 4 (acceptance: false claims
≤ 0.05 + 1.5 MC SE), and B better by 3 run-mean SDs at ratio 1 (power). Beside them the audit's
numbers for fixed-sample verdicts at every rerun (0.142 at ratio 1, 0.196 at ratio 4).

Usage: nice python benchmarks/undeclared_looks.py [--n 1000] [--n-power 200] [--segments 100]
       [--processes 2] [--out benchmarks/results/undeclared_looks.md]
Each experiment's outcome is kept in benchmarks/results/undeclared_looks.jsonl (not committed),
so an interrupted run resumes; the same arguments give the same tables.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import platform
import time
from dataclasses import asdict
from pathlib import Path

from threadpoolctl import threadpool_limits

from infrepro.validation.calibration import clopper_pearson
from infrepro.validation.undeclared import FIRST, LAST, user_outcome

RESULTS = Path(__file__).resolve().parent / "results"
SEED = 41_000
AUDIT = {1.0: 0.142, 4.0: 0.196}  # fixed-sample verdicts at every rerun (the audit)
CELLS = [("null", 1.0, 0.0), ("null", 4.0, 0.0), ("power", 1.0, 3.0)]


def _key(kind: str, ratio: float, i: int) -> str:
    return f"{kind} r{ratio:g} {i}"


def _one(job: tuple[str, float, float, int, int]) -> tuple[str, dict[str, object]]:
    kind, ratio, effect, i, segments = job
    with threadpool_limits(1):
        seed = SEED + 100_000 * CELLS.index((kind, ratio, effect)) + i
        outcome = user_outcome(ratio, effect, seed, segments)
    value = {**asdict(outcome), "claim": outcome.claim, "unmarked": outcome.unmarked_claim}
    return _key(kind, ratio, i), value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--n-power", type=int, default=200)
    parser.add_argument("--segments", type=int, default=100)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--out", type=Path, default=RESULTS / "undeclared_looks.md")
    args = parser.parse_args()
    store = RESULTS / "undeclared_looks.jsonl"
    done: dict[str, dict[str, object]] = {}
    if store.exists():
        for line in store.read_text().splitlines():
            key, value = json.loads(line)
            done[key] = value
    jobs = [
        (kind, ratio, effect, i, args.segments)
        for kind, ratio, effect in CELLS
        for i in range(args.n if kind == "null" else args.n_power)
        if _key(kind, ratio, i) not in done
    ]
    start = time.perf_counter()
    with multiprocessing.Pool(args.processes) as pool, store.open("a") as out:
        for key, value in pool.imap_unordered(_one, jobs, chunksize=4):
            done[key] = value
            out.write(json.dumps([key, value]) + "\n")
    minutes = (time.perf_counter() - start) / 60
    se = math.sqrt(0.05 * 0.95 / args.n)
    bound = 0.05 + 1.5 * se
    lines = [
        "# The user who declares nothing (issue 41, acceptance 1)",
        "",
        f"`nice python benchmarks/undeclared_looks.py --n {args.n} --n-power {args.n_power} "
        f"--segments {args.segments}` on {platform.node()} ({os.cpu_count()} cores), "
        f"{minutes:.0f} min wall for the experiments not already stored. Runs arrive one per "
        f"system per rerun, {FIRST} to {LAST} runs per system, nothing declared; the ledger is "
        "written by the workflow's functions and the decision is the summary analysis' own "
        f"(`infrepro/validation/undeclared.py`): at the first look the fixed-sample verdict on "
        f"{FIRST} vs {FIRST} runs, from the second look the anytime-valid one "
        "(docs/method.md §4e.12). Per-segment scores at "
        f"{args.segments} segments (segment SD 0.2, residual SD 0.1, A's run SD 0.02, B's 0.02 × "
        "the ratio). A false claim: a directional verdict at any look of a null experiment. "
        "A claim with no assumption: the first look's directional verdict where its record names "
        "no assumption (docs/method.md §4c.5: Berger and Boos' test, valid at any ratio, reaches "
        "it too), else the sequence's (anytime-valid, any ratio); the user who reads a verdict "
        "marked 'assuming run-mean SDs within a factor of 2' as no claim and reruns on. "
        f"Rates with exact 95 % intervals; bound 0.05 + 1.5 MC SE = {bound:.4f}.",
        "",
        "| cell | experiments | claims with no assumption | bound | holds? | every directional "
        "verdict (marked or not) | at the first look | of which marked | unmarked, from the second "
        "look | "
        "named 'undeclared sequence' | fixed verdicts at every rerun (audit) |",
        "|---|---:|---|---:|---|---|---|---|---|---:|---|",
    ]
    for kind, ratio, effect in CELLS:
        n = args.n if kind == "null" else args.n_power
        rows = [done[_key(kind, ratio, i)] for i in range(n)]
        wanted = (lambda c: c != 0) if kind == "null" else (lambda c: c > 0)
        unmarked = sum(wanted(r["unmarked"]) for r in rows)
        claims = sum(wanted(r["claim"]) for r in rows)
        first = sum(wanted(r["first_look"]) for r in rows)
        marked = sum(wanted(r["first_look"]) and bool(r["first_assumes"]) for r in rows)
        later = sum(
            wanted(r["unmarked"]) and not (wanted(r["first_look"]) and not r["first_assumes"])
            for r in rows
        )
        named = sum(bool(r["named"]) for r in rows)
        rate, low, high = unmarked / n, *clopper_pearson(unmarked, n)
        every, e_low, e_high = claims / n, *clopper_pearson(claims, n)
        holds = "yes" if rate <= bound else "NO"
        label = f"{kind} ratio {ratio:g}" + (f", B better by {effect:g} SDs" if effect else "")
        audit = f"{AUDIT[ratio]:.3f}" if kind == "null" else "–"
        shared = (
            f"{every:.3f} [{e_low:.3f}, {e_high:.3f}] | {first / n:.3f} | {marked / n:.3f} | "
            f"{later / n:.3f} | {named}"
        )
        lines.append(
            f"| {label} | {n} | {rate:.3f} [{low:.3f}, {high:.3f}] | "
            f"{bound:.4f} | {holds} | {shared} | {audit} |"
            if kind == "null"
            else f"| {label} | {n} | {rate:.3f} [{low:.3f}, {high:.3f}] (power) | – | – | "
            f"{shared} | – |"
        )
    text = "\n".join(lines) + "\n"
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
