"""Sequential looks through the decision (issue 29, acceptance 1 and 2; docs/method.md §4e.9):
the researcher who starts at 3 runs per system, adds one run per system per look, reruns the
analysis and stops at the first directional verdict (at most 10 runs per system), on simulated
per-segment scores decided as the ``summary`` analysis decides them
(``infrepro/validation/looks.py``: model M refitted by REML on the runs of every look, the
pair's calibrated test, the sequential path of §4e.10 on the record), at 1,000 segments.

Rules, all on the same experiments: today's single-look verdict at every look (naive), the
declared plan (maximum 10 runs per system, O'Brien-Fleming and Pocock type), the anytime-valid
mode (no maximum) and the fixed 10-run design (one look at 10 runs). Cells: no difference at
run-SD ratios 1 and 2 (false claims; acceptance: ≤ 0.05 + 1.5 MC SE for the plans and the
anytime-valid mode), B better by 2 and 3 run-mean SDs (power in the right direction; the plan's
within 0.05 of the fixed design's, and the expected runs per system below 10). The naive rule is
read from each look's fit; on the first ``--check`` experiments of each null cell ``decide`` is
also run on each look's runs and must agree.

Usage: nice python benchmarks/sequential_decision.py [--n 1000] [--n-others 1000] [--check 100]
       [--processes 2]
       [--out benchmarks/results/sequential_decision.md]
Each experiment's outcome is kept in benchmarks/results/sequential_decision.jsonl (not
committed), so an interrupted run resumes; the same arguments give the same tables.
"""

from __future__ import annotations

import os
import platform
import time
from dataclasses import asdict

from bench import RESULTS, command_line, level_bound, load, publish, rate, run_jobs, started
from threadpoolctl import threadpool_limits

from infrepro.validation.looks import as_row, naive_by_decide, outcome

FIRST, LAST = 3, 10
ALPHA = 0.05
SEED = 29_000
CELLS = {  # name: (run-SD ratio, B better by this many run-mean SDs)
    "no difference, equal run SDs": (1.0, 0.0),
    "no difference, run SD ratio 2": (2.0, 0.0),
    "B better by 2 run-mean SDs": (1.0, 2.0),
    "B better by 3 run-mean SDs": (1.0, 3.0),
}
RULES = {
    "naive": "single-look verdict at every look (today)",
    "obrien_fleming": "plan, O'Brien-Fleming type (default)",
    "pocock": "plan, Pocock type",
    "anytime": "anytime-valid (no maximum)",
    "fixed": "fixed design: one look at 10 runs",
}
PLANS = ("obrien_fleming", "pocock", "anytime")


def jobs(n: int, check: int, n_others: int | None = None) -> list[tuple[str, str, int]]:
    """(kind, cell, experiment) of every job: outcomes (``n`` in the first null cell, the
    acceptance's; ``n_others``, default ``n``, in the others), and the naive rule's check."""
    sizes = {cell: n if k == 0 or n_others is None else n_others for k, cell in enumerate(CELLS)}
    out = [("outcome", cell, i) for cell in CELLS for i in range(sizes[cell])]
    out += [("check", cell, i) for cell, (_, e) in CELLS.items() if e == 0 for i in range(check)]
    return out


def seed_of(cell: str, i: int) -> int:
    return SEED + 1_000_000 * list(CELLS).index(cell) + i


def one(job: tuple[str, str, int]) -> dict:
    kind, cell, i = job
    ratio, effect = CELLS[cell]
    with threadpool_limits(limits=1):
        if kind == "outcome":
            found = as_row(outcome(FIRST, LAST, ratio, effect, seed_of(cell, i)))
        else:
            found = {"naive": asdict(naive_by_decide(FIRST, LAST, ratio, effect, seed_of(cell, i)))}
    return {"kind": kind, "cell": cell, "i": i, **found}


def job_key(row: dict) -> tuple[str, str, int]:
    """A store row's job: (kind, cell, experiment)."""
    return row["kind"], row["cell"], row["i"]


