"""The band-calibrated test of two systems' run means (docs/method.md §4b.11) and moderated run
variances (§4b.12): p(ρ) against closed forms, an independent two-dimensional quadrature and
200,000 simulated experiments; the band's supremum against a dense grid; the test's level over
the band; the critical value as the inverse; what adding runs does to it; Berger-Boos outside
the band; power against simulation; tails finite far out. limma's goldens are in
tests/golden/test_limma_golden.py."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, optimize, special, stats

from infrepro.stats.calibrated import (
    band_log10_p,
    berger_boos_log10_p,
    beyond_prior,
    critical_t,
    critical_t_floor,
    log10_tail,
    moderated_variances,
    power,
    ratio_interval,
    squeeze_var,
    supported_variances,
)


def _theta(rho: float, n_a: int, n_b: int) -> float:
    return n_b / (n_b + rho * n_a)


def _log_u_nodes(f: float, per_sd: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """U = χ²_f/f and trapezoid weights on a fine grid of x = log U (±60 nats of density)."""
    half = f / 2
    x = np.arange(-120.0 / half - 1, 6.0 / math.sqrt(half) + 1, math.sqrt(1 / half) / per_sd)
    log_density = half * x - half * np.exp(x) - special.gammaln(half) + half * math.log(half)
    return np.exp(x), np.exp(log_density) * (x[1] - x[0])


def _expectation(g, theta: float, f_a: float, f_b: float) -> float:
    """E[g(W)], W = θ U_A + (1 − θ) U_B, on a tensor grid over both chi-squares: independent of
    the module's one-dimensional (Beta-mixture) representation."""
    (u_a, w_a), (u_b, w_b) = _log_u_nodes(f_a), _log_u_nodes(f_b)
    wgt = theta * u_a[:, None] + (1 - theta) * u_b[None, :]
    return float((np.outer(w_a, w_b) * g(wgt)).sum())


# ------------------------------------------------------------------------- p(ρ) itself


@pytest.mark.parametrize(("n_a", "n_b"), [(10, 2), (3, 2), (5, 3), (20, 3)])
def test_closed_forms(n_a: int, n_b: int) -> None:
    """At θ = f_A/(f_A + f_B), h is constant and T ~ t_{f_A + f_B}; at ρ = 0 and ∞ it is t with
    the df of the side that carries all the variance; with both variances known, normal."""
    f_a, f_b = n_a - 1, n_b - 1
    rho_star = n_b * f_b / (n_a * f_a)  # θ(ρ*) = f_A/(f_A + f_B)
    for t in (0.3, 2.0, 7.0, 40.0, 1e4):
        got = log10_tail(t, n_a, n_b, [rho_star, 0.0, math.inf])
        want = [
            (math.log(2) + stats.t.logsf(t, f_a + f_b)) / math.log(10),
            (math.log(2) + stats.t.logsf(t, f_a)) / math.log(10),
            (math.log(2) + stats.t.logsf(t, f_b)) / math.log(10),
        ]
        np.testing.assert_allclose(got, want, rtol=1e-10)
        normal = (math.log(2) + special.log_ndtr(-t)) / math.log(10)
        assert log10_tail(t, n_a, n_b, [0.7], math.inf, math.inf)[0] == pytest.approx(normal)


@pytest.mark.parametrize(
    ("n_a", "n_b", "rho", "t"),
    [(10, 2, 1.0, 3.0), (10, 2, 4.0, 6.0), (3, 2, 0.25, 5.0), (2, 2, 16.0, 2.0), (6, 3, 0.5, 4.0)],
)
def test_equals_independent_quadrature(n_a: int, n_b: int, rho: float, t: float) -> None:
    want = _expectation(
        lambda w: 2 * special.ndtr(-t * np.sqrt(w)), _theta(rho, n_a, n_b), n_a - 1, n_b - 1
    )
    assert 10 ** log10_tail(t, n_a, n_b, [rho])[0] == pytest.approx(want, rel=1e-9)


