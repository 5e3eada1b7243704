"""The single-step max-t (docs/method.md §4c.10) against closed forms and its own promises.

References derived independently of the module: the t test (one contrast, or a family of rank
one); Šidák for two independent normal contrasts, and for t a one-dimensional integral over the
shared s = sqrt(χ²_ν / ν); the equicorrelated normal by its one-dimensional integral over the
common factor; all pairs of equal-variance means by the studentized range (Tukey). Tolerances are
the module's own error estimate (``MaxT.error``: three standard errors of its integration) plus
the reference's quadrature error (1e-7), and 2 % relative in the tail (p ~ 1e-6 to 1e-12).
"""

from __future__ import annotations

import itertools
import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, optimize, special, stats

from infrepro.stats import simultaneous
from infrepro.stats.simultaneous import emmeans_df, max_t

ALPHA = 0.05
QUAD = 1e-7  # the references' own quadrature error


def _corr(v: np.ndarray, pairs: bool) -> np.ndarray:
    """Correlation of the contrasts of independent means with variances v: all pairs in
    emmeans' order, or each system against the first (the baseline)."""
    k = v.size
    if pairs:
        idx = list(itertools.combinations(range(k), 2))
    else:
        idx = [(j, 0) for j in range(1, k)]
    L = np.zeros((len(idx), k))
    for row, (a, b) in enumerate(idx):
        L[row, a], L[row, b] = 1.0, -1.0
    cov = L @ np.diag(v) @ L.T
    return cov / np.sqrt(np.outer(np.diag(cov), np.diag(cov)))


def _chi_mixture(g, nu: float) -> float:
    """E[g(s)], s = sqrt(χ²_ν / ν): density 2 ν s · f_χ²(ν s²)."""

    def density(s: float) -> float:
        return 2.0 * nu * s * stats.chi2.pdf(nu * s * s, nu)

    upper = math.sqrt(stats.chi2.isf(1e-16, nu) / nu)
    value, _ = integrate.quad(lambda s: g(s) * density(s), 0.0, upper, epsabs=1e-12, limit=200)
    return value


# --------------------------------------------------------------------------- emmeans' df
@pytest.mark.parametrize(
    ("df", "expected"),
    [(0.4, 1.0), (1.29, 1.0), (1.74, 1.0), (1.75, 2.0), (7.8, 8.0), (9999.0, 9999.0),
     (9999.5, 0.0), (math.inf, 0.0), (math.nan, 0.0)],
)  # fmt: skip
def test_emmeans_df_rule(df: float, expected: float) -> None:
    """floor(max(1, ν) + 0.25), the normal (0) above 9999 or when missing (emmeans .fix.df)."""
    assert emmeans_df(np.array([df]))[0] == expected


def test_emmeans_df_rejects_nonpositive() -> None:
    with pytest.raises(ValueError, match="positive"):
        emmeans_df(np.array([3.0, 0.0]))


# --------------------------------------------------------------------------- closed forms
@pytest.mark.parametrize(("t", "df"), [(2.3, 4.37), (-0.4, 12.0), (7.0, 2.5), (3.1, math.inf)])
def test_one_contrast_is_the_t_test(t: float, df: float) -> None:
    """A family of one is no family: the t test with its own, unrounded df (emmeans)."""
    result = max_t(np.array([t]), np.array([df]), np.eye(1), ALPHA)
    dist = stats.norm if math.isinf(df) else stats.t(df)
    assert result.p_adjusted[0] == pytest.approx(2 * dist.sf(abs(t)), rel=1e-12)
    assert result.critical[0] == pytest.approx(dist.isf(ALPHA / 2), rel=1e-12)
    assert result.level[0] == ALPHA
    assert result.error == 0.0


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_rank_one_family_is_the_t_test_with_integer_df(sign: float) -> None:
    """Two copies of one contrast (or it and its negative): max|T| = |T|, exactly."""
    corr = np.array([[1.0, sign], [sign, 1.0]])
    result = max_t(np.array([2.2, 2.2]), np.array([6.6, 6.6]), corr, ALPHA)
    assert result.df_used.tolist() == [6.0, 6.0]
    np.testing.assert_allclose(result.p_adjusted, 2 * stats.t.sf(2.2, 6), rtol=1e-9)
    np.testing.assert_allclose(result.critical, stats.t.isf(ALPHA / 2, 6), rtol=1e-9)
    np.testing.assert_allclose(result.level, ALPHA, rtol=1e-9)


@pytest.mark.parametrize("t", [0.8, 2.0, 3.3])
def test_two_independent_normal_contrasts_are_sidak(t: float) -> None:
    """ν' = 0 (df > 9999): P(max(|Z₁|, |Z₂|) ≥ c) = 1 − (1 − p)², Šidák."""
    result = max_t(np.array([t, 1.0]), np.array([1e5, 1e5]), np.eye(2), ALPHA)
    p = 2 * stats.norm.sf(t)
    assert result.p_adjusted[0] == pytest.approx(1 - (1 - p) ** 2, abs=result.error + QUAD)
    q = stats.norm.isf((1 - math.sqrt(1 - ALPHA)) / 2)
    assert result.critical[0] == pytest.approx(q, rel=1e-4)


