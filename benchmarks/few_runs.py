"""Few runs through the decision (issue 28): level, power and moderation of the test a pair of
multi-run systems gets, measured on simulated per-segment scores decided as the ``summary``
analysis decides them (``infrepro/validation/few_runs.py``: model M, REML, Kenward-Roger, the
calibrated or moderated test, the verdict of the record), at 1,000 segments.

Cells:

- ``level``: A (n_A runs) against B (n_B runs) with no difference, at run-SD ratios 1/2, 1, 2
  (inside the default band) with the defaults, and at 4 with ``run_variance.berger_boos`` on:
  false claims = a directional verdict either way (acceptance: ≤ 0.05 + 1.5 MC SE);
- ``power``: B better by 2 run-mean SDs, equal run SDs: the verdict 'B better' (acceptance:
  10 v 2 and 4 v 2 ≥ 0.18, 6 v 3 ≥ 0.40, 4 v 4 within 0.03 of Welch's t on the same run means);
- ``moderation``: 12 systems (3 and 2 runs alternately) whose run variances are drawn from one
  scaled-inverse-χ² distribution (prior df 4 and ∞): per comparison with the baseline, the
  marginal test's false claims (level ≤ 0.065) and, with every competitor 2 run-mean SDs
  better, its power, moderated against unmoderated on the same experiments (gain ≥ 0.10).

Usage: nice python benchmarks/few_runs.py [--n 1000] [--n-moderation 1000]
       [--cells level,power,moderation]
       [--processes 2] [--out benchmarks/results/few_runs.md]
Each experiment's outcome is kept in benchmarks/results/few_runs.jsonl (not committed), so an
interrupted run resumes; the same arguments give the same tables.
"""

from __future__ import annotations

import math
import os
import platform
import time
from dataclasses import asdict

from bench import RESULTS, cell_rows, command_line, level_cells, load, publish, rate, run_jobs
from threadpoolctl import threadpool_limits

from infrepro.analyses.decision.pairtests import RunVariance
from infrepro.validation.few_runs import many_experiment, outcome, pair_experiment

LEVEL_DESIGNS = [(3, 2), (4, 2), (10, 2), (5, 3), (6, 3), (20, 3)]
POWER_DESIGNS = [(10, 2), (4, 2), (6, 3), (4, 4)]
POWER_FLOOR = {(10, 2): 0.18, (4, 2): 0.18, (6, 3): 0.40}
RATIOS = (0.5, 1.0, 2.0)
SEED = 28_000


def cells(names: list[str], n: int, n_many: int | None = None) -> list[tuple[str, dict]]:
    """(key, parameters) of every cell to run: ``n`` experiments per cell, ``n_many`` (default
    ``n``) per moderation cell (12 systems, each decided twice: the slow cells)."""
    out = []
    if "level" in names:
        for i, (a, b) in enumerate(LEVEL_DESIGNS):
            for j, ratio in enumerate((*RATIOS, 4.0)):
                out.append(
                    (
                        f"level {a}v{b} r{ratio:g}",
                        {
                            "kind": "pair",
                            "a": a,
                            "b": b,
                            "ratio": ratio,
                            "effect": 0.0,
                            "bb": ratio > 2.0,
                            "seed": SEED + 1_000_000 * (10 * i + j),
                        },
                    )
                )
    if "power" in names:
        for i, (a, b) in enumerate(POWER_DESIGNS):
            out.append(
                (
                    f"power {a}v{b}",
                    {
                        "kind": "pair",
                        "a": a,
                        "b": b,
                        "ratio": 1.0,
                        "effect": 2.0,
                        "bb": False,
                        "seed": SEED + 100_000_000 + 1_000_000 * i,
                    },
                )
            )
    if "moderation" in names:
        for i, d0 in enumerate((4.0, math.inf)):
            for j, effect in enumerate((0.0, 2.0)):
                out.append(
                    (
                        f"moderation d0={d0:g} effect={effect:g}",
                        {
                            "kind": "many",
                            "d0": d0,
                            "effect": effect,
                            "seed": SEED + 200_000_000 + 1_000_000 * (2 * i + j),
                            "n": n if n_many is None else n_many,
                        },
                    )
                )
    return [(key, {"n": n, **p}) for key, p in out]


