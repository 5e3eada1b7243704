"""Is the planned power right? (issue 21, acceptance 1; docs/method.md §4d.1)

On calibration designs (a) 6 vs 6, (b) 18 stable vs 6 variable and (d) 3 vs 3 runs
(benchmarks/calibration.py, 200 segments) at three differences each, the power that
``infrepro.analyses.planning`` predicts from the design's true variance components at its own
run counts is set against the rejection rate of the headline test measured over simulated
experiments (``infrepro.validation.simulate``), each fitted as the analyses fit it
(``calibration.comparison_experiment``: REML, per-system run variance, KR t). Rates are
directional (significant with the estimate in the true direction), as the verdict counts them.
Also: the runs per system the planner says are needed for 80 % power, trained (simulated with
that many runs), measured the same way.

Usage: nice python benchmarks/planning_calibration.py [--n 1000] [--draws 20000]
Records are appended to benchmarks/results/planning_records.jsonl (resumable); the report goes to
benchmarks/results/planning.md.
"""

from __future__ import annotations

import json
import math
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

from bench import RESULTS, command_line
from scipy import optimize

from infrepro.analyses.planning import Components, PowerRun, analytic_power, plan
from infrepro.validation.calibration import (
    LEVEL_DESIGNS,
    NO_RESAMPLING,
    clopper_pearson,
    comparison_experiment,
)
from infrepro.validation.simulate import Design, simulate

ALPHA = 0.05
TARGET_POWERS = (0.2, 0.5, 0.8)  # the three differences: analytic power about these


@dataclass(frozen=True)
class Cell:
    key: str
    design: Design
    effect: float  # B - A on the stored scale
    seed: int
    kind: str  # "design" (own run counts) or "needed" (planner's runs for 80 %)


def components(design: Design) -> tuple[Components, tuple[int, int]]:
    """The true headline components of a two-system calibration design and its run counts."""
    a, b = design.systems
    counts = tuple(math.prod(design.n_levels(s, f) for f in design.facets_of(s)) for s in (a, b))
    comp = Components(
        design.segment_sd**2, a.run_sd**2, b.run_sd**2, design.residual_sd**2, design.n_segments
    )
    return comp, counts  # type: ignore[return-value]


def with_runs(design: Design, n: int, effect: float) -> Design:
    """The design with n seeds per system and B better by ``effect``."""
    a, b = design.systems
    facet = replace(design.facets[0], levels=n)
    return replace(
        design,
        systems=(replace(a, levels={"seed": n}), replace(b, levels={"seed": n}, effect=effect)),
        facets=(facet,),
    )


def _effect_for(comp: Components, counts: tuple[int, int], target: float) -> float:
    """The difference at which the noncentral-t guide gives ``target`` power (4 decimals)."""

    def gap(effect: float) -> float:
        return analytic_power(comp, effect, *counts, ALPHA) - target

    return round(optimize.brentq(gap, 1e-5, 0.2), 4)


def cells() -> list[Cell]:
    out = []
    for i, key in enumerate(("a", "b", "d")):
        base = LEVEL_DESIGNS[key][1]()
        comp, (n_a, n_b) = components(base)
        for j, target in enumerate(TARGET_POWERS):
            effect = _effect_for(comp, (n_a, n_b), target)
            seed = 50_000_000 + 1_000_000 * (3 * i + j)
            out.append(Cell(key, LEVEL_DESIGNS[key][1](effect), effect, seed, "design"))
        if key != "d":  # the middle difference, with the runs the planner says give 80 %
            effect = out[-2].effect
            needed = plan(comp, -effect, (n_a, n_b), PowerRun(ALPHA, 20_000, 1)).needed[0.8]
            assert needed is not None
            seed = 60_000_000 + 1_000_000 * i
            out.append(Cell(key, with_runs(base, needed.n_a, effect), effect, seed, "needed"))
    return out


