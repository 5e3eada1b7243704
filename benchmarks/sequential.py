"""Sequential looks: does a verdict keep its level when new seeds arrive? (docs/method.md §4e)

The researcher of issue 29: starts at 3 runs per system, adds one run per system at a time,
reruns the analysis and stops at the first directional verdict, up to 10 runs per system. Run
means are simulated directly (run SD 0.02, residual SD 0.1 at 1,000 segments, so a run mean's
variance is 0.02² + 0.1²/1000; a second cell with B's run SD 0.04, ratio 2), and each look is
Welch's t on the run means so far (what the per-system test of §4b.1 is with every run on
every segment). False claims over null experiments, by rule:

- naive: today's single-look rule (p < α) at every look;
- plan: the declared plan of §4e (maximum 10 runs per system, looks at 3 ... 10, O'Brien-Fleming
  type and Pocock type spending), through ``infrepro.stats.sequential_plan``; also without the
  small-df factor κ (the plain significance-level approach) to show why κ is there;
- anytime: the t confidence sequence of §4e.7 on runs paired in arrival order.

Power: directional claims at B better by 2 and 3 run-mean SDs (run-mean SD: sqrt of the mean
of the two run-mean variances), beside the fixed 10-run design's Welch test, and the expected
runs per system at the first claim (10 without one). A second table calibrates κ over more
look schedules and run-SD ratios. Every cell is seeded; the analysis path of the module
(``analyse_looks``) is checked against the vectorised rule on the first experiments.

Usage: nice python benchmarks/sequential.py [--n 100000] [--out benchmarks/results/sequential.md]
"""

from __future__ import annotations

import math
import os
import platform
import sys
import time
from dataclasses import dataclass

import numpy as np
from bench import command_line, started
from scipy import stats

from infrepro.stats.anytime import t_boundary
from infrepro.stats.group_sequential import LOOK_ALPHA_FACTOR, Spending, efficacy_boundaries
from infrepro.stats.sequential_plan import (
    WELCH,
    SequentialPlan,
    analyse_looks,
    plan_alpha,
    welch_look,
)

ALPHA = 0.05
RUN_SD = 0.02
RESIDUAL_VAR = 0.1**2 / 1000  # residual SD 0.1 over 1,000 segments
FIRST, LAST = 3, 10
CS_SCALE = 1.5  # the confidence sequence's mixture scale c (§4e.7)
CHECKED = 500  # experiments per rule run through analyse_looks as well
SEED = 20261127  # the base seed (sequential_kappa.py draws the same experiments from it)


@dataclass(frozen=True)
class Cell:
    name: str
    sd_ratio: float  # B's run SD over A's


CELLS = (Cell("equal run SDs", 1.0), Cell("run SDs 0.02 vs 0.04", 2.0))


def run_means(cell: Cell, effect_sds: float, n: int, last: int, seed: int):
    """(A, B) run means, experiments x runs; B better by ``effect_sds`` run-mean SDs."""
    va = RUN_SD**2 + RESIDUAL_VAR
    vb = (RUN_SD * cell.sd_ratio) ** 2 + RESIDUAL_VAR
    delta = effect_sds * math.sqrt((va + vb) / 2)
    rng = np.random.default_rng(seed)
    a = rng.normal(0.0, math.sqrt(va), (n, last))
    b = rng.normal(delta, math.sqrt(vb), (n, last))
    return a, b


def welch_looks(a: np.ndarray, b: np.ndarray, runs: np.ndarray):
    """Per look (columns): Welch's estimate B − A, two-sided p."""
    est, p = [], []
    for n in runs:
        ma, mb = a[:, :n].mean(1), b[:, :n].mean(1)
        sa, sb = a[:, :n].var(1, ddof=1) / n, b[:, :n].var(1, ddof=1) / n
        df = (sa + sb) ** 2 / (sa**2 / (n - 1) + sb**2 / (n - 1))
        t = (mb - ma) / np.sqrt(sa + sb)
        est.append(mb - ma)
        p.append(2 * stats.t.sf(np.abs(t), df))
    return np.array(est).T, np.array(p).T


def first_claim(reject: np.ndarray, est: np.ndarray, runs: np.ndarray):
    """Direction of the first claim (+1 B better, −1 A better, 0 none) and the runs per
    system when the researcher stopped (the last look's without a claim)."""
    any_ = reject.any(1)
    k = np.where(any_, reject.argmax(1), reject.shape[1] - 1)
    rows = np.arange(reject.shape[0])
    direction = np.where(any_, np.sign(est[rows, k]), 0).astype(int)
    return direction, runs[k]


def plan_rule(spending: Spending, runs: np.ndarray, kappa: bool):
    fractions = runs / runs[-1]
    alpha_z = plan_alpha(ALPHA, spending, runs.size, True) if kappa else ALPHA
    return efficacy_boundaries(fractions, alpha_z, spending, 2, True).nominal