def test_equals_adaptive_quadrature() -> None:
    """One case by scipy's adaptive two-dimensional quadrature over the chi-squares' quantiles."""
    n_a, n_b, rho, t = 6, 3, 0.5, 4.0
    theta, f_a, f_b = _theta(rho, n_a, n_b), n_a - 1, n_b - 1

    def integrand(q_b: float, q_a: float) -> float:
        w = theta * stats.chi2.ppf(q_a, f_a) / f_a + (1 - theta) * stats.chi2.ppf(q_b, f_b) / f_b
        return 2 * stats.norm.sf(t * math.sqrt(w))

    want = integrate.dblquad(integrand, 0, 1, 0, 1, epsabs=1e-12, epsrel=1e-8)[0]
    assert 10 ** log10_tail(t, n_a, n_b, [rho])[0] == pytest.approx(want, rel=1e-7)


def test_one_known_variance_equals_quadrature() -> None:
    """f_B = ∞ (B's variance known): E over U_A only, by scipy's adaptive quadrature."""
    for f_a, rho, t in [(1.0, 1.0, 3.0), (4.0, 0.3, 5.0), (2.5, 4.0, 2.0)]:
        theta = _theta(rho, 3, 3)
        want = integrate.quad(
            lambda q, th=theta, fa=f_a, tt=t: (
                2 * stats.norm.sf(tt * math.sqrt(th * stats.chi2.ppf(q, fa) / fa + 1 - th))
            ),
            0,
            1,
            epsabs=1e-14,
            epsrel=1e-11,
            limit=200,
        )[0]
        got = 10 ** log10_tail(t, 3, 3, [rho], f_a, math.inf)[0]
        assert got == pytest.approx(want, rel=1e-8)
        mirrored = 10 ** log10_tail(t, 3, 3, [1 / rho], math.inf, f_a)[0]
        assert mirrored == pytest.approx(want, rel=1e-8)


@pytest.mark.parametrize(
    ("n_a", "n_b", "rho"), [(10, 2, 1.0), (10, 2, 4.0), (3, 2, 16.0), (5, 3, 0.25), (4, 4, 1.0)]
)
def test_matches_simulated_welch_statistic(n_a: int, n_b: int, rho: float) -> None:
    """200,000 experiments of normal run means: P(|T| ≥ t) within 4 Monte Carlo SEs."""
    rng = np.random.default_rng(28)
    draws = 200_000
    a = rng.normal(0.0, 1.0, (draws, n_a))
    b = rng.normal(0.0, math.sqrt(rho), (draws, n_b))
    se = np.sqrt(a.var(axis=1, ddof=1) / n_a + b.var(axis=1, ddof=1) / n_b)
    stat = np.abs(b.mean(axis=1) - a.mean(axis=1)) / se
    for t in (1.0, 2.5, 4.0, 8.0):
        simulated = float((stat >= t).mean())
        exact = 10 ** log10_tail(t, n_a, n_b, [rho])[0]
        assert abs(simulated - exact) < 4 * math.sqrt(exact * (1 - exact) / draws), (t, exact)


def test_tails_stay_finite_and_ordered() -> None:
    values = [log10_tail(t, 5, 5, [1.0])[0] for t in (40.0, 1e3, 1e6, 1e12, 1e100, 1e300)]
    assert all(math.isfinite(v) for v in values)
    assert all(later < earlier for earlier, later in zip(values, values[1:], strict=False))
    # t = 40 with 9 df (equal runs, ρ = 1: t_8 exactly) and far beyond
    want = (math.log(2) + stats.t.logsf(40.0, 8)) / math.log(10)
    assert values[0] == pytest.approx(want, rel=1e-10)
    for f in (1.0, 3.0, 50.0, 2000.0):
        deep = band_log10_p(1e200, 6, 3, 2.0, f, f)
        assert math.isfinite(deep) and deep < -200
    assert math.isfinite(berger_boos_log10_p(1e50, 10, 2, 1.0, 3.0))
    assert critical_t(1e-30, 10, 2) > critical_t(1e-10, 10, 2) > critical_t(0.05, 10, 2)


def test_large_df_approach_known_variances() -> None:
    known = log10_tail(3.0, 5, 5, [2.0], math.inf, math.inf)[0]
    for f, tol in [(1e4, 3e-3), (1e6, 3e-5)]:
        assert log10_tail(3.0, 5, 5, [2.0], f, f)[0] == pytest.approx(known, rel=tol)
        assert log10_tail(3.0, 5, 5, [2.0], f, math.inf)[0] == pytest.approx(known, rel=tol)