def table(done: dict, n: int) -> tuple[list[str], list[str]]:
    """The results table and the acceptance lines."""
    lines = [
        "| cell | rule | claims in the right direction | wrong direction | expected runs "
        "per system | acceptance |",
        "|---|---|---|---|---|---|",
    ]
    verdicts = []
    for cell, (_, effect) in CELLS.items():
        rows = [done[("outcome", cell, i)] for i in range(n) if ("outcome", cell, i) in done]
        m = len(rows)
        if not m:
            continue
        bound = level_bound(m, ALPHA)
        fixed = sum(r["fixed"]["direction"] > 0 for r in rows) / m
        for rule, label in RULES.items():
            right = sum((r[rule]["direction"] > 0) for r in rows)
            wrong = sum((r[rule]["direction"] < 0) for r in rows)
            runs = sum(r[rule]["runs"] for r in rows) / m
            check = ""
            if effect == 0:
                false = right + wrong
                shown = rate(false, m) + " (false claims)"
                if rule in PLANS:
                    ok = false / m <= bound
                    check = f"≤ {bound:.3f}: {'yes' if ok else '**no**'}"
                    verdicts.append(ok)
                wrong_text = ""
            else:
                shown = rate(right, m)
                wrong_text = rate(wrong, m)
                if rule == "obrien_fleming":
                    gap = right / m - fixed
                    ok = abs(gap) <= 0.05 and runs < LAST
                    check = (
                        f"power − fixed {gap:+.3f} (within 0.05), runs {runs:.2f} < 10: "
                        f"{'yes' if ok else '**no**'}"
                    )
                    verdicts.append(ok)
            lines.append(f"| {cell} | {label} | {shown} | {wrong_text} | {runs:.2f} | {check} |")
    summary = [f"Acceptance: {sum(verdicts)} of {len(verdicts)} checks hold."]
    return lines, summary


def check_lines(done: dict) -> list[str]:
    """The naive rule read from the fits against ``decide`` on each look's runs."""
    out = []
    for cell, (_, effect) in CELLS.items():
        if effect != 0:
            continue
        keys = [k for k in done if k[0] == "check" and k[1] == cell]
        agree = sum(
            done[k]["naive"] == done[("outcome", cell, k[2])]["naive"]
            for k in keys
            if ("outcome", cell, k[2]) in done
        )
        if keys:
            out.append(
                f"- {cell}: `decide` on the runs of each look agrees with the naive rule read "
                f"from the looks' fits in {agree} of {len(keys)} experiments."
            )
    return out


def main() -> None:
    parser = command_line(__doc__, "sequential_decision.md", 1000)
    parser.add_argument("--n-others", type=int, default=None, help="experiments per other cell")
    parser.add_argument("--check", type=int, default=100, help="decide-per-look checks per cell")
    parser.add_argument("--processes", type=int, default=2)
    args = parser.parse_args()
    store = RESULTS / "sequential_decision.jsonl"
    done = load(store, job_key)
    todo = [j for j in jobs(args.n, args.check, args.n_others) if j not in done]
    start, load_start, _ = started()
    run_jobs(one, todo, store, done, args.processes, every=100, key=job_key, what="jobs")
    elapsed = time.time() - start
    lines, summary = table(done, args.n)
    text = [
        "# Sequential looks through the decision (issue 29; docs/method.md §4e.9)",
        "",
        f"`nice python benchmarks/sequential_decision.py --n {args.n} --n-others "
        f"{args.n_others or args.n} --check {args.check} "
        f"--processes {args.processes}` on {platform.node()} ({os.cpu_count()} cores shared, "
        f"load {load_start:.1f} at the start), {elapsed / 60:.0f} min wall for {len(todo)} new "
        "jobs (earlier ones resumed from the store). Each experiment: A and B with 10 runs each "
        "on 1,000 segments (segment SD 0.2, residual SD 0.1, A's run SD 0.02); runs 1-3 of each "
        "system are look 1, then one run per system per look (looks 1-8); one `decide` on all "
        "runs with the sequential path of §4e.10 (model M refitted on the runs of every look, "
        "the pair's calibrated test, κ = 0.80; the plan's maximum 10 runs per system, α = 0.05). "
        "Rates with exact 95 % intervals; expected runs per system: where the researcher "
        "stopped (10 without a claim).",
        "",
        *lines,
        "",
        *summary,
        "",
        *check_lines(done),
        "",
    ]
    publish(args.out, text)


if __name__ == "__main__":
    main()