def cs_reject(a: np.ndarray, b: np.ndarray, runs: np.ndarray, scale: float) -> np.ndarray:
    """The confidence sequence excludes 0 at each look (pairs in arrival order)."""
    d = b - a
    out = []
    for n in runs:
        m, s = d[:, :n].mean(1), d[:, :n].std(1, ddof=1)
        out.append(np.abs(m) / (s / np.sqrt(n)) >= t_boundary(n, ALPHA, scale))
    return np.array(out).T


def rules(a: np.ndarray, b: np.ndarray, runs: np.ndarray):
    """(rule name, reject matrix, estimates) for every rule."""
    est, p = welch_looks(a, b, runs)
    out = [("naive: p < 0.05 at every look", p < ALPHA, est)]
    for spending, label in (("obrien_fleming", "O'Brien-Fleming"), ("pocock", "Pocock")):
        out.append((f"plan, {label} type", p <= plan_rule(spending, runs, True), est))
        out.append((f"plan, {label} type, without κ", p <= plan_rule(spending, runs, False), est))
    d = (b - a).cumsum(1)[:, runs - 1] / runs
    out.append((f"anytime-valid (c = {CS_SCALE})", cs_reject(a, b, runs, CS_SCALE), d))
    z = known_variance_z(a, b, runs)
    for spending, label in (("obrien_fleming", "O'Brien-Fleming"), ("pocock", "Pocock")):
        critical = stats.norm.isf(plan_rule(spending, runs, False) / 2)
        out.append((f"reference: {label} type on z, run variances known", np.abs(z) >= critical, z))
    return out, est, p


def known_variance_z(a: np.ndarray, b: np.ndarray, runs: np.ndarray) -> np.ndarray:
    """Per look, the z statistic with the true run-mean variances (the recursion's model)."""
    va, vb = a.var(), b.var()  # the simulated variances, up to Monte Carlo error
    return np.array(
        [(b[:, :n].mean(1) - a[:, :n].mean(1)) / np.sqrt((va + vb) / n) for n in runs]
    ).T


def check_module(a: np.ndarray, b: np.ndarray, runs: np.ndarray, p: np.ndarray) -> int:
    """Run the first CHECKED experiments through ``analyse_looks`` (OBF and Pocock plans) and
    count disagreements with the vectorised rule (must be 0)."""
    bad = 0
    for spending in ("obrien_fleming", "pocock"):
        nominal = plan_rule(spending, runs, True)
        plan = SequentialPlan(LAST, LAST, ALPHA, spending, None, None, 0.8)
        for i in range(min(CHECKED, a.shape[0])):
            looks = [welch_look(a[i, :n], b[i, :n]) for n in runs]
            res = analyse_looks(looks, plan, WELCH, final=True)
            crossed = np.array([r.crossed for r in res.looks])
            bad += int(not np.array_equal(crossed, p[i] <= nominal))
    return bad


def level_table(n: int, seed: int) -> tuple[list[str], int]:
    lines = [
        "| cell | rule | false claims | MC SE | ≤ 0.05 + 1.5 SE? | expected runs |",
        "|---|---|---|---|---|---|",
    ]
    runs = np.arange(FIRST, LAST + 1)
    bad = 0
    for ci, cell in enumerate(CELLS):
        a, b = run_means(cell, 0.0, n, LAST, seed + ci)
        out, _, p = rules(a, b, runs)
        bad += check_module(a, b, runs, p)
        for name, reject, est in out:
            direction, stopped = first_claim(reject, est, runs)
            rate = float((direction != 0).mean())
            se = math.sqrt(rate * (1 - rate) / n)
            plain = name.startswith(("naive", "reference")) or "without" in name
            ok = "" if plain else ("yes" if rate <= ALPHA + 1.5 * se else "**no**")
            lines.append(
                f"| {cell.name} | {name} | {rate:.4f} | {se:.4f} | {ok} | {stopped.mean():.2f} |"
            )
    return lines, bad


def power_table(n: int, seed: int) -> list[str]:
    lines = [
        "| cell | B − A (run-mean SDs) | rule | power (right direction) | wrong direction | "
        "fixed 10-run power | power − fixed | expected runs per system |",
        "|---|---|---|---|---|---|---|---|",
    ]
    runs = np.arange(FIRST, LAST + 1)
    for ci, cell in enumerate(CELLS):
        for ei, effect in enumerate((2.0, 3.0)):
            a, b = run_means(cell, effect, n, LAST, seed + 100 + 10 * ci + ei)
            out, est, p = rules(a, b, runs)
            fixed = float(((p[:, -1] < ALPHA) & (est[:, -1] > 0)).mean())
            for name, reject, e in out:
                if "without" in name or name.startswith("reference"):
                    continue
                direction, stopped = first_claim(reject, e, runs)
                power = float((direction > 0).mean())
                lines.append(
                    f"| {cell.name} | {effect:g} | {name} | {power:.4f} | "
                    f"{(direction < 0).mean():.4f} | {fixed:.4f} | {power - fixed:+.4f} | "
                    f"{stopped.mean():.2f} |"
                )
    return lines