# ------------------------------------------------------------------------- the band


@pytest.mark.parametrize(("n_a", "n_b"), [(10, 2), (3, 2), (2, 2), (6, 3), (20, 3), (4, 4)])
@pytest.mark.parametrize("t", [1.5, 4.0, 12.0])
def test_band_supremum_equals_dense_grid(n_a: int, n_b: int, t: float) -> None:
    """p(ρ) is convex in θ, so no ρ inside the band beats its ends: 401 ratios checked."""
    grid = np.geomspace(0.25, 4.0, 401)
    dense = log10_tail(t, n_a, n_b, grid)
    sup = band_log10_p(t, n_a, n_b, 2.0)
    assert sup == pytest.approx(dense.max(), abs=1e-12)
    assert np.all(dense <= sup + 1e-12)
    # ... and the largest p over all ratios is Hsu's: t with min(f) df
    hsu = (math.log(2) + stats.t.logsf(t, min(n_a, n_b) - 1)) / math.log(10)
    assert band_log10_p(t, n_a, n_b, math.inf) == pytest.approx(hsu, rel=1e-10)
    assert sup <= hsu + 1e-12


@pytest.mark.parametrize(
    ("n", "f_a", "f_b"), [(3, None, None), (3, 6.0, 6.0), (5, math.inf, math.inf), (3, 6.0, 9.0)]
)
@pytest.mark.parametrize("band", [2.0, 4.0, math.inf])
@pytest.mark.parametrize("t", [0.7, 3.0, 15.0])
def test_band_p_is_the_larger_end_also_where_one_end_serves(
    n: int, f_a: float | None, f_b: float | None, band: float, t: float
) -> None:
    """With n_A = n_B and f_A = f_B the band's ends are θ and 1 - θ, whose p are equal (U_A and
    U_B alike), and band_log10_p takes one; with f_A != f_B they differ and it takes the
    larger. Both ends by log10_tail decide."""
    ends = log10_tail(t, n, n, [1.0 / band**2, band**2], f_a, f_b)
    if f_a == f_b:
        assert ends[0] == pytest.approx(ends[1], rel=1e-12, abs=1e-300)
    else:
        assert abs(ends[0] - ends[1]) > 1e-6 * abs(ends.max())
    assert band_log10_p(t, n, n, band, f_a, f_b) == pytest.approx(ends.max(), rel=1e-12)


@pytest.mark.parametrize(("n_a", "n_b"), [(3, 2), (4, 2), (10, 2), (5, 3), (6, 3), (20, 3)])
def test_level_at_most_alpha_over_the_band(n_a: int, n_b: int) -> None:
    """At |T| > critical_t(0.05) the rejection rate, by independent quadrature, is ≤ 0.05 at
    every ratio of the band and reaches it at an end."""
    c = critical_t(0.05, n_a, n_b)
    levels = [
        _expectation(
            lambda w: 2 * special.ndtr(-c * np.sqrt(w)), _theta(rho, n_a, n_b), n_a - 1, n_b - 1
        )
        for rho in np.geomspace(0.25, 4.0, 21)
    ]
    assert max(levels) <= 0.05 + 1e-10
    assert max(levels) == pytest.approx(0.05, rel=1e-9)


@pytest.mark.parametrize("level", [0.05, 0.01, 1e-4, 1e-9])
@pytest.mark.parametrize(("n_a", "n_b", "band"), [(10, 2, 2.0), (6, 3, 1.5), (4, 4, 3.0)])
def test_critical_t_inverts_band_p(level: float, n_a: int, n_b: int, band: float) -> None:
    c = critical_t(level, n_a, n_b, band)
    assert band_log10_p(c, n_a, n_b, band) == pytest.approx(math.log10(level), abs=1e-9)
    assert band_log10_p(c * 1.001, n_a, n_b, band) < math.log10(level)