@pytest.mark.parametrize(("t", "nu"), [(1.5, 3), (2.7, 8), (4.0, 2)])
def test_two_independent_t_contrasts_share_s(t: float, nu: int) -> None:
    """T_i = Z_i / s with one s: P(max|T| < c) = E_s[(2Φ(c s) − 1)²] (and so below Šidák's
    1 − (1 − p)², the T being positively dependent)."""
    result = max_t(np.array([t, 0.3]), np.array([nu, nu], dtype=float), np.eye(2), ALPHA)
    inside = _chi_mixture(lambda s: (2 * stats.norm.cdf(t * s) - 1) ** 2, nu)
    assert result.p_adjusted[0] == pytest.approx(1 - inside, abs=result.error + QUAD)
    assert result.p_adjusted[0] < 1 - (1 - 2 * stats.t.sf(t, nu)) ** 2


def _equicorrelated_tail(x: float, m: int) -> float:
    """P(max|Z_i| > x), Z_i = √ρ W + √(1 − ρ) E_i, ρ = 0.5: ∫ φ(w) (1 − (1 − τ(w))^m) dw with
    τ(w) = P(|√ρ w + √(1 − ρ) E| > x), summed without cancellation for tiny values."""
    r = s = math.sqrt(0.5)

    def integrand(w: float) -> float:
        tau = special.ndtr((w * r - x) / s) + special.ndtr((-x - r * w) / s)
        outside = -math.expm1(m * math.log1p(-tau)) if tau < 1.0 else 1.0
        return math.exp(-0.5 * w * w) / math.sqrt(2.0 * math.pi) * outside

    value, _ = integrate.quad(integrand, -12, 12, epsabs=1e-300, epsrel=1e-10, limit=400)
    return value


@pytest.mark.parametrize("m", [3, 10, 29])
def test_equicorrelated_normal(m: int) -> None:
    """ρ = 0.5, the normal: adjusted p and the critical value against the 1-D integral over the
    common factor; in the tail (p below 1e-6, down to ~1e-12) to 2 % relative."""
    corr = np.full((m, m), 0.5) + 0.5 * np.eye(m)
    t = np.linspace(0.5, 7.0, m)
    result = max_t(t, np.full(m, 1e5), corr, ALPHA)
    for j in range(m):
        expected = _equicorrelated_tail(t[j], m)
        if expected > 1e-6:
            assert result.p_adjusted[j] == pytest.approx(expected, abs=result.error + QUAD)
        else:
            assert result.p_adjusted[j] == pytest.approx(expected, rel=0.02)
    q = optimize.brentq(lambda x: _equicorrelated_tail(x, m) - ALPHA, 1.0, 6.0, xtol=1e-12)
    at_q = _equicorrelated_tail(result.critical[0], m)
    assert at_q == pytest.approx(ALPHA, abs=result.error + QUAD)
    assert result.critical[0] == pytest.approx(q, rel=2e-3)


@pytest.mark.parametrize(("k", "nu"), [(3, 4), (5, 0), (5, 20), (10, 3)])
def test_all_pairs_of_equal_variance_means_is_tukey(k: int, nu: int) -> None:
    """All pairs of k independent means with one variance: max|T_ab| = range / sqrt(2 v), so
    P(max|T| ≥ c) = P(studentized range ≥ c √2) (ν = 0: infinite df)."""
    corr = _corr(np.ones(k), pairs=True)
    m = corr.shape[0]
    t = np.linspace(1.0, 5.0, m)
    df = np.full(m, 1e5 if nu == 0 else float(nu))
    result = max_t(t, df, corr, ALPHA)
    dist = stats.studentized_range(k, np.inf if nu == 0 else nu)
    expected = dist.sf(t * math.sqrt(2))
    np.testing.assert_allclose(result.p_adjusted, expected, atol=result.error + 1e-6)
    assert dist.sf(result.critical[0] * math.sqrt(2)) == pytest.approx(
        ALPHA, abs=result.error + 1e-6
    )


