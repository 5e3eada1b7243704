"""What the default step-down (docs/method.md §4c.10) spends of α, beside single-step
Bonferroni (the default before it) and Holm on the same marginal p of the same experiments.

Each experiment is decided once by ``decide`` with the defaults (model M, REML, Kenward-Roger,
the calibrated pair tests, ``analyses.adjust: step-down``); Bonferroni's and Holm's verdicts
are read from the same records' marginal p and improvements. Designs (100 segments, the
decision benchmark's systems, ``infrepro/validation/decision.py``):

- ``k5-r1`` ... ``k10-r4``: 5 or 10 identical systems with 3-5 runs, run SDs from
  0.02 / sqrt(r) to 0.02 sqrt(r) across systems (run-SD ratio r = 1, 2, 4 between the first
  and the last): family-wise false claims, and the false claims no assumption marks (§4c.5);
- ``k5-d1`` ... ``k10-d2``: the same at ratio 1 with true means spaced by d = 1, 2 SDs of a run
  mean: power per comparison (and wrong directions, counted as false claims);
- ``o5``, ``o10``, ``o10-d0.5``: single outputs (one run a system, no run noise: a pair of
  outputs is its own estimand, §4c.4): every pair is M's t test, the step-down's max-t block,
  beside single-step max-t.

Usage: python benchmarks/stepdown.py [--experiments 1000] [--power 300]
       [--records /tmp/stepdown.jsonl] [--report benchmarks/results/stepdown.md]
       [--levels infrepro/assets/stepdown_levels.csv]
Records are appended as they finish (a rerun resumes); the report and the levels the report's
caption quotes are written from them.
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import multiprocessing
import os
import sys
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from infrepro.analyses.common.fitlog import FitLog
from infrepro.analyses.decision.summary import Settings, decide
from infrepro.core.decisions import FAMILIES, MAX_T
from infrepro.stats.pvalues import holm_log10
from infrepro.validation.calibration import ALPHA, clopper_pearson
from infrepro.validation.decision import RANK_UNIT, several_systems

RUN_SD = 0.02
SEED = 7_100


def design(key: str) -> tuple[int, float, float, tuple[int, int]]:
    """(systems, run-SD ratio, spacing in run-mean SDs, runs per system) of a cell's key."""
    outputs = key.startswith("o")
    k = int(key[1:].split("-")[0])
    ratio = float(key.split("-r")[1]) if "-r" in key else 1.0
    spacing = float(key.split("-d")[1]) if "-d" in key else 0.0
    return k, ratio, spacing, (1, 1) if outputs else (3, 5)


def experiment(key: str, i: int):
    k, ratio, spacing, runs = design(key)
    effects = [spacing * RANK_UNIT * j for j in range(k)]
    sds = (RUN_SD / math.sqrt(ratio), RUN_SD * math.sqrt(ratio))
    if runs == (1, 1):  # one output a system: its claim is about outputs, so no run noise
        sds = (0.0, 0.0)
    seed = SEED + 1_000_000 * (sorted(CELLS).index(key) + 1) + i
    return several_systems(k, seed, effects, sds, runs), effects


def verdicts(records, method: str) -> list[bool]:
    """Which records a procedure calls directional, from their marginal p."""
    p = np.array([r.log10_p for r in records])
    cut = math.log10(ALPHA)
    if method == "bonferroni":
        return [bool(x) for x in p + math.log10(len(p)) < cut]
    if method == "holm":
        return [bool(x) for x in holm_log10(p) < cut]
    return [r.directional for r in records]


def one(job: tuple[str, int]) -> tuple[str, int, dict | None]:
    key, i = job
    os.nice(5)
    with threadpool_limits(limits=1):
        data, effects = experiment(key, i)
        truth = dict(zip(data.systems, effects, strict=True))
        adjusts = ("step-down", MAX_T) if key.startswith("o") else ("step-down",)
        out: dict[str, object] = {}
        for adjust in adjusts:
            result = decide(data, FitLog(data.metric), Settings(alpha=ALPHA, adjust=adjust))
            if not result.records:
                return key, i, None
            for family in FAMILIES:
                records = [r for r in result.records if r.family == family]
                gains = [truth[r.system] - truth[r.reference] for r in records]
                methods = ("step-down", "holm", "bonferroni") if adjust != MAX_T else (MAX_T,)
                for method in methods:
                    said = verdicts(records, method)
                    false = [
                        s and (g == 0 or (r.improvement > 0) != (g > 0))
                        for s, g, r in zip(said, gains, records, strict=True)
                    ]
                    right = [
                        s and g != 0 and (r.improvement > 0) == (g > 0)
                        for s, g, r in zip(said, gains, records, strict=True)
                    ]
                    out[f"{family}:{method}:false"] = any(false)
                    out[f"{family}:{method}:right"] = sum(right)
                    out[f"{family}:{method}:said"] = sum(said)
                out[f"{family}:true"] = sum(g != 0 for g in gains)
                if adjust == "step-down":
                    # under the global null the first step decides: any rejection at level a
                    # is min p̃ < a (the adjusted p do not depend on α)
                    out[f"{family}:min"] = min(r.log10_p_adjusted for r in records)
                    out[f"{family}:unmarked"] = any(
                        r.directional and not r.assumption and g == 0
                        for r, g in zip(records, gains, strict=True)
                    )
                    out[f"{family}:agree"] = all(
                        (r.lower > 0 or r.upper < 0) == r.directional for r in records
                    )
        return key, i, out