@pytest.mark.parametrize(("n_a", "n_b", "f_a", "f_b"), [(3, 9, 2.0, 8.0), (2, 5, 5.5, 8.5)])
def test_critical_t_is_one_value_for_either_order(
    n_a: int, n_b: int, f_a: float, f_b: float
) -> None:
    # one root search serves both orders; the p it inverts is the same in both (ρ -> 1/ρ)
    c = critical_t(0.01, n_a, n_b, 2.0, f_a, f_b)
    assert critical_t(0.01, n_b, n_a, 2.0, f_b, f_a) == c
    for args in ((n_a, n_b, 2.0, f_a, f_b), (n_b, n_a, 2.0, f_b, f_a)):
        assert band_log10_p(c, *args) == pytest.approx(-2.0, abs=1e-9)


def test_critical_t_between_known_limits() -> None:
    # band 1: ρ = 1 only; with equal runs T ~ t_{2(n-1)} there
    assert critical_t(0.05, 5, 5, 1.0) == pytest.approx(stats.t.isf(0.025, 8), rel=1e-9)
    # every band lies between ρ = 1 and Hsu's t with min(f) df
    for n_a, n_b in [(10, 2), (5, 3), (8, 8)]:
        hsu = stats.t.isf(0.025, min(n_a, n_b) - 1)
        assert critical_t(0.05, n_a, n_b, 1.0) < critical_t(0.05, n_a, n_b) < hsu
        assert critical_t(0.05, n_a, n_b, 1e6) == pytest.approx(hsu, rel=1e-4)


@settings(max_examples=40, deadline=None)
@given(
    st.integers(min_value=2, max_value=30),
    st.integers(min_value=2, max_value=30),
    st.sampled_from([0.05, 0.01, 1e-4]),
    st.sampled_from([1.0, 1.5, 2.0, 4.0]),
    st.sampled_from([0.0, 2.5]),
)
def test_critical_t_floor_bounds_every_band(
    n_a: int, n_b: int, level: float, band: float, prior: float
) -> None:
    """The closed-form floor (t with f_A + f_B df) is below the calibrated critical value, and
    power at the floor is at least the power at the critical value (the planning's skip)."""
    f_a, f_b = n_a - 1 + prior, n_b - 1 + prior
    floor = critical_t_floor(level, f_a, f_b)
    assert floor <= critical_t(level, n_a, n_b, band, f_a, f_b)
    exact = power(0.3, 1.0, 2.0, n_a, n_b, level, band, f_a, f_b)
    bound = power(0.3, 1.0, 2.0, n_a, n_b, level, band, f_a, f_b, critical=floor)
    assert bound.directional >= exact.directional
    one_side = power(0.3, 1.0, 2.0, n_a, n_b, level, band, f_a, f_b, two_sided=False)
    assert one_side.directional == exact.directional and math.isnan(one_side.two_sided)
    assert critical_t_floor(level, math.inf, f_b) == pytest.approx(stats.norm.isf(level / 2))
    assert critical_t_floor(level, f_a, f_b) == pytest.approx(stats.t.isf(level / 2, f_a + f_b))


_runs = st.integers(min_value=2, max_value=40)


@settings(max_examples=60, deadline=None)
@given(_runs, _runs, st.sampled_from([0.05, 0.01]), st.sampled_from([1.5, 2.0, 3.0]))
def test_a_run_on_the_smaller_side_never_raises_the_critical_value(
    n_a: int, n_b: int, level: float, band: float
) -> None:
    """Adding a run to the side with fewer runs, or one to each side, never raises the critical
    value (nor lowers the power). Adding one to the side with at least as many runs can: see
    test_a_run_on_the_larger_side_can_raise_it."""
    few, many = sorted((n_a, n_b))
    c = critical_t(level, few, many, band)
    if few < many:
        assert critical_t(level, few + 1, many, band) <= c * (1 + 1e-9)
        assert critical_t(level, many, few + 1, band) <= c * (1 + 1e-9)
        more = power(1.5, 1.0, 1.0, few + 1, many, level, band).directional
        assert more >= power(1.5, 1.0, 1.0, few, many, level, band).directional - 1e-9
    assert critical_t(level, few + 1, many + 1, band) <= c * (1 + 1e-9)