def measure(
    cell: Cell, n: int, records: Path, report_only: bool = False
) -> list[dict[str, object]]:
    """n experiments of a cell through the headline test (resumed from ``records``);
    ``report_only``: the first n of those already recorded, none run."""
    name = f"{cell.key}:{cell.kind}:{cell.effect:g}"
    done = {}
    if records.exists():
        for line in records.read_text().splitlines():
            rec = json.loads(line)
            if rec["cell"] == name:
                done[rec["seed"]] = rec
    if report_only:
        return [done[s] for s in range(cell.seed, cell.seed + n) if s in done]
    with records.open("a") as sink:
        for seed in range(cell.seed, cell.seed + n):
            if seed in done:
                continue
            start = time.perf_counter()
            data = simulate(cell.design, seed).metric_data(options=NO_RESAMPLING)
            result = comparison_experiment(data, ("headline",))["headline"]
            rec = {"cell": name, "seed": seed, "seconds": time.perf_counter() - start}
            rec["result"] = result
            done[seed] = rec
            sink.write(json.dumps(rec) + "\n")
    return [done[s] for s in range(cell.seed, cell.seed + n)]


def rejects(rec: dict[str, object]) -> bool:
    """Significant at ALPHA with the estimate A - B < 0 (B better, the truth)."""
    result = rec["result"]
    if not result:
        return False
    return result["log10_p"] < math.log10(ALPHA) and result["estimate"] < 0  # type: ignore[index]


def row(cell: Cell, recs: list[dict[str, object]], draws: int) -> tuple[str, bool]:
    comp, counts = components(cell.design)
    start = time.perf_counter()
    predicted = PowerRun(ALPHA, draws, 7)(comp, -cell.effect, *counts)
    seconds = time.perf_counter() - start
    k = sum(rejects(r) for r in recs)
    rate = k / len(recs)
    low, high = clopper_pearson(k, len(recs))
    gap = predicted.power - rate
    ok = abs(gap) <= 0.03 if cell.kind == "design" else 0.75 <= rate <= 0.85
    fit_s = sum(float(r["seconds"]) for r in recs) / len(recs)  # type: ignore[arg-type]
    line = (
        f"| {cell.key} | {cell.kind} | {counts[0]} vs {counts[1]} | {100 * cell.effect:.2f} | "
        f"{predicted.power:.3f} ± {predicted.mc_se:.3f} | {predicted.analytic:.3f} | "
        f"{len(recs)} | {rate:.3f} [{low:.3f}, {high:.3f}] | {gap:+.3f} | "
        f"{'yes' if ok else '**no**'} | {1e6 * seconds / draws:.2f} µs | {fit_s:.3f} s |"
    )
    return line, ok


HEADER = """# Planned power against measured power (issue 21, acceptance 1)

`{command}` ({started} - {ended} UTC, 2 shared CPUs, under nice).

Predicted: `infrepro.analyses.planning` from each design's true variance components at the given
run counts ({draws} simulated strata draws, ± its Monte Carlo SE; 'analytic' is the noncentral-t
guide). Measured: simulated experiments (`infrepro.validation.simulate`, 200 segments) each
fitted by the headline model and tested with KR df exactly as the analyses do; directional
rejections at 0.05 with Clopper-Pearson 95 % intervals. 'design' rows: the design's own run
counts, held to |predicted - measured| <= 0.03; 'needed' rows: the runs per system the planner
says give 80 % power (middle difference), held to a measured power in [0.75, 0.85]. Time: the
planner's cost per simulated draw, and the wall time of one engine experiment (fit + KR).

"""
COLUMNS = (
    "design",
    "rows",
    "runs",
    "B - A (points)",
    "predicted",
    "analytic",
    "experiments",
    "measured",
    "predicted - measured",
    "holds?",
    "planner per draw",
    "engine per experiment",
)
HEADER += "| " + " | ".join(COLUMNS) + " |\n|" + "---|" * len(COLUMNS) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = command_line(__doc__, "planning.md", 1000)
    parser.add_argument("--draws", type=int, default=20_000)
    parser.add_argument("--records", type=Path, default=RESULTS / "planning_records.jsonl")
    parser.add_argument("--report-only", action="store_true", help="no new experiments")
    parser.add_argument("--designs", default="a,b,d", help="e.g. b,d (a subset, in parallel)")
    args = parser.parse_args(argv)
    started = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    lines = []
    for cell in (c for c in cells() if c.key in args.designs.split(",")):
        recs = measure(cell, args.n, args.records, args.report_only)
        if not recs:
            continue
        line, _ = row(cell, recs, args.draws)
        lines.append(line)
        print(line, flush=True)
    command = "python benchmarks/planning_calibration.py " + " ".join(argv or sys.argv[1:])
    ended = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    text = HEADER.format(command=command.strip(), started=started, ended=ended, draws=args.draws)
    args.out.write_text(text + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
