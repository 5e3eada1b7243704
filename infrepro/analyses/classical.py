"""Classical comparisons for context (seed 002, thesis 2.1), all seeded.

On the best runs: the paired bootstrap test (thesis Alg. 2.1) and approximate randomization
(Alg. 2.2). On run-level mean scores: mean +- SD per system, Welch's t-test, Mann-Whitney U.
Resampling p-values are (c + 1) / (K + 1), so they are never 0; with few segments every distinct
resample is enumerated instead, and p is never below 1 / (number of distinct resamples) (§4.7).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import special, stats

from infrepro.analyses.common.data import MetricData, best_runs, run_means
from infrepro.analyses.common.fitlog import FitLog
from infrepro.core.registry import CLASSICAL
from infrepro.core.vocabulary import CLASSICAL_TABLE, RUN, SEGMENT, SYSTEM, columns
from infrepro.io.errors import plural
from infrepro.stats.pvalues import format_p


def paired_bootstrap(a: np.ndarray, b: np.ndarray, samples: int, seed: int) -> tuple[float, int]:
    """Thesis Alg. 2.1: two-sided bootstrap test of mean(a) - mean(b); returns (p, count)."""
    rng = np.random.default_rng(seed)
    observed = a.mean() - b.mean()
    differences = a - b
    n = differences.size
    resampled = np.empty(samples)
    for k in range(samples):
        resampled[k] = differences[rng.integers(0, n, size=n)].mean()
    count = int(np.sum(np.abs(resampled - resampled.mean()) >= abs(observed)))
    return (count + 1) / (samples + 1), count


def approximate_randomization(
    a: np.ndarray, b: np.ndarray, samples: int, seed: int
) -> tuple[float, int]:
    """Thesis Alg. 2.2: two-sided permutation test swapping outputs per segment."""
    rng = np.random.default_rng(seed)
    differences = a - b
    observed = abs(differences.mean())
    count = 0
    for _ in range(samples):
        signs = np.where(rng.random(differences.size) < 0.5, 1.0, -1.0)
        if abs((signs * differences).mean()) >= observed:
            count += 1
    return (count + 1) / (samples + 1), count


TOLERANCE = 1e-9  # relative: a resample as extreme as the observed one, up to rounding
BOOTSTRAP_MIN_SEGMENTS = 30  # below: the paired bootstrap's level exceeds alpha (method.md §4.7)


@dataclass(frozen=True)
class Resampled:
    """A resampling test: p, resamples at least as extreme, resamples drawn (or enumerated)."""

    p: float
    count: int
    resamples: int
    exact: bool


def paired_bootstrap_test(a: np.ndarray, b: np.ndarray, samples: int, seed: int) -> Resampled:
    """The paired bootstrap; exact over the C(2n-1, n) distinct resamples when <= ``samples``."""
    distinct = math.comb(2 * a.size - 1, a.size)
    if distinct <= samples:
        p, count = exact_paired_bootstrap(a - b)
        return Resampled(p, count, distinct, True)
    p, count = paired_bootstrap(a, b, samples, seed)
    return Resampled(p, count, samples, False)


def randomization_test(a: np.ndarray, b: np.ndarray, samples: int, seed: int) -> Resampled:
    """Approximate randomization; exact over the 2^n sign assignments when <= ``samples``."""
    if a.size < 63 and 2**a.size <= samples:
        p, count = exact_randomization(a - b)
        return Resampled(p, count, 2**a.size, True)
    p, count = approximate_randomization(a, b, samples, seed)
    return Resampled(p, count, samples, False)


def exact_paired_bootstrap(differences: np.ndarray) -> tuple[float, int]:
    """Every multiset m of n segments (segment i drawn c_i times), with probability
    P(m) = n! / prod(c_i!) / n^n: p = max(sum P(m) [|mean_m - mean| >= |mean|], 1/D)."""
    n = differences.size
    draws = np.array(list(itertools.combinations_with_replacement(range(n), n)), dtype=np.intp)
    means = differences[draws].mean(axis=1)
    counts = np.zeros((len(draws), n), dtype=np.intp)
    np.add.at(counts, (np.arange(len(draws))[:, None], draws), 1)
    log_weight = special.gammaln(n + 1) - special.gammaln(counts + 1).sum(axis=1) - n * np.log(n)
    centre = differences.mean()
    extreme = np.abs(means - centre) >= abs(centre) - _slack(differences)
    p = float(np.exp(log_weight[extreme]).sum())
    return max(min(p, 1.0), 1.0 / len(draws)), int(extreme.sum())


def exact_randomization(differences: np.ndarray) -> tuple[float, int]:
    """Every sign assignment s: p = #{|mean(s * d)| >= |mean(d)|} / 2^n."""
    sums = np.zeros(1)
    for value in differences:
        sums = np.concatenate([sums + value, sums - value])
    extreme = np.abs(sums / differences.size) >= abs(differences.mean()) - _slack(differences)
    count = int(extreme.sum())
    return count / sums.size, count