def test_a_run_on_the_larger_side_can_raise_it() -> None:
    """With Welch's statistic no valid critical value can fall with every added run: as n_A
    grows with n_B fixed, θ → 0 at every ratio and T → t_{n_B − 1}, so the critical value of
    any test valid in the band tends to Hsu's (12.7 with 2 runs of B). Adding runs to the
    larger side therefore raises it, from the balanced design on."""
    assert critical_t(0.05, 3, 2) < critical_t(0.05, 4, 2) < critical_t(0.05, 10, 2)
    assert critical_t(0.05, 4, 4) < critical_t(0.05, 5, 4)
    assert critical_t(0.05, 10_000, 2) == pytest.approx(stats.t.isf(0.025, 1), rel=0.02)
    # ... while power, which the added run's precision also moves, still rises at first
    assert power(2.0, 1, 1, 10, 2, 0.05).directional > power(2.0, 1, 1, 4, 2, 0.05).directional


# ------------------------------------------------------------------------- Berger-Boos


def test_ratio_interval_covers_at_its_level() -> None:
    f_a, f_b, rho, beta = 4, 2, 3.0, 0.1
    unit = np.array(ratio_interval(1.0, f_a, 1.0, f_b, beta))
    assert ratio_interval(2.0, f_a, 5.0, f_b, beta) == pytest.approx(tuple(2.5 * unit))
    rng = np.random.default_rng(5)
    ratio = rho * (rng.chisquare(f_b, 200_000) / f_b) / (rng.chisquare(f_a, 200_000) / f_a)
    miss = float(((ratio * unit[0] > rho) | (ratio * unit[1] < rho)).mean())
    assert abs(miss - beta) < 4 * math.sqrt(beta * (1 - beta) / 200_000)
    assert ratio_interval(1.0, math.inf, 2.0, math.inf, 0.01) == (2.0, 2.0)
    assert ratio_interval(0.0, 3, 0.0, 3, 0.01) == (0.0, math.inf)


def _point_critical(n_a: int, n_b: int, gamma: float) -> tuple[np.ndarray, np.ndarray]:
    """The critical value of p(ρ) alone at level γ on a grid of logit θ (ends: θ = 0, 1)."""
    z = np.linspace(-24.0, 24.0, 161)
    out = []
    for zz in z:
        theta = special.expit(zz)
        rho = n_b * (1 - theta) / (theta * n_a)
        out.append(
            optimize.brentq(
                lambda t, r=rho: log10_tail(t, n_a, n_b, [r])[0] - math.log10(gamma),
                0.0,
                stats.t.isf(gamma / 2, min(n_a, n_b) - 1) * 1.001,
                xtol=1e-10,
            )
        )
    return z, np.array(out)


def _berger_boos_level(n_a: int, n_b: int, rho0: float, alpha: float, beta: float) -> float:
    """P_{ρ0}(p_BB ≤ α) by Monte Carlo over the two variance estimates (20,000 draws), the
    normal integrated out: given s_A², s_B², p_BB ≤ α exactly when |T| ≥ c(s_A², s_B²)."""
    f_a, f_b, band = n_a - 1, n_b - 1, 2.0
    rng = np.random.default_rng(17)
    u_a, u_b = rng.chisquare(f_a, 20_000) / f_a, rng.chisquare(f_b, 20_000) / f_b
    q_lo, q_hi = ratio_interval(1.0, f_a, 1.0, f_b, beta)
    lo, hi = rho0 * u_b / u_a * q_lo, rho0 * u_b / u_a * q_hi
    inside = (lo >= 1 / band**2) & (hi <= band**2)
    crit = np.where(inside, critical_t(alpha, n_a, n_b, band), np.inf)
    if alpha > beta:
        z, c_point = _point_critical(n_a, n_b, alpha - beta)

        def at(rho: np.ndarray) -> np.ndarray:
            return np.interp(special.logit(n_b / (n_b + rho * n_a)), z, c_point)

        outside = np.maximum(critical_t(alpha - beta, n_a, n_b, band), np.maximum(at(lo), at(hi)))
        crit = np.where(inside, crit, outside)
        for i in np.flatnonzero(~inside)[:4]:  # the threshold is berger_boos_log10_p's
            s2_a, s2_b = u_a[i], rho0 * u_b[i]
            assert berger_boos_log10_p(crit[i] * 1.002, n_a, n_b, s2_a, s2_b) < math.log10(alpha)
            assert berger_boos_log10_p(crit[i] * 0.998, n_a, n_b, s2_a, s2_b) > math.log10(alpha)
    theta0 = n_b / (n_b + rho0 * n_a)
    return float((2 * stats.norm.sf(crit * np.sqrt(theta0 * u_a + (1 - theta0) * u_b))).mean())