CELLS = {
    **{f"k{k}-r{r}": "fwer" for k in (5, 10) for r in (1, 2, 4)},
    **{f"k{k}-d{d}": "power" for k in (5, 10) for d in (1, 2)},
    "o5": "fwer",
    "o10": "fwer",
    "o10-d0.5": "power",
}


def report(rows: dict[str, list[dict]], path: Path, command: str) -> None:
    lines = [
        "# The default step-down: family-wise false claims and power",
        "",
        f"`{command}` (`benchmarks/stepdown.py`; docs/method.md §4c.10). One `decide` with the",
        "defaults per experiment; Holm and single-step Bonferroni read the same records' marginal",
        "p. A false claim is a directional verdict where the true means are equal or in the",
        "other direction; *unmarked*: one no assumption mark qualifies (§4c.5). Power: right",
        "directional verdicts per pair whose true means differ. 95 % Clopper-Pearson intervals.",
        "",
        "| design | family | experiments | procedure | any false claim [95 %] | unmarked | "
        "power per pair | directional verdicts | intervals agree |",
        "|---|---|---:|---|---|---|---|---:|---|",
    ]
    for key in CELLS:
        got = [o for o in rows.get(key, []) if o]
        if not got:
            continue
        k, ratio, spacing, runs = design(key)
        what = f"{k} systems, {'1 run' if runs == (1, 1) else '3-5 runs'}, ratio {ratio:g}" + (
            f", spaced {spacing:g} SD" if spacing else ""
        )
        methods = ["step-down", "holm", "bonferroni"] + ([MAX_T] if key.startswith("o") else [])
        for family in FAMILIES:
            for method in methods:
                n = len(got)
                false = sum(o[f"{family}:{method}:false"] for o in got)
                low, high = clopper_pearson(false, n)
                true = sum(o[f"{family}:true"] for o in got)
                right = sum(o[f"{family}:{method}:right"] for o in got)
                said = sum(o[f"{family}:{method}:said"] for o in got)
                power = f"{right / true:.3f}" if true else ""
                unmarked = agree = ""
                if method == "step-down":
                    unmarked = f"{sum(o[f'{family}:unmarked'] for o in got) / n:.3f}"
                    agree = f"{sum(o[f'{family}:agree'] for o in got)} of {n}"
                lines.append(
                    f"| {what} | `{family}` | {n} | {method} | {false / n:.3f} "
                    f"[{low:.3f}, {high:.3f}] | {unmarked} | {power} | {said} | {agree} |"
                )
    path.write_text("\n".join(lines) + "\n")


LEVELS = (0.01, 0.05, 0.1, 0.2)  # the α the caption's measured level is read at


def write_levels(rows: dict[str, list[dict]], path: Path) -> None:
    """The step-down's family-wise false claims per null design at each α of ``LEVELS``, for
    the report's caption (``infrepro/assets/stepdown_levels.csv``): under the global null a
    family rejects anything exactly when its smallest adjusted p is below α."""
    lines = ["family,runs,systems,ratio,alpha,experiments,false_claims,upper"]
    for key, kind in CELLS.items():
        got = [o for o in rows.get(key, []) if o]
        if kind != "fwer" or not got:
            continue
        k, ratio, _, runs = design(key)
        for family in FAMILIES:
            for alpha in LEVELS:
                false = sum(o[f"{family}:min"] < math.log10(alpha) for o in got)
                _, high = clopper_pearson(false, len(got))
                lines.append(
                    f"{family},{runs[0]},{k},{ratio:g},{alpha:g},{len(got)},"
                    f"{false / len(got):.3f},{high:.3f}"
                )
    path.write_text("\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--experiments", type=int, default=1000)
    parser.add_argument("--power", type=int, default=300)
    parser.add_argument("--records", type=Path, default=Path("/tmp/stepdown.jsonl"))
    parser.add_argument("--report", type=Path, default=Path("benchmarks/results/stepdown.md"))
    parser.add_argument("--levels", type=Path, default=Path("infrepro/assets/stepdown_levels.csv"))
    parser.add_argument("--cells", nargs="*", default=list(CELLS))
    args = parser.parse_args()
    done = set()
    if args.records.is_file():
        done = {(r["cell"], r["i"]) for r in map(json.loads, args.records.open())}
    jobs = [
        (key, i)
        for key in args.cells
        for i in range(args.experiments if CELLS[key] == "fwer" else args.power)
        if (key, i) not in done
    ]
    with args.records.open("a") as sink, multiprocessing.Pool(2) as pool:
        for key, i, out in pool.imap_unordered(one, jobs, chunksize=4):
            sink.write(json.dumps({"cell": key, "i": i, "out": out}) + "\n")
            sink.flush()
    rows: dict[str, list[dict]] = collections.defaultdict(list)
    for row in map(json.loads, args.records.open()):
        rows[row["cell"]].append(row["out"])
    command = "python benchmarks/stepdown.py " + " ".join(sys.argv[1:])
    report(rows, args.report, command.strip())
    write_levels(rows, args.levels)


if __name__ == "__main__":
    main()