# --------------------------------------------------------------------------- promises
def _family(draw_k: int, pairs: bool, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    corr = _corr(rng.uniform(0.3, 3.0, draw_k), pairs)
    m = corr.shape[0]
    return rng.normal(0.0, 3.0, m), rng.uniform(1.0, 60.0, m), corr


@settings(max_examples=12, deadline=None)
@given(
    k=st.integers(min_value=2, max_value=6),
    pairs=st.booleans(),
    seed=st.integers(min_value=0, max_value=2**32 - 1),
    alpha=st.sampled_from([0.01, 0.05, 0.1]),
)
def test_interval_excludes_zero_iff_adjusted_p_below_alpha(
    k: int, pairs: bool, seed: int, alpha: float
) -> None:
    """|t| > q ⇔ p̃ < α ⇔ p < p* (one procedure), and p̃ lies in Bonferroni's bracket."""
    t, df, corr = _family(k, pairs, seed)
    result = max_t(t, df, corr, alpha)
    m = t.size
    marginal = 2 * stats.t.sf(np.abs(t), np.where(result.df_used == 0, 1e9, result.df_used))
    np.testing.assert_array_equal(np.abs(t) > result.critical, result.p_adjusted < alpha)
    np.testing.assert_array_equal(marginal < result.level, result.p_adjusted < alpha)
    assert np.all(result.log10_p_adjusted >= np.log10(marginal) - 1e-12)
    assert np.all(result.p_adjusted <= np.minimum(1.0, m * marginal) * (1 + 1e-12))


def test_adjusted_p_falls_as_t_grows() -> None:
    """p̃(c) = p₁(c) H(c) is non-increasing in c, for t and the normal, through the hand-over
    from the SOV to the union estimator and beyond the grid."""
    dist = simultaneous._max_normal(_corr(np.array([1.0, 0.5, 2.0, 1.5]), pairs=True))
    grid = np.linspace(0.0, 14.0, 1401)
    for nu in (1.0, 2.0, 9.0, 0.0):
        nus = np.full(grid.size, nu)
        log_p = simultaneous._log_p1(grid, nus) + simultaneous._log_ratio(dist, grid, nus)
        assert np.all(np.diff(log_p) <= 1e-12), nu


def test_tiny_p_stay_in_the_bonferroni_bracket() -> None:
    """p far beyond the integration: finite log10, between p and m p."""
    _, df, corr = _family(4, False, 9)
    for nu, t in ((1e5, np.array([10.0, 30.0, 60.0])), (4.0, np.array([1e3, 1e4, 1e100]))):
        result = max_t(t, np.full(3, nu), corr, ALPHA)
        log10_p = simultaneous._log_p1(t, result.df_used) / math.log(10)
        assert np.all(log10_p < -10)
        assert np.all(np.isfinite(result.log10_p_adjusted))
        assert np.all(result.log10_p_adjusted >= log10_p - 1e-9)
        assert np.all(result.log10_p_adjusted <= log10_p + math.log10(3) + 1e-9)
    huge = max_t(np.array([60.0, 1e4, 0.1]), np.full(3, 3.0), corr, ALPHA)
    assert np.all(np.isfinite(huge.log10_p_adjusted)) and huge.log10_p_adjusted[1] < -11


def test_same_bytes_every_time() -> None:
    """Fixed scrambled Sobol points: the same inputs give the same bytes, in this process and
    in a fresh one."""
    code = (
        "import numpy as np, itertools\n"
        "from infrepro.stats.simultaneous import max_t\n"
        "v = np.array([1.0, 0.4, 2.0, 1.3, 0.8])\n"
        "L = np.zeros((10, 5))\n"
        "for r, (a, b) in enumerate(itertools.combinations(range(5), 2)):\n"
        "    L[r, a], L[r, b] = 1, -1\n"
        "c = L @ np.diag(v) @ L.T\n"
        "corr = c / np.sqrt(np.outer(np.diag(c), np.diag(c)))\n"
        "r = max_t(np.linspace(-4, 4, 10), np.linspace(2.5, 30, 10), corr, 0.05)\n"
        "print(r.log10_p_adjusted.tobytes().hex() + r.critical.tobytes().hex())\n"
    )
    first = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    corr = _corr(np.array([1.0, 0.4, 2.0, 1.3, 0.8]), pairs=True)
    here = max_t(np.linspace(-4, 4, 10), np.linspace(2.5, 30, 10), corr, 0.05)
    again = max_t(np.linspace(-4, 4, 10), np.linspace(2.5, 30, 10), corr, 0.05)
    text = here.log10_p_adjusted.tobytes().hex() + here.critical.tobytes().hex()
    assert first.stdout.strip() == text
    assert again.log10_p_adjusted.tobytes() == here.log10_p_adjusted.tobytes()


def test_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="correlation"):
        max_t(np.ones(2), np.ones(2), np.array([[1.0, 0.2], [0.3, 1.0]]), ALPHA)
    with pytest.raises(ValueError, match="alpha"):
        max_t(np.ones(2), np.ones(2), np.eye(2), 1.5)
    with pytest.raises(ValueError, match="finite"):
        max_t(np.array([1.0, np.nan]), np.ones(2), np.eye(2), ALPHA)
    with pytest.raises(ValueError, match="positive"):
        max_t(np.ones(1), np.array([-2.0]), np.eye(1), ALPHA)