@pytest.mark.parametrize(("n_a", "n_b", "rho0"), [(3, 2, 16.0), (10, 2, 16.0), (2, 2, 1 / 16)])
def test_berger_boos_holds_the_level_outside_the_band(n_a: int, n_b: int, rho0: float) -> None:
    """Run-SD ratio 4 (ρ = 16, outside the band): the band's test alone rejects more than 5 %,
    Berger-Boos at most 5 %."""
    alone = 10 ** log10_tail(critical_t(0.05, n_a, n_b), n_a, n_b, [rho0])[0]
    assert alone > 0.05
    assert _berger_boos_level(n_a, n_b, rho0, 0.05, 0.001) <= 0.05


def test_berger_boos_is_the_band_p_when_the_data_agree_with_the_band() -> None:
    t, n = 3.1, 30
    band = band_log10_p(t, n, n)
    assert berger_boos_log10_p(t, n, n, 1.0, 1.1) == band  # C = [0.37, 3.3] ⊂ [1/4, 4]
    wide = berger_boos_log10_p(t, n, n, 1.0, 3.0)  # C reaches past 4
    assert wide > band
    lo, hi = ratio_interval(1.0, n - 1, 3.0, n - 1, 0.001)
    sup = max(band, float(log10_tail(t, n, n, [lo, hi]).max()))
    assert wide == pytest.approx(math.log10(0.001 + 10**sup), rel=1e-12)
    # below β, inside the band: Hsu's p (valid at every ratio), capped at β
    deep = 12.0
    hsu = band_log10_p(deep, n, n, math.inf)
    assert berger_boos_log10_p(deep, n, n, 1.0, 1.1) == pytest.approx(min(hsu, -3.0))
    assert berger_boos_log10_p(deep, n, n, 1.0, 1.1) >= band_log10_p(deep, n, n)


# ------------------------------------------------------------------------- power


@pytest.mark.parametrize(
    ("n_a", "n_b", "v_b", "delta"), [(10, 2, 1.0, 2.0), (4, 4, 2.0, 1.5), (6, 3, 0.5, 1.0)]
)
def test_power_matches_simulation(n_a: int, n_b: int, v_b: float, delta: float) -> None:
    rng = np.random.default_rng(99)
    draws = 200_000
    a = rng.normal(0.0, 1.0, (draws, n_a))
    b = rng.normal(delta, math.sqrt(v_b), (draws, n_b))
    se = np.sqrt(a.var(axis=1, ddof=1) / n_a + b.var(axis=1, ddof=1) / n_b)
    stat = (b.mean(axis=1) - a.mean(axis=1)) / se
    got = power(delta, 1.0, v_b, n_a, n_b, 0.05)
    for simulated, exact in [
        (float((np.abs(stat) > got.critical_t).mean()), got.two_sided),
        (float((stat > got.critical_t).mean()), got.directional),
    ]:
        assert abs(simulated - exact) < 4 * math.sqrt(exact * (1 - exact) / draws)
    assert power(-delta, 1.0, v_b, n_a, n_b, 0.05) == got


def test_power_at_no_difference_is_the_level_at_that_ratio() -> None:
    for rho in (0.25, 1.0, 4.0):
        got = power(0.0, 1.0, rho, 10, 2, 0.05)
        at_rho = 10 ** log10_tail(got.critical_t, 10, 2, [rho])[0]
        assert got.two_sided == pytest.approx(at_rho, rel=1e-9)
        assert got.directional == pytest.approx(at_rho / 2, rel=1e-9)


# ------------------------------------------------------------------------- moderation


def test_squeeze_var_limits() -> None:
    # identical variances: no spread beyond sampling, d0 = ∞, every posterior is s0²
    even = squeeze_var(np.full(6, 2.0), 3.0)
    assert math.isinf(even.d0) and np.allclose(even.var_post, 2.0)
    assert np.array_equal(even.df_post, np.full(6, 18.0))  # eBayes' cap: Σ f
    one = squeeze_var([5.0], 2.0)
    assert one.d0 == 0.0 and one.var_post[0] == 5.0
    with pytest.raises(ValueError):
        squeeze_var([], 1.0)
    with pytest.raises(ValueError):
        squeeze_var([1.0, 2.0], 0.0)  # no df: limma stops too


