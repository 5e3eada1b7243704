"""Which run counts can carry a directional claim (docs/method.md §4b.6, "Run counts").

The per-system run-aware test of two systems is, when the run variance dominates the run-mean
variance, Welch's t on run means: its df are estimated from each system's run variance, and a
system with 2 runs has 1 df for it. When that variance happens to be small the estimated df are
too large and the test rejects too often (10 vs 2 runs: 0.10-0.12 at α = 0.05, measured in
``benchmarks/results/calibration.md``). No df rule fixes this for every ratio of the two run
variances (Hsu's min(n) − 1 gives 0.000 there), so the report claims a direction only where the
run counts hold the level: Welch's exact level, over run-variance ratios in
[1/RATIO_RANGE, RATIO_RANGE], at most LEVEL_TOLERANCE · α (0.065 at α = 0.05, the band's upper
end). Where the residual part of the run-mean variance is large, the engine's test holds the level
with fewer runs (its known part caps the df): the rule is the worst case over that too, so it
errs on the side of "not judged".
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy import stats

RATIO_RANGE = 4.0  # run-variance ratios considered: the run SDs within a factor of 2
LEVEL_TOLERANCE = 1.3  # the level a claim may rest on: ≤ 1.3 α (0.065 at α = 0.05)
_NODES = 32  # Gauss-Legendre nodes per chi-square (within 1e-5 of 48 and 96 nodes)
_RATIOS = np.geomspace(1.0 / RATIO_RANGE, RATIO_RANGE, 33)
_DF_GRID = 4096
MAX_RUNS = 200  # ``runs_to_hold`` looks no further
NOT_JUDGED = "not judged (runs)"  # summary.csv's verdict: significant, but too few runs


def welch_level(n_a: int, n_b: int, ratios: np.ndarray, alpha: float) -> np.ndarray:
    """Exact level of Welch's two-sided t at ``alpha`` for normal run means, n_a vs n_b runs,
    at run-variance ratios ρ = σ²_b / σ²_a.

    With θ = (σ²_a/n_a) / (σ²_a/n_a + σ²_b/n_b), U_i = χ²_{f_i}/f_i (f_i = n_i − 1) and
    W = θ U_a + (1 − θ) U_b, Welch's statistic is Z / √W with Z ~ N(0, 1) independent of W, and
    its df ν̂ = W² / (θ² U_a²/f_a + (1 − θ)² U_b²/f_b), so the level is
    E[2 Φ̄(t_{1−α/2, ν̂} √W)], integrated over the two chi-squares' quantiles by Gauss-Legendre.
    """
    x, w = np.polynomial.legendre.leggauss(_NODES)
    p, w = (x + 1.0) / 2.0, w / 2.0
    f_a, f_b = n_a - 1, n_b - 1
    u_a, u_b = np.meshgrid(
        stats.chi2.ppf(p, f_a) / f_a, stats.chi2.ppf(p, f_b) / f_b, indexing="ij"
    )
    weights = np.outer(w, w)
    rho = np.asarray(ratios, dtype=float)[:, None, None]
    theta = (1.0 / n_a) / (1.0 / n_a + rho / n_b)
    var = theta * u_a + (1.0 - theta) * u_b
    df = var**2 / ((theta * u_a) ** 2 / f_a + ((1.0 - theta) * u_b) ** 2 / f_b)
    critical = _t_quantile(1.0 - alpha / 2.0, df, min(f_a, f_b), f_a + f_b)
    return (weights * 2.0 * stats.norm.sf(critical * np.sqrt(var))).sum(axis=(1, 2))


def _t_quantile(q: float, df: np.ndarray, low: float, high: float) -> np.ndarray:
    """t_{q, ν} for ν in [low, high] (Welch's df lie there), interpolated in log ν on a grid
    of _DF_GRID points: scipy's quantile on every node costs 80 ms a design, the grid
    agrees to 1e-7."""
    grid = np.geomspace(low, high, _DF_GRID) if high > low else np.array([low, low * 1.0001])
    return np.interp(np.log(np.clip(df, low, high)), np.log(grid), stats.t.ppf(q, grid))


def worst_level(n_a: int, n_b: int, alpha: float) -> float:
    """The largest Welch level over the run-variance ratios of ``RATIO_RANGE``; NaN when a
    system has fewer than 2 runs (no run variance of its own: §4c.4)."""
    if min(n_a, n_b) < 2:
        return float("nan")
    return _worst_level(*sorted((int(n_a), int(n_b))), float(alpha))


@lru_cache(maxsize=8192)
def _worst_level(few: int, many: int, alpha: float) -> float:
    return float(welch_level(few, many, _RATIOS, alpha).max())


def holds_level(n_a: int, n_b: int, alpha: float) -> bool:
    """Whether n_a vs n_b runs can carry a directional claim (worst level ≤ 1.3 α). A system
    with a single run is not this rule's: its comparisons are of outputs (§4c.4)."""
    return min(n_a, n_b) < 2 or worst_level(n_a, n_b, alpha) <= LEVEL_TOLERANCE * alpha


def runs_to_hold(n_a: int, n_b: int, alpha: float) -> int:
    """The fewest runs of the system with fewer runs (the other unchanged) at which the pair
    holds the level; 0 if no count up to MAX_RUNS does."""
    few, many = sorted((int(n_a), int(n_b)))
    for n in range(max(few, 2), MAX_RUNS + 1):
        if holds_level(n, many, alpha):
            return n
    return 0


def too_few_runs(a: str, n_a: int, b: str, n_b: int, alpha: float) -> str:
    """Why a significant per-system test of a vs b names no winner, and how many runs would."""
    (few, n_few), (_, n_many) = sorted(((a, int(n_a)), (b, int(n_b))), key=lambda x: x[1])
    need = runs_to_hold(n_few, n_many, alpha)
    more = f"; {need} runs of {few} would hold it" if need else ""
    return (
        f"with {n_a} runs of {a} and {n_b} of {b}, a test on each system's own run variance "
        f"rejects up to {100 * worst_level(n_a, n_b, alpha):.0f} % of true nulls at α = "
        f"{alpha:g} (Welch's exact level, run SDs within a factor of "
        f"{RATIO_RANGE**0.5:g}){more}"
    )
