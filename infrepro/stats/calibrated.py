"""A two-system test calibrated over a band of run-variance ratios, its Berger-Boos check, and
moderated run variances (docs/method.md §4b.11, §4b.12).

Two systems A and B with n_A, n_B runs: a run's mean has variance v_k = σ²_run,k + σ²_res/S,
s_k² (f_k df) estimates it and Welch's statistic is T = (x̄_B − x̄_A) / sqrt(s_A²/n_A + s_B²/n_B).
Under H0, with ρ = v_B/v_A, θ = (v_A/n_A)/(v_A/n_A + v_B/n_B) = n_B/(n_B + ρ n_A),
U_k = χ²_{f_k}/f_k and W = θ U_A + (1 − θ) U_B, T = Z/√W exactly, so the p-value at ρ is

    p(ρ) = P_ρ(|T| ≥ |t|) = E[2 Φ̄(|t| √W)].

It is computed as one integral: with G = f_A U_A + f_B U_B ~ χ²_ν (ν = f_A + f_B) and
B = f_A U_A / G ~ Beta(f_A/2, f_B/2) independent of G, W = G h(B) with
h(B) = θ B/f_A + (1 − θ)(1 − B)/f_B, and Z/√(G/ν) ~ t_ν, so

    p(ρ) = E_B[2 F̄_{t,ν}(|t| √(ν h(B)))],

a trapezoid rule in logit(B) on the log integrand (log space: p is carried as log10 p and stays
finite far into the tail). A side with f = ∞ has U = 1 and the integral is over the other
side's chi-square. p is convex in θ (2 Φ̄(c √w) is convex in w, and W is affine in θ), so its
supremum over a band of ρ is at one of the band's two ends, and over all ρ it is Hsu's p
(t with min(f_A, f_B) df, the limits θ → 0, 1).

Moderated variances: limma's ``squeezeVar`` (``squeeze_var``) shrinks each system's s_k²
towards a common s0² with d0 prior df; ``moderated_variances`` caps d0 (limma's moment estimate
is ∞ in about half of the experiments with 1-2 df per system even when the variances differ);
``supported_variances`` never shrinks a variance the prior does not support (above the 80 %
quantile of s0² F(f_k, d0)) below its own; the decision's pair test refers the statistic on the
posterior variances to the band's p with the posterior df.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import optimize, special, stats

DEFAULT_BAND = 2.0  # run-mean SDs within a factor of 2 of each other: ρ in [1/4, 4]
DEFAULT_BETA = 0.001  # Berger-Boos: the run-variance ratio's interval has level 1 − β
DEFAULT_MAX_PRIOR_DF = 4.0  # moderation borrows at most 4 df from the other systems (§4b.12)
DEFAULT_SUPPORT = 0.8  # a variance above this quantile of its prior predictive is not shrunk

_LOG2 = math.log(2.0)
_LN10 = math.log(10.0)
_TAIL = 50.0  # the quadrature's range: where the log integrand is within 50 of its maximum
_REL_TOL = 1e-11  # trapezoid doubling stops when log p changes by less than this
_MAX_NODES = 1 << 17
_POWER_STEP = 0.25  # power: trapezoid step in log U, in SDs of log U at its mode


@dataclass(frozen=True)
class Power:
    """Power of the calibrated test at one design and true difference: two-sided, and
    directional (significant in the true difference's sign, what a verdict counts)."""

    two_sided: float
    directional: float
    critical_t: float


@dataclass(frozen=True)
class Moderated:
    """Moderated variances: the prior df d0 used and scale s0², the posterior variances
    (f s² + d0 s0²)/(f + d0) and their df min(f + d0, Σ f) (eBayes' cap)."""

    d0: float
    s0_squared: float
    var_post: np.ndarray
    df_post: np.ndarray


# ------------------------------------------------------------------------------ tails


def _log_t_sf(x: np.ndarray, nu: float) -> np.ndarray:
    """log P(t_ν ≥ x) for x ≥ 0 and finite ν > 0, also where the value underflows a double:
    P = I_z(ν/2, 1/2)/2 with z = ν/(ν + x²), and below 1e-280 the series
    I_z(a, b) = z^a (1 − z)^b ₂F₁(a + b, 1; a + 1; z) / (a B(a, b)) in logs."""
    x = np.asarray(x, dtype=float)
    a = nu / 2.0
    log_nu = math.log(nu)
    with np.errstate(divide="ignore"):
        log_x2 = 2.0 * np.log(x)
    log_den = np.logaddexp(log_nu, log_x2)
    log_z, log_1mz = log_nu - log_den, log_x2 - log_den
    z = np.exp(log_z)
    value = special.betainc(a, 0.5, z)
    with np.errstate(divide="ignore"):
        out = np.log(value) - _LOG2
    small = value < 1e-280
    if np.any(small):
        zs = z[small]
        out[small] = (
            a * log_z[small]
            + 0.5 * log_1mz[small]
            - math.log(a)
            - special.betaln(a, 0.5)
            + np.log(special.hyp2f1(a + 0.5, 1.0, a + 1.0, zs))
            - _LOG2
        )
    return out


def _log_two_sided(x: np.ndarray, f: float) -> np.ndarray:
    """log P(|t_f| ≥ x) (x ≥ 0); f = ∞ is the normal."""
    x = np.abs(np.asarray(x, dtype=float))
    if math.isinf(f):
        return _LOG2 + special.log_ndtr(-x)
    return np.minimum(_LOG2 + _log_t_sf(x, f), 0.0)


# ------------------------------------------------------------------------------ quadrature


def _solve_drop(d: Callable[[float], float], mode: float, drop: float, step: float) -> float:
    """The point beyond ``mode`` (in the direction of sign(step)) where the concave d falls
    ``drop`` below d(mode)."""
    target = d(mode) - drop
    near, far = mode, mode + step
    while d(far) > target:
        near, far = far, far + 2.0 * (far - mode)
    return optimize.brentq(lambda y: d(y) - target, min(near, far), max(near, far), xtol=1e-9)


def _logsumexp(values: np.ndarray) -> float:
    """log Σ exp(v) for finite-topped v (scipy's ``logsumexp`` validates and promotes its
    input; on the quadrature's few hundred nodes that costs more than the sum)."""
    top = float(values.max())
    if not math.isfinite(top):
        return top
    return top + math.log(float(np.exp(values - top).sum()))


def _log_trapezoid(
    log_integrand: Callable[[np.ndarray], np.ndarray], lo: float, hi: float, step: float
) -> float:
    """log ∫_lo^hi exp(g(y)) dy by the trapezoid rule, halving the step until log of the
    integral moves by less than _REL_TOL (the integrand is smooth and negligible at both
    ends, where the rule converges geometrically)."""
    n = max(64, 1 << math.ceil(math.log2(max((hi - lo) / step, 1.0))))
    values = log_integrand(np.linspace(lo, hi, n + 1))
    h = (hi - lo) / n
    current = _logsumexp(values) + math.log(h)
    while n < _MAX_NODES:
        # the midpoints of the current grid: with them, the grid of step h/2 (node order does
        # not matter to the sum)
        new = log_integrand(lo + (np.arange(n) + 0.5) * h)
        values = np.concatenate([values, new])
        n, h = 2 * n, h / 2.0
        refined = _logsumexp(values) + math.log(h)
        if abs(refined - current) < _REL_TOL:
            return float(refined)
        current = refined
    return float(current)


def _softplus(x: float) -> float:
    """log(1 + e^x) for a scalar, as ``np.logaddexp(0, x)`` computes it."""
    if x == 0.0:
        return _LOG2
    return math.log1p(math.exp(x)) if x < 0.0 else x + math.log1p(math.exp(-x))


def _log_p_beta(t: float, theta: float, f_a: float, f_b: float) -> float:
    """log p at 0 < θ < 1 with both df finite: E_B[2 F̄_{t,ν}(t √(ν h(B)))] over
    y = logit(B), B ~ Beta(f_A/2, f_B/2)."""
    a, b, nu = f_a / 2.0, f_b / 2.0, f_a + f_b
    log_norm = special.betaln(a, b)
    log_wa, log_wb = math.log(theta) - math.log(f_a), math.log1p(-theta) - math.log(f_b)

    def log_density(y: np.ndarray | float) -> np.ndarray:
        return -a * np.logaddexp(0.0, -y) - b * np.logaddexp(0.0, y) - log_norm

    def log_factor(y: np.ndarray | float) -> np.ndarray:
        log_h = np.logaddexp(log_wa - np.logaddexp(0.0, -y), log_wb - np.logaddexp(0.0, y))
        return _log_two_sided(t * np.sqrt(nu * np.exp(log_h)), nu)

    mode = math.log(a / b)
    ends = _log_two_sided(t * np.sqrt(nu * np.exp(np.array([log_wb, log_wa]))), nu)
    excess = float(max(ends.max() - log_factor(np.array([mode]))[0], 0.0))
    width = math.sqrt(1.0 / a + 1.0 / b)

    def d(y: float) -> float:  # log_density at a scalar, in math (the root search's calls)
        return -a * _softplus(-y) - b * _softplus(y) - log_norm

    lo = _solve_drop(d, mode, _TAIL + excess, -width)
    hi = _solve_drop(d, mode, _TAIL + excess, width)
    step = 0.2 * min(width, math.sqrt(8.0 / nu))
    return _log_trapezoid(lambda y: log_density(y) + log_factor(y), lo, hi, step)


def _log_p_one_known(t: float, weight: float, f: float) -> float:
    """log p when the other side's variance is known (f = ∞, U = 1): E[2 Φ̄(t √(w U + 1 − w))]
    over x = log U, U = χ²_f/f, w the estimated side's share θ or 1 − θ."""
    half = f / 2.0
    log_norm = special.gammaln(half) - half * math.log(half)

    def log_density(x: np.ndarray | float) -> np.ndarray:
        return half * x - half * np.exp(x) - log_norm

    def log_factor(x: np.ndarray | float) -> np.ndarray:
        return _LOG2 + special.log_ndtr(-t * np.sqrt(weight * np.exp(x) + 1.0 - weight))

    start = float(_LOG2 + special.log_ndtr(-t * math.sqrt(1.0 - weight)))
    excess = max(start - float(log_factor(np.array([0.0]))[0]), 0.0)
    width = math.sqrt(1.0 / half)

    def d(x: float) -> float:
        return float(log_density(np.array([x]))[0])

    lo = _solve_drop(d, 0.0, _TAIL + excess, -width)
    hi = _solve_drop(d, 0.0, _TAIL, width)
    return _log_trapezoid(lambda x: log_density(x) + log_factor(x), lo, hi, 0.2 * width)


def _log_p_theta(t: float, theta: float, f_a: float, f_b: float) -> float:
    """log p(θ) = log P(|Z/√W| ≥ |t|), W = θ U_A + (1 − θ) U_B, for 0 ≤ θ ≤ 1."""
    t = abs(float(t))
    if t == 0.0:
        return 0.0
    if theta >= 1.0 or (math.isinf(f_b) and math.isinf(f_a)):
        return float(_log_two_sided(np.array([t]), f_a if theta >= 1.0 else math.inf)[0])
    if theta <= 0.0:
        return float(_log_two_sided(np.array([t]), f_b)[0])
    if math.isinf(f_b):
        return _log_p_one_known(t, theta, f_a)
    if math.isinf(f_a):
        return _log_p_one_known(t, 1.0 - theta, f_b)
    return _log_p_beta(t, theta, f_a, f_b)


# ------------------------------------------------------------------------------ public API


def _dfs(n_a: int, n_b: int, f_a: float | None, f_b: float | None) -> tuple[float, float]:
    """The df of the two variance estimates: n − 1 unless given (moderated, possibly ∞)."""
    out = []
    for n, f in ((n_a, f_a), (n_b, f_b)):
        value = float(n - 1 if f is None else f)
        if not value > 0.0:
            raise ValueError(f"a variance estimate needs df > 0 (runs {n}, df {f})")
        out.append(value)
    return out[0], out[1]


def _theta(ratio: float, n_a: int, n_b: int) -> float:
    """θ = (v_A/n_A)/(v_A/n_A + v_B/n_B) at ρ = v_B/v_A (ρ = 0: 1, ρ = ∞: 0)."""
    if math.isinf(ratio):
        return 0.0
    return n_b / (n_b + ratio * n_a)


def log10_tail(
    t: float,
    n_a: int,
    n_b: int,
    ratios: np.ndarray | list[float] | float,
    f_a: float | None = None,
    f_b: float | None = None,
) -> np.ndarray:
    """log10 p(ρ) = log10 P_ρ(|T| ≥ |t|) at each run-mean variance ratio ρ = v_B/v_A
    (f_k defaults to n_k − 1; f = ∞ means a known variance)."""
    fa, fb = _dfs(n_a, n_b, f_a, f_b)
    if not math.isfinite(t):
        raise ValueError(f"t must be finite (got {t})")
    rho = np.atleast_1d(np.asarray(ratios, dtype=float))
    if np.any(rho < 0.0) or np.any(np.isnan(rho)):
        raise ValueError("run-variance ratios must be ≥ 0")
    out = [_log_p_theta(t, _theta(r, n_a, n_b), fa, fb) / _LN10 for r in rho]
    return np.array(out)


def _band_ratios(band: float) -> tuple[float, float]:
    if not band >= 1.0:
        raise ValueError(f"the band is a ratio of run-mean SDs, ≥ 1 (got {band})")
    return 1.0 / band**2, band**2


@lru_cache(maxsize=1024)  # a pair's calibrated test, then its Berger-Boos p, ask for the same
def band_log10_p(
    t: float,
    n_a: int,
    n_b: int,
    band: float = DEFAULT_BAND,
    f_a: float | None = None,
    f_b: float | None = None,
) -> float:
    """log10 p_sup, the largest p(ρ) over ρ in [1/band², band²] (band: the largest ratio of the
    two run-mean SDs the test is calibrated for; ∞ gives Hsu's test). p is convex in θ, so the
    supremum is at an end of the band (docs/method.md §4b.11). With n_A = n_B and f_A = f_B
    the ends are θ and 1 − θ, and p(θ) = p(1 − θ) (U_A and U_B alike): one end serves (every
    pair of a balanced many-system decision)."""
    fa, fb = _dfs(n_a, n_b, f_a, f_b)
    ends = _band_ratios(band)
    if n_a == n_b and fa == fb:
        ends = ends[1:]
    return float(log10_tail(t, n_a, n_b, ends, fa, fb).max())


@lru_cache(maxsize=4096)
def _critical_t(level: float, n_a: int, n_b: int, band: float, f_a: float, f_b: float) -> float:
    target = math.log10(level)

    def gap(c: float) -> float:
        return band_log10_p(c, n_a, n_b, band, f_a, f_b) - target

    upper = float(
        stats.norm.isf(level / 2.0)
        if math.isinf(min(f_a, f_b))
        else stats.t.isf(level / 2.0, min(f_a, f_b))
    )  # Hsu's critical value bounds every band's
    upper = max(upper, 1e-3) * (1.0 + 1e-9)
    while gap(upper) > 0.0:
        upper *= 2.0
    return float(optimize.brentq(gap, 0.0, upper, xtol=1e-13, rtol=1e-13))


def critical_t_floor(level: float, f_a: float, f_b: float) -> float:
    """A lower bound of ``critical_t`` at any band, in closed form: the |t| with f_A + f_B df
    (the normal's when one is ∞) at ``level``. W is a mean-preserving spread of G/ν
    (E[W | G] = G/ν) and 2 Φ̄(c √w) is convex in w, so p(ρ) ≥ P(|t_ν| ≥ c) at every ρ. Equal
    at band 1 with f_A = f_B; lowered by 1e-9 (relative) to stay below the root search's
    value there."""
    return _critical_t_floor(float(level), float(f_a) + float(f_b))


@lru_cache(maxsize=4096)
def _critical_t_floor(level: float, nu: float) -> float:
    exact = stats.norm.isf(level / 2.0) if math.isinf(nu) else stats.t.isf(level / 2.0, nu)
    return float(exact) * (1.0 - 1e-9)


def critical_t(
    level: float,
    n_a: int,
    n_b: int,
    band: float = DEFAULT_BAND,
    f_a: float | None = None,
    f_b: float | None = None,
) -> float:
    """The |t| at which p_sup equals ``level``: the calibrated test rejects when |T| > it, and
    Δ̂ ± critical_t · SE is the interval that agrees with the test at that level."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1) (got {level})")
    fa, fb = _dfs(n_a, n_b, f_a, f_b)
    _band_ratios(band)
    # the test is symmetric in A and B (the band [1/b², b²] is closed under ρ → 1/ρ, which
    # swaps θ and 1 − θ): one root search serves (n_A, n_B) and (n_B, n_A)
    (n_a, fa), (n_b, fb) = sorted([(int(n_a), fa), (int(n_b), fb)])
    return _critical_t(float(level), n_a, n_b, float(band), fa, fb)


def ratio_interval(
    s2_a: float, f_a: float, s2_b: float, f_b: float, beta: float
) -> tuple[float, float]:
    """The (1 − β) interval for ρ = v_B/v_A from (s_B²/s_A²)/ρ ~ F(f_B, f_A):
    [R / F_{1−β/2}, R / F_{β/2}], R = s_B²/s_A² (a side with f = ∞ has its variance known)."""
    if s2_a < 0.0 or s2_b < 0.0 or not 0.0 < beta < 1.0:
        raise ValueError("variances must be ≥ 0 and β in (0, 1)")
    if s2_a == 0.0 and s2_b == 0.0:
        return 0.0, math.inf
    ratio = math.inf if s2_a == 0.0 else s2_b / s2_a
    upper, lower = (_f_quantile(q, float(f_a), float(f_b)) for q in (1.0 - beta / 2.0, beta / 2.0))
    with np.errstate(divide="ignore"):
        return ratio / upper, ratio / lower


@lru_cache(maxsize=4096)
def _f_quantile(q: float, f_a: float, f_b: float) -> float:
    """The q quantile of F(f_B, f_A) (a chi-square's where one df is ∞): the same few df
    serve every pair of a many-system decision."""
    if math.isinf(f_a) and math.isinf(f_b):
        return 1.0
    if math.isinf(f_a):
        return float(stats.chi2.ppf(q, f_b) / f_b)
    if math.isinf(f_b):
        return float(f_a / stats.chi2.isf(q, f_a))
    return float(stats.f.ppf(q, f_b, f_a))


def berger_boos_log10_p(
    t: float,
    n_a: int,
    n_b: int,
    s2_a: float,
    s2_b: float,
    band: float = DEFAULT_BAND,
    beta: float = DEFAULT_BETA,
    f_a: float | None = None,
    f_b: float | None = None,
) -> float:
    """log10 of a p-value valid at every ρ and every level (Berger & Boos 1994, adapted;
    docs/method.md §4b.11). C: the (1 − β) interval for ρ, B: the band.

    - C ⊂ B: p = p_sup over B when that is ≥ β, else min(p_Hsu, β);
    - otherwise p = min(1, β + sup over C ∪ B of p(ρ)).
    """
    fa, fb = _dfs(n_a, n_b, f_a, f_b)
    lo_b, hi_b = _band_ratios(band)
    lo_c, hi_c = ratio_interval(s2_a, fa, s2_b, fb, beta)
    log_band = band_log10_p(t, n_a, n_b, band, fa, fb)
    log_beta = math.log10(beta)
    if lo_b <= lo_c and hi_c <= hi_b:
        if log_band >= log_beta:
            return log_band
        return min(band_log10_p(t, n_a, n_b, math.inf, fa, fb), log_beta)
    log_c = float(log10_tail(t, n_a, n_b, [lo_c, hi_c], fa, fb).max())
    return min(0.0, math.log10(beta + 10.0 ** max(log_c, log_band)))


@lru_cache(maxsize=256)
def _chi2_nodes(f: float) -> tuple[np.ndarray, np.ndarray]:
    """Nodes U and weights of the trapezoid rule in x = log U, U = χ²_f/f, over the range where
    the density of x is within e^-40 of its maximum (U = 1 for f = ∞). In log U the integrand
    of power is smooth, and the rule converges geometrically (quantile nodes do not: W has a
    square-root corner where both chi-squares are near 0)."""
    if math.isinf(f):
        return np.ones(1), np.ones(1)
    half = f / 2.0
    log_norm = special.gammaln(half) - half * math.log(half)

    def log_density(x: float | np.ndarray) -> np.ndarray:
        return half * x - half * np.exp(x) - log_norm

    def d(x: float) -> float:
        return float(log_density(np.array([x]))[0])

    width = math.sqrt(1.0 / half)
    lo, hi = _solve_drop(d, 0.0, 40.0, -width), _solve_drop(d, 0.0, 40.0, width)
    x = np.linspace(lo, hi, math.ceil((hi - lo) / (_POWER_STEP * width)) + 1)
    return np.exp(x), np.exp(log_density(x)) * (x[1] - x[0])


def power(
    delta: float,
    v_a: float,
    v_b: float,
    n_a: int,
    n_b: int,
    level: float,
    band: float = DEFAULT_BAND,
    f_a: float | None = None,
    f_b: float | None = None,
    critical: float | None = None,
    two_sided: bool = True,
) -> Power:
    """Power of the calibrated test (|T| > critical_t) at the true difference δ = μ_B − μ_A and
    run-mean variances v_A, v_B: with λ = δ/√(v_A/n_A + v_B/n_B) and W as in the module's
    docstring, P(|T| > c) = E[Φ̄(c√W − λ) + Φ̄(c√W + λ)] and the directional power
    E[Φ̄(c√W − |λ|)], by the trapezoid rule over the logs of the two chi-squares. With
    ``critical``, the power of |T| > critical instead (decreasing in it, term by term: a lower
    bound of the critical value gives an upper bound of the power). ``two_sided=False``: the
    directional power only (``two_sided`` NaN), half the work."""
    if v_a < 0.0 or v_b < 0.0 or v_a + v_b == 0.0:
        raise ValueError("run-mean variances must be ≥ 0, not both 0")
    fa, fb = _dfs(n_a, n_b, f_a, f_b)
    c = critical_t(level, n_a, n_b, band, fa, fb) if critical is None else float(critical)
    var = v_a / n_a + v_b / n_b
    theta, lam = (v_a / n_a) / var, abs(delta) / math.sqrt(var)
    u_a, u_b, weights = _chi2_grid(fa, fb)
    root = np.sqrt(theta * u_a + (1.0 - theta) * u_b)
    up = float((weights * special.ndtr(lam - c * root)).sum())
    if not two_sided:
        return Power(two_sided=math.nan, directional=up, critical_t=c)
    down = float((weights * special.ndtr(-lam - c * root)).sum())
    return Power(two_sided=up + down, directional=up, critical_t=c)


@lru_cache(maxsize=256)
def _chi2_grid(f_a: float, f_b: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The product trapezoid grid of (U_A, U_B) and its weights (``_chi2_nodes``, one per side),
    broadcast for ``power``: the planning search evaluates thousands of designs per pair."""
    (u_a, w_a), (u_b, w_b) = _chi2_nodes(f_a), _chi2_nodes(f_b)
    return u_a[:, None], u_b[None, :], np.outer(w_a, w_b)


# ------------------------------------------------------------------------------ moderation


def _trigamma_inverse(x: float) -> float:
    """limma's ``trigammaInverse``: y with ψ'(y) = x (Newton from 0.5 + 1/x, as limma)."""
    if x > 1e7:
        return 1.0 / math.sqrt(x)
    if x < 1e-6:
        return 1.0 / x
    y = 0.5 + 1.0 / x
    for _ in range(50):
        tri = float(special.polygamma(1, y))
        dif = tri * (1.0 - tri / x) / float(special.polygamma(2, y))
        y += dif
        if -dif / y < 1e-8:
            break
    return y


def _fit_f_dist(x: np.ndarray, df: np.ndarray) -> tuple[float, float]:
    """limma's ``fitFDist`` without a covariate: the scale s0² and df d0 of the scaled F
    distribution of the variances, by moments of log variances (Smyth 2004, eq. 5-6)."""
    ok = np.isfinite(df) & (df > 1e-15) & np.isfinite(x) & (x > -1e-15)
    if ok.sum() == 0:
        return math.nan, math.nan
    if ok.sum() == 1:
        return float(x[ok][0]), 0.0
    x, df = np.maximum(x[ok], 0.0), df[ok]
    m = float(np.median(x))
    if m == 0.0:
        m = 1.0  # limma warns: more than half of the variances are exactly zero
    x = np.maximum(x, 1e-5 * m)
    e = np.log(x) - special.digamma(df / 2.0) + np.log(df / 2.0)
    emean = float(e.mean())
    evar = float(((e - emean) ** 2).sum() / (len(e) - 1)) - float(
        special.polygamma(1, df / 2.0).mean()
    )
    if evar > 0.0:
        d0 = 2.0 * _trigamma_inverse(evar)
        return float(math.exp(emean + special.digamma(d0 / 2.0) - math.log(d0 / 2.0))), d0
    return float(x.mean()), math.inf


def _posterior(v: np.ndarray, f: np.ndarray, s0: float, d0: float) -> Moderated:
    """limma's ``.squeezeVar`` for a prior (d0, s0²), with eBayes' df cap."""
    post = np.full_like(v, s0) if math.isinf(d0) else (f * v + d0 * s0) / (f + d0)
    return Moderated(d0, s0, post, np.minimum(f + d0, f.sum()))


def _prepared(
    var: np.ndarray | list[float], df: np.ndarray | list[float] | float
) -> tuple[np.ndarray, np.ndarray]:
    v = np.asarray(var, dtype=float).copy()
    f = np.broadcast_to(np.asarray(df, dtype=float), v.shape).copy()
    if v.size == 0:
        raise ValueError("no variances to moderate")
    return v, f


def squeeze_var(var: np.ndarray | list[float], df: np.ndarray | list[float] | float) -> Moderated:
    """Empirical-Bayes moderated variances, a port of limma's ``squeezeVar`` (no covariate,
    ``robust = FALSE``; Smyth 2004): s_k² ~ s0² F(f_k, d0) fitted by moments of log s_k²,
    posterior ṽ_k = (f_k s_k² + d0 s0²)/(f_k + d0) (s0² when d0 = ∞) with df
    min(f_k + d0, Σ f) (limma's ``eBayes`` cap)."""
    v, f = _prepared(var, df)
    if v.size == 1:
        return Moderated(0.0, float(v[0]), v, f)
    v[f == 0.0] = 0.0
    s0, d0 = _fit_f_dist(v, f)
    if math.isnan(d0):
        raise ValueError("could not estimate the prior df")
    return _posterior(v, f, s0, d0)


def moderated_variances(
    var: np.ndarray | list[float],
    df: np.ndarray | list[float] | float,
    max_prior_df: float = DEFAULT_MAX_PRIOR_DF,
) -> Moderated:
    """The run-mean variances the moderated Welch test uses (docs/method.md §4b.12): limma's
    fit (``squeeze_var``), with the prior df capped, d0 = min(d0_fitted, max_prior_df), and
    limma's s0². With a few df per system d0_fitted is ∞ in about half of the experiments even
    when the systems' variances differ (prior df 4), and a large d0 replaces each system's
    variance by the common one."""
    v, f = _prepared(var, df)
    fitted = squeeze_var(v, f)
    if v.size == 1:
        return fitted
    v[f == 0.0] = 0.0
    d0 = min(fitted.d0, float(max_prior_df))
    return _posterior(v, f, fitted.s0_squared, d0)


def beyond_prior(
    var: np.ndarray | list[float],
    df: np.ndarray | list[float] | float,
    prior: Moderated,
    quantile: float = DEFAULT_SUPPORT,
) -> np.ndarray:
    """Which variances the prior (d0, s0²) does not support: s_k²/s0² above the ``quantile`` of
    F(f_k, d0), its distribution under the prior (χ²_f/f when d0 = ∞; no df: never)."""
    v, f = _prepared(var, df)
    if prior.d0 <= 0.0 or not prior.s0_squared > 0.0:
        return np.zeros(v.shape, dtype=bool)
    safe = np.maximum(f, 1e-300)
    if math.isinf(prior.d0):
        upper = stats.chi2.ppf(quantile, safe) / safe
    else:
        upper = stats.f.ppf(quantile, safe, prior.d0)
    return (f > 0.0) & (v > prior.s0_squared * upper)


def supported_variances(
    var: np.ndarray | list[float],
    df: np.ndarray | list[float] | float,
    max_prior_df: float = DEFAULT_MAX_PRIOR_DF,
    quantile: float = DEFAULT_SUPPORT,
) -> tuple[Moderated, np.ndarray]:
    """``moderated_variances`` with each variance the prior does not support (``beyond_prior``)
    kept from shrinking below its own: ṽ_k = max(ṽ_k, s_k²), df unchanged (docs/method.md
    §4b.12); and which ones those are."""
    v, f = _prepared(var, df)
    moderated = moderated_variances(v, f, max_prior_df)
    if v.size == 1:
        return moderated, np.zeros(1, dtype=bool)
    kept = beyond_prior(v, f, moderated, quantile)
    post = np.where(kept, np.maximum(moderated.var_post, v), moderated.var_post)
    return Moderated(moderated.d0, moderated.s0_squared, post, moderated.df_post), kept
