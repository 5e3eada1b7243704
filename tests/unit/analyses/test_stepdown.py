"""The step-down over mixed families (docs/method.md §4c.10, infrepro/stats/stepdown.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from infrepro.stats.pvalues import holm_log10
from infrepro.stats.simultaneous import block_levels, max_t
from infrepro.stats.stepdown import step_down, step_levels

ALPHA = 0.05


def _independent_block(p: np.ndarray) -> np.ndarray:
    """p̃ᴮ of a block of independent two-sided z tests: 1 − (1 − p)^|B| (log10)."""
    return np.log10(-np.expm1(p.size * np.log1p(-p)))


def test_without_a_block_it_is_holm() -> None:
    rng = np.random.default_rng(1)
    for m in (1, 2, 5, 17):
        log10_p = np.log10(rng.uniform(1e-6, 1, m) ** 3)
        result = step_down(log10_p, np.full(m, np.nan), ALPHA)
        np.testing.assert_array_equal(result.log10_p_adjusted, holm_log10(log10_p))
        assert list(result.rejected) == list(holm_log10(log10_p) < math.log10(ALPHA))


def test_a_block_alone_starts_at_its_single_step_value_and_never_exceeds_it() -> None:
    p = np.array([0.004, 0.011, 0.02, 0.3])
    block = _independent_block(p)  # the single-step p̃ᴮ of every member
    result = step_down(np.log10(p), block, ALPHA)
    assert result.log10_p_adjusted[0] == pytest.approx(block[0])
    assert np.all(result.log10_p_adjusted <= block + 1e-15)
    assert np.all(result.log10_p_adjusted <= holm_log10(np.log10(p)) + 1e-15)
    # Šidák's 1 − 0.996⁴ = 0.0159 < α, then 3 · 0.011 = 0.033, 2 · 0.02 = 0.04: three verdicts
    assert list(result.rejected) == [True, True, True, False]


def test_a_mixed_family_rejects_what_neither_holm_nor_bonferroni_reject() -> None:
    """Three independent z tests in the block and one calibrated test outside: the first step
    bounds the block by 1 − (1 − p)³ + 1 · p instead of 4 p."""
    p = np.array([0.0126, 0.0127, 0.0128, 0.5])
    block = np.append(_independent_block(p[:3]), np.nan)
    result = step_down(np.log10(p), block, ALPHA)
    assert not (holm_log10(np.log10(p)) < math.log10(ALPHA)).any()
    assert list(result.rejected) == [True, True, True, False]


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    p=st.lists(st.floats(1e-9, 1.0), min_size=1, max_size=9),
    inside=st.lists(st.booleans(), min_size=9, max_size=9),
    alpha=st.sampled_from([0.01, 0.05, 0.2]),
)
def test_the_step_levels_agree_with_the_verdicts(
    p: list[float], inside: list[bool], alpha: float
) -> None:
    """§4c.10's agreement: a contrast is rejected exactly when its marginal p lies below the
    level of its step (so its interval, its own test's at that level, excludes 0); adjusted p
    never fall with the steps."""
    p_arr = np.array(p)
    in_block = np.array(inside[: p_arr.size])
    n_b = int(in_block.sum())
    block = np.full(p_arr.size, np.nan)
    with np.errstate(divide="ignore"):  # p = 1: log1p(−1) = −inf, a block p̃ of 1
        block[in_block] = np.log10(-np.expm1(n_b * np.log1p(-p_arr[in_block])))
    result = step_down(np.log10(p_arr), block, alpha)
    # u_T of an independent block: 1 − (1 − u)^|B| + n_C u = α
    u_block = np.full(p_arr.size, np.nan)
    for j in np.flatnonzero(in_block):
        e = result.others[j]
        u_block[j] = _solve(lambda u, e=e: -math.expm1(n_b * math.log1p(-u)) + e * u - alpha)
    levels = step_levels(result, in_block, u_block, alpha)
    for j in range(p_arr.size):
        if abs(p_arr[j] - levels[j]) > 1e-9 * levels[j]:  # off the boundary itself
            assert result.rejected[j] == (p_arr[j] < levels[j]), (j, p_arr[j], levels[j])
    order = np.argsort(result.step)
    assert np.all(np.diff(result.log10_p_adjusted[order]) >= 0)


def _solve(f) -> float:
    lo, hi = 1e-15, 1.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if f(mid) < 0 else (lo, mid)
    return 0.5 * (lo + hi)


def test_its_family_wise_error_under_the_global_null_is_at_most_alpha() -> None:
    """20,000 families of four independent block members and three tests outside it (uniform
    p), every null true: any rejection is a false claim. The rate must lie within 3 Monte
    Carlo SEs of at most α, and at least Holm's (it rejects whatever Holm rejects)."""
    rng = np.random.default_rng(2026)
    n, hits, holm_hits = 20_000, 0, 0
    for _ in range(n):
        p = rng.uniform(size=7)
        block = np.append(_independent_block(p[:4]), [np.nan] * 3)
        hits += step_down(np.log10(p), block, ALPHA).rejected.any()
        holm_hits += (holm_log10(np.log10(p)) < math.log10(ALPHA)).any()
    se = math.sqrt(ALPHA * (1 - ALPHA) / n)
    assert holm_hits <= hits
    assert hits / n <= ALPHA + 3 * se


def test_block_levels_solve_the_step_equation() -> None:
    """u_T: P(max|T| ≥ q) + e · p₁(q) = α at ν' (max-t's own probability), and with e = 0 the
    single-step max-t level."""
    corr = np.array([[1.0, 0.5, 0.5], [0.5, 1.0, 0.5], [0.5, 0.5, 1.0]])
    df = np.array([12.0, 12.0, 30.0])
    q, u = block_levels(corr, df, ALPHA, np.array([0.0, 2.0, 2.0]))
    single = max_t(np.ones(3), df, corr, ALPHA)
    assert u[0] == pytest.approx(single.level[0], rel=1e-9)
    for j, e in ((1, 2.0), (2, 2.0)):
        at = max_t(np.full(3, q[j]), df, corr, ALPHA)  # P(max|T| ≥ q_j) at ν'_j
        nu = at.df_used[j]
        assert u[j] == pytest.approx(2 * stats.t.sf(q[j], nu), rel=1e-9)
        assert at.p_adjusted[j] + e * u[j] == pytest.approx(ALPHA, rel=1e-6)
    assert u[1] < single.level[1]  # two more tests in the set: a smaller level
