"""κ for the decision's test: the level of a declared plan when each look is the decision's
band-calibrated test (docs/method.md §4b.11, §4e.5).

``benchmarks/sequential.py`` calibrated κ (``LOOK_ALPHA_FACTOR``, the factor on α at which the z
boundaries of a plan with several looks are computed) with Welch's t as the look's test. The
decision tests a pair of multi-run systems by Welch's statistic referred to the p calibrated over
a band of run-mean SD ratios (§4b.11): at each look the plan's nominal level a_k becomes that
test's critical |t| (``infrepro.stats.calibrated.critical_t`` with the look's n_A, n_B and f = n −
1),
and the look crosses when Welch's |t| on the run means so far reaches it (what model M's
calibrated test is on complete, balanced data with two systems). This measures the level of
every plan over the six look schedules of ``benchmarks/sequential.py`` at run-SD ratios 1, 2
(the default band's end) and 3 (outside it), for κ = 0.80 ... 1.00, and picks the largest κ
on the grid whose level stays within 0.05 + 1.5 MC SE in every cell inside the band.

Usage: nice python benchmarks/sequential_kappa.py [--n 50000] [--out
benchmarks/results/sequential_kappa.md]
"""

from __future__ import annotations

import math
import os
import platform
import time

import numpy as np
from bench import command_line, publish, started
from sequential import ALPHA, SCHEDULES, SEED, Cell, run_means

from infrepro.stats.anytime import t_boundary
from infrepro.stats.calibrated import DEFAULT_BAND, critical_t
from infrepro.stats.group_sequential import LOOK_ALPHA_FACTOR, Spending, efficacy_boundaries
from infrepro.stats.simultaneous import max_t

KAPPAS = (0.80, 0.85, 0.90, 0.95, 1.00)
RATIOS = (1.0, 2.0, 3.0)
FAMILY_SIZES = (2, 4)  # competitors against one baseline
CS_SCALE = 1.5
SPENDINGS: tuple[Spending, ...] = ("obrien_fleming", "pocock")


def welch_t(a: np.ndarray, b: np.ndarray, runs: np.ndarray) -> np.ndarray:
    """|Welch t| on the run means so far, experiments x looks."""
    out = []
    for n in runs:
        sa, sb = a[:, :n].var(1, ddof=1) / n, b[:, :n].var(1, ddof=1) / n
        out.append(np.abs(b[:, :n].mean(1) - a[:, :n].mean(1)) / np.sqrt(sa + sb))
    return np.array(out).T


def critical_values(
    runs: np.ndarray, kappa: float, spending: Spending, alpha: float = ALPHA
) -> np.ndarray:
    """The calibrated test's critical |t| at each look's nominal level of a plan whose z
    boundaries are computed at κ α (balanced looks, the maximum the last)."""
    nominal = efficacy_boundaries(runs / runs[-1], kappa * alpha, spending, 2, True).nominal
    return np.array(
        [
            critical_t(float(level), int(n), int(n), DEFAULT_BAND, n - 1.0, n - 1.0)
            if level > 0
            else math.inf
            for level, n in zip(nominal, runs, strict=True)
        ]
    )


def table(n: int, seed: int) -> tuple[list[str], dict[float, float]]:
    """The level of every cell per κ, and per κ the worst level inside the band."""
    head = " | ".join(f"κ = {k:.2f}" for k in KAPPAS)
    lines = [
        f"| looks at runs per system | run-SD ratio | spending | {head} |",
        "|---|---|---|" + "---|" * len(KAPPAS),
    ]
    worst = dict.fromkeys(KAPPAS, 0.0)
    for si, (first, last, step) in enumerate(SCHEDULES):
        runs = np.arange(first, last + 1, step)
        for ri, ratio in enumerate(RATIOS):
            # the same experiments as benchmarks/sequential.py's κ table
            a, b = run_means(Cell("", ratio), 0.0, n, last, seed + 1000 + 10 * si + ri)
            t = welch_t(a, b, runs)
            for spending in SPENDINGS:
                cells = []
                for kappa in KAPPAS:
                    level = float((t >= critical_values(runs, kappa, spending)).any(1).mean())
                    cells.append(f"{level:.4f}")
                    if ratio <= DEFAULT_BAND:
                        worst[kappa] = max(worst[kappa], level)
                lines.append(
                    f"| {', '.join(map(str, runs))} | {ratio:g} | {spending} | "
                    + " | ".join(cells)
                    + " |"
                )
    return lines, worst


def family_level(m: int, alpha: float) -> float:
    """The max-t marginal level of m comparisons with one baseline at equal run counts and
    run-mean variances (correlation 1/2), on the normal scale (§4e.11)."""
    corr = np.full((m, m), 0.5)
    np.fill_diagonal(corr, 1.0)
    return float(max_t(np.zeros(m), np.full(m, np.inf), corr, alpha).level[0])