def one(job: tuple[str, dict, int]) -> dict:
    """Experiment ``i`` of a cell: the outcome(s) it needs."""
    key, p, i = job
    with threadpool_limits(limits=1):
        if p["kind"] == "pair":
            data = pair_experiment(p["a"], p["b"], p["ratio"], p["effect"], p["seed"] + i)
            found = {"default": asdict(outcome(data, RunVariance(berger_boos=p["bb"])))}
        else:
            data = many_experiment(p["d0"], p["seed"] + i, p["effect"])
            found = {
                "moderated": asdict(outcome(data)),
                "unmoderated": asdict(outcome(data, RunVariance(moderate=False))),
            }
    return {"key": key, "i": i, **found}


def report(todo: list[tuple[str, dict]], done: dict, elapsed: float, args) -> str:
    lines = [
        "# Few runs through the decision (issue 28)",
        "",
        f"`nice python benchmarks/few_runs.py --n {args.n} --n-moderation "
        f"{args.n_moderation or args.n} --cells {args.cells}` on "
        f"{platform.node()} ({os.cpu_count()} cores, load {os.getloadavg()[0]:.1f} at the end), "
        f"{elapsed / 60:.0f} min wall. Every experiment is decided by `decide` (model M, REML, "
        "Kenward-Roger; the pair's calibrated test, §4b.11; moderation, §4b.12) at 1,000 segments, "
        "segment SD 0.2, residual SD 0.1, the baseline's run SD 0.02; rates with exact 95 % "
        "intervals; MC SE = sqrt(0.05 · 0.95 / n).",
        "",
        "| cell | experiments | rate | bound | holds? | Welch's t on run means |",
        "|---|---:|---|---:|---|---|",
    ]
    for key, p, rows in cell_rows(todo, done):
        n = len(rows)
        if p["kind"] == "pair":
            out = [r["default"] for r in rows]
            if p["effect"] == 0:
                k = sum(o["claim"] != 0 for o in out)
                welch = sum(o["welch"] != 0 for o in out)
                lines.append(
                    f"| {key}{' (Berger-Boos)' if p['bb'] else ''} | {n} | {level_cells(k, n)} "
                    f"| {rate(welch, n)} |"
                )
            else:
                k = sum(o["claim"] > 0 for o in out)
                welch = sum(o["welch"] > 0 for o in out)
                floor = POWER_FLOOR.get((p["a"], p["b"]))
                if floor is None:
                    ok = "yes" if abs(k - welch) / n <= 0.03 else "**no**"
                    bound = "within 0.03 of Welch"
                else:
                    ok = "yes" if k / n >= floor else "**no**"
                    bound = f"≥ {floor:.2f}"
                lines.append(f"| {key} | {n} | {rate(k, n)} | {bound} | {ok} | {rate(welch, n)} |")
        else:
            for mode in ("moderated", "unmoderated"):
                marks = [m for r in rows for m in r[mode]["marginal"]]
                hits = sum((m != 0) if p["effect"] == 0 else (m > 0) for m in marks)
                what = "false claims per comparison" if p["effect"] == 0 else "power per comparison"
                d0 = [
                    r[mode]["prior_df"] for r in rows if r[mode]["prior_df"] == r[mode]["prior_df"]
                ]
                extra = f"; prior df mean {sum(d0) / len(d0):.2f}" if d0 else ""
                lines.append(
                    f"| {key}, {mode}: {what}{extra} | {n} × 11 | {rate(hits, len(marks))} "
                    f"| {'≤ 0.065' if p['effect'] == 0 else 'gain ≥ 0.10'} |  |  |"
                )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = command_line(__doc__, "few_runs.md", 1000)
    parser.add_argument("--cells", default="level,power,moderation")
    parser.add_argument("--n-moderation", type=int, default=None, help="per moderation cell")
    parser.add_argument("--processes", type=int, default=2)
    args = parser.parse_args()
    todo = cells(args.cells.split(","), args.n, args.n_moderation)
    store = RESULTS / "few_runs.jsonl"
    done = load(store)
    jobs = [(key, p, i) for key, p in todo for i in range(p["n"]) if (key, i) not in done]
    start = time.time()
    run_jobs(one, jobs, store, done, args.processes, every=200)
    publish(args.out, [report(todo, done, time.time() - start, args)])


if __name__ == "__main__":
    main()
