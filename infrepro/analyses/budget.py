"""Expected best score under a tuning budget (docs/method.md §4d.2; thesis §3.3.2, Algorithm 3.1;
Dodge et al. 2019).

For a system's pool of run scores u_(1) <= ... <= u_(n) (oriented so that larger is better) and a
budget of B runs: the exact expected best of B runs drawn without replacement,

    E[max_B] = sum_{i=B}^{n} u_(i) * C(i - 1, B - 1) / C(n, B),

and the thesis' bootstrap (K samples of B scores drawn with replacement, the maximum of each:
mean m_B, SD s_B, interval m_B +- 1.96 s_B, and the percentile interval). The crossing budget is
the smallest B at which the competitor's and the baseline's expected best swap their order.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd
from scipy.special import gammaln

from infrepro.analyses.common.data import MetricData, run_means
from infrepro.analyses.common.fitlog import FitLog
from infrepro.core.registry import BUDGET
from infrepro.core.vocabulary import BUDGET_COLUMN, SYSTEM

Z95 = 1.959963984540054  # the standard normal 97.5 % quantile of thesis eq. 3.2


def expected_max(values: np.ndarray) -> np.ndarray:
    """E[max of B values drawn without replacement] for B = 1 ... n (exact, order statistics):
    E[max_B] = sum_{i=B}^{n} u_(i) C(i-1, B-1) / C(n, B), weights in log space."""
    u = np.sort(np.asarray(values, dtype=float))
    n = len(u)
    if n == 0:
        return np.empty(0)
    i = np.arange(1, n + 1)[None, :]  # position of the maximum
    b = np.arange(1, n + 1)[:, None]  # budget
    valid = i >= b
    log_top = gammaln(i) - gammaln(b) - gammaln(np.maximum(i - b, 0) + 1)
    log_all = gammaln(n + 1) - gammaln(b + 1) - gammaln(n - b + 1)
    weights = np.where(valid, np.exp(np.where(valid, log_top - log_all, 0.0)), 0.0)
    return weights @ u


@dataclass(frozen=True)
class BootstrapMax:
    """Algorithm 3.1 at one budget: the bootstrap distribution of the best of B (with
    replacement): its mean and SD, the standard interval (eq. 3.2) and the percentile one."""

    mean: float
    sd: float
    standard_low: float
    standard_high: float
    percentile_low: float
    percentile_high: float


def bootstrap_max(
    values: np.ndarray, budget: int, samples: int, rng: np.random.Generator
) -> BootstrapMax:
    """K = ``samples`` resamples of ``budget`` values with replacement; the maximum of each."""
    u = np.asarray(values, dtype=float)
    draws = u[rng.integers(0, len(u), size=(samples, budget))].max(axis=1)
    mean = float(draws.mean())
    sd = float(draws.std(ddof=1)) if samples > 1 else 0.0
    low, high = np.quantile(draws, [0.025, 0.975])
    return BootstrapMax(mean, sd, mean - Z95 * sd, mean + Z95 * sd, float(low), float(high))


def budget_curve(values: np.ndarray, samples: int, seed: int) -> pd.DataFrame:
    """One pool's curve: budget, exact expected best and the bootstrap of every B = 1 ... n
    (larger is better; seeded: budget B uses the generator of (seed, B))."""
    u = np.asarray(values, dtype=float)
    exact = expected_max(u)
    rows = []
    for budget in range(1, len(u) + 1):
        rng = np.random.default_rng([seed, budget])
        boot = bootstrap_max(u, budget, samples, rng)
        fields = {
            f"bootstrap_{k}" if k in ("mean", "sd") else k: v for k, v in asdict(boot).items()
        }
        rows.append({BUDGET_COLUMN: budget, "expected_best": exact[budget - 1], **fields})
    return pd.DataFrame(rows)


def crossing_budget(baseline: np.ndarray, competitor: np.ndarray) -> int | None:
    """Where the competitor's expected best overtakes the baseline's (or falls behind): the
    smallest B with sign(Delta(B)) != sign(Delta(1)), Delta = competitor - baseline expected
    best over the common budgets B = 1 ... min(n_A, n_C) (oriented: larger is better); None
    when the order at B = 1 holds at every common budget."""
    common = min(len(baseline), len(competitor))
    delta = np.asarray(competitor[:common]) - np.asarray(baseline[:common])
    signs = np.sign(np.round(delta, 12))
    changed = np.flatnonzero(signs != signs[0])
    return int(changed[0]) + 1 if changed.size else None


def _pools(data: MetricData) -> list[tuple[str, str, str, np.ndarray]]:
    """(system, source, better, scores) of every pool: dev scores where every run has one,
    and the runs' mean test scores."""
    means = run_means(data)
    has_dev = "dev_score" in means and means["dev_score"].notna().all()
    pools = []
    for system in data.systems:
        runs = means[means[SYSTEM] == system]
        if has_dev:
            dev_better = str(data.options["dev_score_better"])
            pools.append((system, "dev_score", dev_better, runs["dev_score"].to_numpy(float)))
        pools.append((system, "test_mean", data.better, runs["mean"].to_numpy(float)))
    return pools


def budget_table(data: MetricData) -> pd.DataFrame:
    """``budget.csv``: per system and pool, every budget's expected best and bootstrap, in the
    scores' own direction (lower-is-better pools are negated for the maximum and back)."""
    options = data.options["bootstrap"]
    samples, seed = int(options["samples"]), int(options["seed"])
    frames = []
    for system, source, better, scores in _pools(data):
        sign = 1.0 if better == "higher" else -1.0
        curve = budget_curve(sign * scores, samples, seed)
        for column in ("expected_best", "bootstrap_mean"):
            curve[column] *= sign
        for low, high in (("standard_low", "standard_high"), ("percentile_low", "percentile_high")):
            a, b = sign * curve[low], sign * curve[high]
            curve[low], curve[high] = np.minimum(a, b), np.maximum(a, b)
        curve.insert(0, "source", source)
        curve.insert(0, SYSTEM, system)
        curve.insert(0, "metric", data.metric)
        curve["runs"] = len(scores)
        curve["crossing_budget"] = ""
        frames.append(curve)
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return _with_crossings(data, table)


def _with_crossings(data: MetricData, table: pd.DataFrame) -> pd.DataFrame:
    """Each competitor's rows carry the crossing budget against the baseline ("none": the
    order at B = 1 holds at every common budget)."""
    if table.empty:
        return table
    base = data.baseline
    for source, rows in table.groupby("source", sort=False):
        better = data.better if source == "test_mean" else str(data.options["dev_score_better"])
        sign = 1.0 if better == "higher" else -1.0
        first = rows[rows[SYSTEM] == base]["expected_best"].to_numpy() * sign
        for system in data.systems[1:]:
            mask = (table["source"] == source) & (table[SYSTEM] == system)
            other = table.loc[mask, "expected_best"].to_numpy() * sign
            if len(first) and len(other):
                crossing = crossing_budget(first, other)
                table.loc[mask, "crossing_budget"] = "none" if crossing is None else str(crossing)
    return table


def budget_analysis(data: MetricData, log: FitLog) -> dict[str, pd.DataFrame]:
    """The budget analysis's tables (``budget.csv``); it fits no model, ``log`` stays empty."""
    return {BUDGET: budget_table(data)}
