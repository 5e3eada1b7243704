"""Benchmark: the single-step max-t (docs/method.md §4c.10) by family size, speed and accuracy.

Usage: ``python benchmarks/simultaneous.py [--out benchmarks/results/simultaneous.md]``.

Families of contrasts of k independent system means with unequal variances (the decision model's
means, whose common segment part cancels in every contrast): the k − 1 contrasts with the
baseline and all k(k − 1)/2 pairs, k = 3 to 30, t ~ N(0, 3²) and df uniform on [2, 40] (many
distinct integer df: the worst case for the critical values). Each ``max_t`` call is timed
(wall and this process' CPU, one BLAS thread) and its own error estimate reported. Accuracy
against closed forms: all pairs of equal-variance means against the studentized range (scipy),
the baseline family of equal-variance means (equicorrelated 0.5) against its one-dimensional
integral, at 41 statistics from 0 to 8 and at the critical value, normal and t with 5 df.
"""

from __future__ import annotations

import itertools
import math
import os
import time

import numpy as np
import pandas as pd
from bench import command_line, publish
from scipy import integrate, special, stats

from infrepro.plumbing.blas import single_threaded_blas
from infrepro.stats.simultaneous import max_t

ALPHA = 0.05
SIZES = (3, 5, 10, 20, 30)


def family_corr(v: np.ndarray, pairs: bool) -> np.ndarray:
    """Correlation of all pairs (emmeans' order) or of each mean against the first."""
    k = v.size
    idx = list(itertools.combinations(range(k), 2)) if pairs else [(j, 0) for j in range(1, k)]
    L = np.zeros((len(idx), k))
    for row, (a, b) in enumerate(idx):
        L[row, a], L[row, b] = 1.0, -1.0
    cov = L @ np.diag(v) @ L.T
    return cov / np.sqrt(np.outer(np.diag(cov), np.diag(cov)))


def timings() -> pd.DataFrame:
    rng = np.random.default_rng(2025)
    rows = []
    for k, pairs in itertools.product(SIZES, (False, True)):
        corr = family_corr(rng.uniform(0.5, 2.0, k), pairs)
        m = corr.shape[0]
        t = rng.normal(0.0, 3.0, m)
        df = rng.uniform(2.0, 40.0, m)
        wall, cpu = time.perf_counter(), time.process_time()
        result = max_t(t, df, corr, ALPHA)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        rows.append(
            {
                "family": "all pairs" if pairs else "vs baseline",
                "systems": k,
                "contrasts": m,
                "distinct df": len(np.unique(result.df_used)),
                "wall s": round(wall, 2),
                "CPU s": round(cpu, 2),
                "error (3 SE)": f"{result.error:.1e}",
            }
        )
        print(rows[-1], flush=True)
    return pd.DataFrame(rows)


def equicorrelated_tail(x: float, m: int, nu: float) -> float:
    """P(max|T_i| > x) for ρ = 0.5 (normal: ν = 0): 1-D over the common factor, then over s."""
    r = math.sqrt(0.5)

    def normal(y: float) -> float:
        def integrand(w: float) -> float:
            tau = special.ndtr((r * w - y) / r) + special.ndtr((-y - r * w) / r)
            outside = -math.expm1(m * math.log1p(-tau)) if tau < 1.0 else 1.0
            return math.exp(-0.5 * w * w) / math.sqrt(2 * math.pi) * outside

        return integrate.quad(integrand, -12, 12, epsabs=1e-300, epsrel=1e-10, limit=400)[0]

    if nu == 0:
        return normal(x)
    top = math.sqrt(stats.chi2.isf(1e-16, nu) / nu)
    return integrate.quad(
        lambda s: normal(x * s) * 2 * nu * s * stats.chi2.pdf(nu * s * s, nu),
        0.0,
        top,
        epsabs=1e-13,
        limit=200,
    )[0]


def accuracy() -> pd.DataFrame:
    rows = []
    grid = np.linspace(0.0, 8.0, 41)
    for k, pairs, nu in itertools.product(SIZES, (False, True), (0, 5)):
        corr = family_corr(np.ones(k), pairs)
        m = corr.shape[0]
        df = np.full(m, 1e5 if nu == 0 else float(nu))
        # every contrast of these families is exchangeable: the grid in chunks of m statistics
        ours, results = [], []
        for start in range(0, grid.size, m):
            chunk = grid[start : start + m]
            t = np.concatenate([chunk, np.zeros(m - chunk.size)])
            results.append(max_t(t, df, corr, ALPHA))
            ours.extend(results[-1].p_adjusted[: chunk.size])
        ours = np.array(ours)
        q = results[0].critical[0]
        if pairs:
            dist = stats.studentized_range(k, np.inf if nu == 0 else nu)
            exact = dist.sf(grid * math.sqrt(2))
            at_q = dist.sf(q * math.sqrt(2))
        else:
            exact = np.array([equicorrelated_tail(x, m, nu) for x in grid])
            at_q = equicorrelated_tail(q, m, nu)
        tail = exact < 1e-4
        rows.append(
            {
                "family": "all pairs" if pairs else "vs baseline",
                "systems": k,
                "df": "normal" if nu == 0 else nu,
                "max abs error of p": f"{np.max(np.abs(ours - exact)):.1e}",
                "max rel error, p < 1e-4": f"{np.max(np.abs(ours[tail] / exact[tail] - 1)):.1e}"
                if tail.any()
                else "",
                "P(max|T| ≥ q) − α": f"{at_q - ALPHA:.1e}",
                "error (3 SE)": f"{results[0].error:.1e}",
            }
        )
        print(rows[-1], flush=True)
    return pd.DataFrame(rows)


def main() -> None:
    parser = command_line(__doc__, "simultaneous.md")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    with single_threaded_blas():
        speed = timings()
        exact = accuracy()
    text = [
        "# Single-step max-t: speed and accuracy (docs/method.md §4c.10)",
        "",
        f"Command: `python benchmarks/simultaneous.py`; load average {load:.1f} at the start "
        f"on the shared 2-core machine (wall time grows with it; CPU time is this process').",
        "",
        "## Speed (t ~ N(0, 9), df uniform on [2, 40])",
        "",
        speed.to_markdown(index=False),
        "",
        "## Accuracy against closed forms (equal-variance means)",
        "",
        "All pairs: the studentized range (scipy); vs baseline: equicorrelated 0.5, by its "
        "one-dimensional integral (and over s for t). 41 statistics from 0 to 8.",
        "",
        exact.to_markdown(index=False),
        "",
    ]
    publish(args.out, text)


if __name__ == "__main__":
    main()