def _slack(differences: np.ndarray) -> float:
    return TOLERANCE * max(float(np.abs(differences).mean()), np.finfo(float).tiny)


def classical_tests(data: MetricData, log: FitLog) -> dict[str, pd.DataFrame]:
    """Best-run resampling tests and run-level tests of the baseline against every system."""
    best = best_runs(data).set_index(SYSTEM)
    means = run_means(data)
    rows: list[dict[str, object]] = []
    baseline = data.baseline
    for other in data.systems[1:]:
        subset = f"{baseline} vs {other}"
        rows += _resampling_rows(data, log, best, subset, other)
        first = means.loc[means[SYSTEM] == baseline, "mean"].to_numpy()
        second = means.loc[means[SYSTEM] == other, "mean"].to_numpy()
        if min(first.size, second.size) < 2:
            log.skip(CLASSICAL, subset, "", "run-level tests need at least two runs per system")
            continue
        if np.ptp(np.concatenate([first, second])) == 0:
            log.skip(CLASSICAL, subset, "", "run means are constant: no run-level test")
            continue
        difference = float(first.mean() - second.mean())
        welch = stats.ttest_ind(first, second, equal_var=False)
        log10_welch = (math.log(2.0) + float(stats.t.logsf(abs(welch.statistic), welch.df))) / (
            math.log(10.0)
        )
        rows.append(
            _row(
                data,
                "Welch t (run means)",
                subset,
                other,
                float(welch.statistic),
                difference,
                10**log10_welch,
                first.size + second.size,
                0,
                0,
                f"{first.size} vs {second.size} runs",
                log10_welch,
            )
        )
        mwu = stats.mannwhitneyu(first, second, alternative="two-sided")
        rows.append(
            _row(
                data,
                "Mann-Whitney U (run means)",
                subset,
                other,
                float(mwu.statistic),
                difference,
                float(mwu.pvalue),
                first.size + second.size,
                0,
                0,
                f"{first.size} vs {second.size} runs",
            )
        )
    return {
        CLASSICAL_TABLE: pd.DataFrame(rows, columns=columns(CLASSICAL_TABLE)),
        "run_summary": _summary(data, means, best),
        "run_means": _run_means_table(data, means, best),
    }