def test_moderated_variances_cap_the_prior_df() -> None:
    var = np.array([0.002, 2.0, 0.05, 30.0, 0.01, 3.0])
    df = np.array([1.0, 2.0, 1.0, 2.0, 1.0, 2.0])
    fitted = squeeze_var(var, df)
    capped = moderated_variances(var, df, max_prior_df=fitted.d0 / 2)
    assert capped.d0 == fitted.d0 / 2
    assert capped.s0_squared == fitted.s0_squared
    d0 = capped.d0
    np.testing.assert_allclose(capped.var_post, (df * var + d0 * fitted.s0_squared) / (df + d0))
    np.testing.assert_allclose(capped.df_post, np.minimum(df + d0, df.sum()))
    # under the cap limma's fit is used as it is
    same = moderated_variances(var, df, max_prior_df=fitted.d0 * 2)
    np.testing.assert_array_equal(same.var_post, fitted.var_post)
    # d0 = ∞ (identical variances): the cap keeps each system's own variance in the posterior
    even = moderated_variances([1.0, 1.2, 0.9, 1.1, 1.0, 0.95], 3.0)
    assert squeeze_var([1.0, 1.2, 0.9, 1.1, 1.0, 0.95], 3.0).d0 == math.inf and even.d0 == 4.0
    assert np.all(even.df_post == 7.0)


def test_beyond_prior_flags_a_variance_above_its_prior_predictive_quantile() -> None:
    """s_k²/s0² ~ F(f_k, d0) under the prior (χ²_f/f at d0 = ∞): above the quantile, flagged;
    a variance with no df never is."""
    prior = moderated_variances([1.0, 2.0], 2.0)
    upper = stats.f.ppf(0.8, [1.0, 2.0], prior.d0) * prior.s0_squared
    var = np.array([upper[0] * 0.999, upper[1] * 1.001])
    assert list(beyond_prior(var, [1.0, 2.0], prior, 0.8)) == [False, True]
    flat = moderated_variances([1.0, 1.0, 1.0], 3.0)
    flat = type(flat)(math.inf, 1.0, flat.var_post, flat.df_post)
    edge = stats.chi2.ppf(0.9, 3.0) / 3.0
    assert list(beyond_prior([edge * 0.99, edge * 1.01, 50.0], [3.0, 3.0, 0.0], flat, 0.9)) == [
        False,
        True,
        False,
    ]


def test_supported_variances_do_not_shrink_a_variance_the_prior_does_not_support() -> None:
    """One variance far above the others: it keeps max(ṽ_k, s_k²) = s_k² with the posterior
    df; every other system's variance and df are limma's capped posterior ones."""
    var = np.array([1.0, 1.3, 0.8, 1.1, 0.9, 1.2, 0.7, 40.0])
    df = np.array([2.0, 1.0] * 4)
    plain = moderated_variances(var, df)
    got, kept = supported_variances(var, df)
    assert list(kept) == [False] * 7 + [True]
    assert plain.var_post[-1] < var[-1] == got.var_post[-1]
    np.testing.assert_array_equal(got.var_post[:-1], plain.var_post[:-1])
    np.testing.assert_array_equal(got.df_post, plain.df_post)
    assert (got.d0, got.s0_squared) == (plain.d0, plain.s0_squared)
    even, none = supported_variances([1.0, 1.2, 0.9, 1.1, 1.0, 0.95], 3.0)
    assert not none.any()
    np.testing.assert_array_equal(
        even.var_post, moderated_variances([1.0, 1.2, 0.9, 1.1, 1.0, 0.95], 3.0).var_post
    )


def test_inputs_are_checked() -> None:
    with pytest.raises(ValueError):
        critical_t(0.05, 1, 5)  # one run: no variance of its own
    with pytest.raises(ValueError):
        band_log10_p(2.0, 5, 5, 0.5)
    with pytest.raises(ValueError):
        log10_tail(math.inf, 5, 5, [1.0])
