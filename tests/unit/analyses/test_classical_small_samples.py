"""Resampling tests with few segments: exact enumeration when the distinct resamples are few,
and p never below 1 / (number of distinct resamples) (docs/method.md §4.7)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from infrepro.analyses import MetricData
from infrepro.analyses.classical import (
    approximate_randomization,
    classical_tests,
    exact_paired_bootstrap,
    exact_randomization,
    paired_bootstrap,
    paired_bootstrap_test,
    randomization_test,
)
from infrepro.analyses.common.fitlog import FitLog


def best_run_data(base: list[float], comp: list[float], samples: int = 1000) -> MetricData:
    """One run per system (so the best runs are these), one row per segment."""
    segments = [f"s{i}" for i in range(len(base))]
    evaluation = pd.DataFrame(
        {
            "run_id": ["b1"] * len(base) + ["c1"] * len(comp),
            "system": ["base"] * len(base) + ["comp"] * len(comp),
            "segment_id": segments + segments,
            "ter": base + comp,
        }
    )
    return MetricData(
        metric="ter",
        better="lower",
        baseline="base",
        evaluation=evaluation,
        runs=evaluation[["run_id", "system"]].drop_duplicates(),
        facets=[],
        properties=[],
        options={
            "bootstrap": {"samples": samples, "seed": 1},
            "randomization": {"samples": samples, "seed": 1},
        },
    )


def classical_row(data: MetricData, test: str) -> pd.Series:
    return classical_tests(data, FitLog("ter"))["classical"].set_index("test").loc[test]


@pytest.mark.parametrize(("n", "distinct"), [(2, 3), (3, 10)])
def test_paired_bootstrap_with_two_or_three_segments_is_not_significant(
    n: int, distinct: int
) -> None:
    """Differences of one sign: sampling gave p = 1/(K+1) = 0.000999; randomization 0.25-0.5."""
    base = [0.50, 0.55, 0.60][:n]
    comp = [0.40, 0.42, 0.47][:n]
    row = classical_row(best_run_data(base, comp), "paired bootstrap")
    assert 10 ** row["log10_p"] >= 1 / distinct - 1e-12
    assert row["samples"] == distinct
    assert "exact: all" in row["note"] and "anti-conservative" in row["note"]


def test_exact_randomization_counts_every_sign_assignment() -> None:
    rng = np.random.default_rng(5)
    d = rng.normal(0.1, 0.2, size=7)
    means = [abs(np.dot(signs, d)) / d.size for signs in itertools.product([1, -1], repeat=7)]
    expected = sum(m >= abs(d.mean()) * (1 - 1e-9) for m in means)
    p, count = exact_randomization(d)
    assert count == expected
    assert p == expected / 2**7


def test_exact_bootstrap_weights_every_ordered_draw_equally() -> None:
    """Brute force over all n^n ordered draws (each 1/n^n) against the multiset enumeration."""
    rng = np.random.default_rng(6)
    d = rng.normal(0.05, 0.2, size=5)
    extreme = 0
    for draw in itertools.product(range(5), repeat=5):
        extreme += abs(d[list(draw)].mean() - d.mean()) >= abs(d.mean()) * (1 - 1e-9)
    p, _ = exact_paired_bootstrap(d)
    assert p == pytest.approx(max(extreme / 5**5, 1 / math.comb(9, 5)), rel=1e-12)


@pytest.mark.parametrize("n", range(1, 12))
def test_resampling_p_is_never_below_one_over_the_distinct_resamples(n: int) -> None:
    rng = np.random.default_rng(n)
    for shift in (0.0, 0.3, 5.0):  # no effect, an effect, every difference of one sign
        a = rng.normal(shift, 0.1, size=n)
        b = np.zeros(n)
        randomization = randomization_test(a, b, 1000, 1)
        assert randomization.p >= 1 / 2**n
        assert randomization.exact == (2**n <= 1000)
        if n >= 2:
            bootstrap = paired_bootstrap_test(a, b, 1000, 1)
            assert bootstrap.p >= 1 / math.comb(2 * n - 1, n)
            assert bootstrap.exact == (math.comb(2 * n - 1, n) <= 1000)


def test_many_segments_keep_the_seeded_sampling() -> None:
    rng = np.random.default_rng(9)
    a, b = rng.normal(0.5, 0.1, 40), rng.normal(0.48, 0.1, 40)
    assert paired_bootstrap_test(a, b, 1000, 3).p == paired_bootstrap(a, b, 1000, 3)[0]
    assert randomization_test(a, b, 1000, 3).p == approximate_randomization(a, b, 1000, 3)[0]
    assert not paired_bootstrap_test(a, b, 1000, 3).exact