def _resampling_rows(
    data: MetricData, log: FitLog, best: pd.DataFrame, subset: str, other: str
) -> list[dict[str, object]]:
    """The paired bootstrap and approximate randomization rows of one pair of best runs."""
    boot, perm = data.options["bootstrap"], data.options["randomization"]
    run_a, run_b = best.loc[data.baseline, RUN], best.loc[other, RUN]
    a, b = _aligned(data, run_a, run_b)
    note = f"best runs {run_a} vs {run_b}"
    estimate = float(a.mean() - b.mean()) if a.size else math.nan
    rows = []
    if a.size < 2:
        # One segment: every resample repeats the observed difference, so the shifted
        # bootstrap distribution is a point and would report the smallest possible p.
        log.skip(
            CLASSICAL,
            subset,
            "",
            f"paired bootstrap: the best runs share {plural(a.size, 'segment')}; "
            "resampling needs at least 2",
        )
    else:
        test = paired_bootstrap_test(a, b, int(boot["samples"]), int(boot["seed"]))
        caveat = (
            f"; fewer than {BOOTSTRAP_MIN_SEGMENTS} segments: the paired bootstrap is "
            "anti-conservative (docs/method.md §4.7)"
            if a.size < BOOTSTRAP_MIN_SEGMENTS
            else ""
        )
        rows.append(
            _resampled_row(
                data,
                "paired bootstrap",
                subset,
                other,
                test,
                estimate,
                a.size,
                int(boot["seed"]),
                note + caveat,
            )
        )
    if a.size == 0:
        log.skip(CLASSICAL, subset, "", "approximate randomization: no shared segments")
    else:
        test = randomization_test(a, b, int(perm["samples"]), int(perm["seed"]))
        rows.append(
            _resampled_row(
                data,
                "approximate randomization",
                subset,
                other,
                test,
                estimate,
                a.size,
                int(perm["seed"]),
                note,
            )
        )
    return rows


def _resampled_row(
    data: MetricData,
    test: str,
    subset: str,
    other: str,
    result: Resampled,
    estimate: float,
    n: int,
    seed: int,
    note: str,
) -> dict[str, object]:
    if result.exact:
        note += f"; exact: all {result.resamples:,} distinct resamples"
    return _row(
        data, test, subset, other, result.count, estimate, result.p, n, result.resamples, seed, note
    )


def _aligned(data: MetricData, run_a: str, run_b: str) -> tuple[np.ndarray, np.ndarray]:
    table = data.evaluation
    a = table[table[RUN] == run_a].set_index(SEGMENT)[data.metric]
    b = table[table[RUN] == run_b].set_index(SEGMENT)[data.metric]
    common = a.index.intersection(b.index)
    return a.loc[common].to_numpy(dtype=float), b.loc[common].to_numpy(dtype=float)


def _row(
    data: MetricData,
    test: str,
    subset: str,
    other: str,
    statistic: float,
    estimate: float,
    p: float,
    n: int,
    samples: int,
    seed: int,
    note: str,
    log10_p: float | None = None,
) -> dict[str, object]:
    if log10_p is None:
        log10_p = math.log10(p) if p > 0 else -math.inf
    return {
        "metric": data.metric,
        "test": test,
        "subset": subset,
        "level1": data.baseline,
        "level2": other,
        "statistic": statistic,
        "estimate": estimate,
        "p_value": format_p(log10_p),
        "log10_p": log10_p,
        "n": n,
        "samples": samples,
        "seed": seed,
        "note": note,
    }


def _summary(data: MetricData, means: pd.DataFrame, best: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for system in data.systems:
        values = means.loc[means[SYSTEM] == system]
        best_run = best.loc[system, RUN]
        rows.append(
            {
                "metric": data.metric,
                SYSTEM: system,
                "n_runs": len(values),
                "mean": float(values["mean"].mean()),
                "sd": float(values["mean"].std(ddof=1)) if len(values) > 1 else math.nan,
                "min": float(values["mean"].min()),
                "max": float(values["mean"].max()),
                "best_run": best_run,
                "best_mean": float(values.loc[values[RUN] == best_run, "mean"].iloc[0]),
                "selected_by": best.loc[system, "selected_by"],
            }
        )
    return pd.DataFrame(rows, columns=columns("run_summary"))


def _run_means_table(data: MetricData, means: pd.DataFrame, best: pd.DataFrame) -> pd.DataFrame:
    table = means.rename(columns={"count": "n_segments"}).copy()
    table.insert(0, "metric", data.metric)
    table["is_best"] = table[RUN].isin(set(best[RUN]))
    return table