def family_table(n: int, seed: int, kappa: float) -> list[str]:
    """Family-wise false claims of m competitors against one baseline, every look from 3 to 10
    runs per system, each pair's plan at α_j (max-t's marginal level, or α / m) and the
    anytime-valid mode at α / m."""
    lines = [
        "| competitors | run-SD ratio | rule | α_j | family-wise false claims | per pair |",
        "|---|---|---|---|---|---|",
    ]
    runs = np.arange(3, 11)
    for fi, m in enumerate(FAMILY_SIZES):
        for ri, ratio in enumerate((1.0, 2.0)):
            rng_seed = seed + 5000 + 10 * fi + ri
            base, _ = run_means(Cell("", 1.0), 0.0, n, runs[-1], rng_seed)
            others = [
                run_means(Cell("", ratio), 0.0, n, runs[-1], rng_seed + 100 * (j + 1))[1]
                for j in range(m)
            ]
            t = [welch_t(base, b, runs) for b in others]
            rules = [(f"plan, {s}, α_j max-t", s, family_level(m, ALPHA)) for s in SPENDINGS] + [
                (f"plan, {s}, α_j = α / m", s, ALPHA / m) for s in SPENDINGS
            ]
            for name, spending, level in rules:
                crit = critical_values(runs, kappa, spending, level)
                hits = np.array([(tj >= crit).any(1) for tj in t])
                lines.append(
                    f"| {m} | {ratio:g} | {name} | {level:.4f} | {hits.any(0).mean():.4f} | "
                    f"{hits.mean():.4f} |"
                )
            bound = t_boundary(runs, ALPHA / m, CS_SCALE)
            hits = []
            for b in others:
                d = b - base
                stat = [
                    np.abs(d[:, :k].mean(1)) / (d[:, :k].std(1, ddof=1) / np.sqrt(k)) for k in runs
                ]
                hits.append((np.array(stat).T >= bound).any(1))
            hits_a = np.array(hits)
            lines.append(
                f"| {m} | {ratio:g} | anytime-valid, α / m | {ALPHA / m:.4f} | "
                f"{hits_a.any(0).mean():.4f} | {hits_a.mean():.4f} |"
            )
    return lines


def main() -> None:
    parser = command_line(__doc__, "sequential_kappa.md", 50_000)
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args()
    start, load, when = started()
    lines, worst = table(args.n, args.seed)
    se = math.sqrt(ALPHA * (1 - ALPHA) / args.n)
    bound = ALPHA + 1.5 * se
    held = [k for k in KAPPAS if worst[k] <= bound]
    chosen = max(held) if held else None
    family = family_table(args.n, args.seed, chosen or min(KAPPAS))
    elapsed = time.time() - start
    summary = ", ".join(f"κ = {k:.2f}: {worst[k]:.4f}" for k in KAPPAS)
    text = [
        "# κ for the decision's band-calibrated test (issue 29; docs/method.md §4e.5)",
        "",
        f"Run {when}: `nice python benchmarks/sequential_kappa.py --n {args.n}` ({elapsed:.0f} "
        f"s; {os.cpu_count()} CPUs shared, load average {load:.1f} at the start; Python "
        f"{platform.python_version()}, numpy {np.__version__}). Seeded (base seed {args.seed}; "
        "the same experiments as the κ table of `benchmarks/results/sequential.md`).",
        "",
        "Each look: Welch's |t| on the run means so far against the band-calibrated test's "
        f"critical |t| (band {DEFAULT_BAND:g}, f = n − 1 per system) at the plan's nominal "
        "level, the z boundaries computed at κ α (α = 0.05, two-sided). False claims over "
        f"{args.n:,} null experiments per cell (MC SE {se:.4f}).",
        "",
        *lines,
        "",
        f"Worst level inside the band (run-SD ratios 1 and 2), per κ: {summary}. Bound 0.05 + "
        f"1.5 MC SE = {bound:.4f}: the largest κ on the grid that holds it is "
        f"{'none' if chosen is None else f'{chosen:.2f}'} (Welch's t needed κ = "
        f"{LOOK_ALPHA_FACTOR}).",
        "",
        "## A family: m competitors against one baseline",
        "",
        "Looks at 3 ... 10 runs per system, every competitor's runs independent of the others, "
        "the baseline's shared by every pair (its comparisons correlate, 1/2 at equal run "
        f"SDs); each pair's plan spends α_j with the z boundaries at κ α_j (κ = "
        f"{chosen or min(KAPPAS):.2f}) and the calibrated test at each look; family-wise: a "
        "false claim about any pair at any look. α_j max-t: the marginal level of the "
        "single-step max-t over the m comparisons at the maximum on the normal scale, with "
        "the correlation of equal run counts and run-mean variances (§4e.11). Anytime-valid: "
        f"each pair's t confidence sequence (c = {CS_SCALE}) at α / m.",
        "",
        *family,
        "",
    ]
    publish(args.out, text)


if __name__ == "__main__":
    main()