SCHEDULES = ((3, 10, 1), (5, 10, 1), (3, 20, 1), (4, 20, 2), (3, 30, 3), (2, 10, 1))


def kappa_table(n: int, seed: int) -> list[str]:
    lines = [
        "| looks at runs per system | run-SD ratio | spending | level without κ | with κ = "
        f"{LOOK_ALPHA_FACTOR} |",
        "|---|---|---|---|---|",
    ]
    for si, (first, last, step) in enumerate(SCHEDULES):
        runs = np.arange(first, last + 1, step)
        for ri, ratio in enumerate((1.0, 2.0, 3.0)):
            cell = Cell("", ratio)
            a, b = run_means(cell, 0.0, n, last, seed + 1000 + 10 * si + ri)
            _, p = welch_looks(a, b, runs)
            for spending in ("obrien_fleming", "pocock"):
                plain = float((p <= plan_rule(spending, runs, False)).any(1).mean())
                with_k = float((p <= plan_rule(spending, runs, True)).any(1).mean())
                lines.append(
                    f"| {', '.join(map(str, runs))} | {ratio:g} | {spending} | {plain:.4f} | "
                    f"{with_k:.4f} |"
                )
    return lines


def main() -> None:
    parser = command_line(__doc__, "sequential.md", 100_000)
    parser.add_argument("--n-kappa", type=int, default=50_000, help="experiments per κ cell")
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args()
    start, load, when = started()
    level, bad = level_table(args.n, args.seed)
    print("\n".join(level), flush=True)
    power = power_table(args.n, args.seed)
    print("\n".join(power), flush=True)
    kappa = kappa_table(args.n_kappa, args.seed)
    print("\n".join(kappa), flush=True)
    t0 = time.time()
    rng = np.random.default_rng(0)
    looks = [welch_look(rng.normal(size=n), rng.normal(size=n)) for n in range(3, 11)]
    plan = SequentialPlan(LAST, LAST, ALPHA, "obrien_fleming", 0.5, 0.1, 0.8)
    analyse_looks(looks[:5], plan, WELCH, final=False)
    per_analysis = time.time() - t0
    elapsed = time.time() - start
    text = [
        "# Sequential looks: false claims, power and runs (issue 29; docs/method.md §4e)",
        "",
        f"Run {when}: `nice python benchmarks/sequential.py --n {args.n} --n-kappa "
        f"{args.n_kappa}` ({elapsed:.0f} s; {os.cpu_count()} CPUs shared with other "
        f"engineers, load average {load:.1f} at the start; Python "
        f"{platform.python_version()}, numpy {np.__version__}). Seeded (base seed "
        f"{args.seed}); the same command gives the same tables.",
        "",
        "The researcher: 3 runs per system, one more run per system per look, stop at the "
        f"first directional claim, at most {LAST} runs. Run means simulated directly: run SD "
        "0.02 (B: 0.02 or 0.04), residual SD 0.1 over 1,000 segments; each look is Welch's t "
        "on the run means so far (the per-system test of §4b.1 on such data). Plans: maximum "
        f"10 runs per system, looks at 3 ... 10, two-sided α = {ALPHA}, z boundaries at "
        f"κ α (κ = {LOOK_ALPHA_FACTOR}, §4e.5); 'without κ' is the plain significance-level "
        f"approach. Anytime-valid: the t confidence sequence of §4e.7 (mixture scale c = "
        f"{CS_SCALE}) on runs paired in arrival order. The first {CHECKED} experiments of each "
        "null cell also went through `analyse_looks` for both plans: "
        f"{bad} disagreements with the vectorised rule.",
        "",
        f"## False claims, {args.n:,} null experiments per cell",
        "",
        *level,
        "",
        f"## Power and runs at a true difference, {args.n:,} experiments per cell",
        "",
        "Power: a claim that B is better at some look up to 10 runs per system. Fixed: Welch's "
        "t at 10 vs 10 runs, p < 0.05 in B's favour. Expected runs per system: where the "
        "researcher stopped (10 without a claim).",
        "",
        *power,
        "",
        f"## Calibrating κ: level over look schedules and run-SD ratios, {args.n_kappa:,} null "
        "experiments each",
        "",
        "Welch's t at every look of the schedule, the plan's nominal levels with and without κ "
        "(the plan's maximum is the schedule's last run count). Run-SD ratio 3 is outside the "
        "band the run-count rule of §4b.6 considers (SDs within a factor of 2). Schedules from "
        "2 runs include 2-vs-2 looks, whose Welch df can be about 1.",
        "",
        *kappa,
        "",
        f"One `analyse_looks` call (5 looks, conditional power and runs needed): "
        f"{per_analysis * 1000:.0f} ms.",
        "",
    ]
    args.out.write_text("\n".join(text), encoding="utf-8")
    print(f"wrote {args.out} in {elapsed:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
