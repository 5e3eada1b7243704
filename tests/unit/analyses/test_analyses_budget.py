"""Expected best under a budget (docs/method.md §4d.2): the exact formula against brute-force
enumeration of every subset, the bootstrap interval's coverage, and the crossing budget."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from infrepro.analyses.budget import (
    Z95,
    bootstrap_max,
    budget_curve,
    budget_table,
    crossing_budget,
    expected_max,
)
from infrepro.validation.simulate import Design, Facet, System, simulate


def _enumerated(pool: np.ndarray, budget: int) -> np.ndarray:
    """The best of every subset of ``budget`` runs: the without-replacement distribution."""
    return np.array([max(c) for c in itertools.combinations(pool, budget)])


POOLS = {
    "distinct": np.array([0.31, 0.27, 0.35, 0.30, 0.22, 0.33, 0.29]),
    "ties": np.array([0.5, 0.5, 0.4, 0.6, 0.6, 0.4, 0.5, 0.45]),
    "skewed": np.array([0.1, 0.11, 0.12, 0.1, 0.13, 0.9, 0.11, 0.12, 0.1]),
    "lognormal": np.random.default_rng(5).lognormal(0.0, 1.0, 10),
}


@pytest.mark.parametrize("name", sorted(POOLS))
def test_expected_max_equals_enumeration(name):
    pool = POOLS[name]
    exact = expected_max(pool)
    for budget in range(1, len(pool) + 1):
        assert exact[budget - 1] == pytest.approx(_enumerated(pool, budget).mean(), rel=1e-12)
    assert exact[0] == pytest.approx(pool.mean())
    assert exact[-1] == pytest.approx(pool.max())
    assert np.all(np.diff(exact) >= -1e-15)  # more budget never lowers the expected best


@pytest.mark.parametrize("name", sorted(POOLS))
def test_bootstrap_interval_covers_the_enumerated_central_95(name):
    """The percentile interval of Algorithm 3.1's bootstrap covers the central 95 % of the
    exact without-replacement distribution of the best of B, at every budget."""
    pool = POOLS[name]
    curve = budget_curve(pool, samples=4000, seed=11)
    for row in curve.itertuples():
        best = _enumerated(pool, row.budget)
        low, high = np.quantile(best, [0.025, 0.975])
        assert row.percentile_low <= low + 1e-12, (name, row.budget)
        assert row.percentile_high >= high - 1e-12, (name, row.budget)


def test_bootstrap_standard_interval_is_eq_3_2_and_seeded():
    pool = POOLS["distinct"]
    one = bootstrap_max(pool, 3, 500, np.random.default_rng(2))
    again = bootstrap_max(pool, 3, 500, np.random.default_rng(2))
    assert one == again
    assert one.standard_low == pytest.approx(one.mean - Z95 * one.sd)
    assert one.standard_high == pytest.approx(one.mean + Z95 * one.sd)
    other = bootstrap_max(pool, 3, 500, np.random.default_rng(3))
    assert other != one


def test_crossing_budget():
    # the baseline is steady, the competitor has a low mean and one excellent run
    steady = np.array([0.50, 0.51, 0.52, 0.50, 0.51, 0.52])
    lucky = np.array([0.40, 0.42, 0.41, 0.43, 0.44, 0.70])
    exact_a, exact_b = expected_max(steady), expected_max(lucky)
    assert exact_a[0] > exact_b[0] and exact_a[-1] < exact_b[-1]  # A ahead at B = 1, then B
    first = next(b for b in range(1, 7) if exact_b[b - 1] > exact_a[b - 1])
    assert crossing_budget(exact_a, exact_b) == first > 1
    assert crossing_budget(exact_a, expected_max(steady - 0.1)) is None


def test_budget_table_orients_lower_is_better():
    design = Design(
        systems=(System("A", run_sd=0.01), System("B", effect=0.01, run_sd=0.02)),
        facets=(Facet("seed", 5),),
        n_segments=30,
    )
    data = simulate(design, 3).metric_data(options={"bootstrap": {"samples": 200, "seed": 1}})
    higher = budget_table(data)
    data_low = type(data)(**{**data.__dict__, "better": "lower"})
    lower = budget_table(data_low)
    for table, pick in ((higher, np.max), (lower, np.min)):
        top = table[table["budget"] == table["runs"]]
        means = data.evaluation.groupby("run_id")["score"].mean()
        runs = data.runs.set_index("run_id")["system"]
        for row in top.itertuples():
            assert row.expected_best == pytest.approx(pick(means[runs == row.system]))
        assert (table["percentile_low"] <= table["percentile_high"]).all()
        assert (table["standard_low"] <= table["standard_high"]).all()
    competitor = higher[higher["system"] == "B"]["crossing_budget"].unique()
    assert len(competitor) == 1 and competitor[0] != ""
