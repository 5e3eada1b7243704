"""Group-sequential boundaries for looks at accruing runs (docs/method.md §4e.2-§4e.6).

Efficacy boundaries from a Lan-DeMets spending function (O'Brien-Fleming or Pocock type, as
rpact's ``asOF`` / ``asP``), computed by recursive numerical integration (Armitage, McPherson &
Rowe 1969; Jennison & Turnbull 2000, ch. 19) at the information fractions actually observed;
repeated p-values, conditional power at the minimum effect and the runs still needed. Pure
functions on numbers.

Scales. Z_k is the look's statistic on the normal scale, S(t) = Z(t) √t the score process: a
Brownian motion with drift η in the information fraction t (E Z(t) = η √t), so η is the expected
z statistic at the planned maximum (t = 1).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import optimize, special, stats

from infrepro.core.decisions import MAX_MORE_RUNS

Spending = Literal["obrien_fleming", "pocock", "none"]
SPENDINGS: tuple[Spending, ...] = ("obrien_fleming", "pocock", "none")
GRID_R = 32  # Jennison & Turnbull's grid parameter: 6r − 1 points, 12r − 3 Simpson nodes per look
MAX_EXTRA_RUNS = MAX_MORE_RUNS  # ``runs_for_power`` looks no further
# κ (§4e.5): the z boundaries of a plan with several looks are computed at κ α; measured with
# Welch's t as the look test (benchmarks/sequential.py) and with the decision's band-calibrated
# test (benchmarks/sequential_kappa.py)
LOOK_ALPHA_FACTOR = 0.85
BAND_LOOK_ALPHA_FACTOR = 0.80
_BOUND_MAX = 40.0  # z beyond which no boundary is searched (Φ̄(40) ≈ 4e-350)
_SQRT_2PI = math.sqrt(2.0 * math.pi)


# -- spending functions (rpact's asOF, asP, noEarlyEfficacy) ------------------------------------
def alpha_spent(t: float | np.ndarray, alpha: float, spending: Spending, sided: int) -> np.ndarray:
    """Cumulative α spent at information fraction(s) t (clipped to [0, 1]), as rpact defines it.

    O'Brien-Fleming type: α(t) = 2 s Φ̄(Φ̄⁻¹(α / (2 s)) / √t) with s the number of sides (one
    side spends 2 Φ̄(z_{α/2}/√t), two sides twice the one-sided α/2 each); Pocock type:
    α(t) = α log(1 + (e − 1) t); none: α only at t = 1 (no early efficacy stop). Each is 0 at
    t = 0 and α at t = 1.
    """
    t = np.clip(np.asarray(t, dtype=float), 0.0, 1.0)
    if spending == "obrien_fleming":
        with np.errstate(divide="ignore"):
            q = stats.norm.isf(alpha / (2 * sided)) / np.sqrt(t)
        return 2.0 * sided * stats.norm.sf(q)
    if spending == "pocock":
        return alpha * np.log1p((math.e - 1.0) * t)
    if spending == "none":
        return np.where(t >= 1.0, alpha, 0.0)
    raise ValueError(f"unknown spending function {spending!r}; one of {SPENDINGS}")


def information_fraction(n_a: float, n_b: float, max_a: float, max_b: float) -> float:
    """Information fraction of a look from run counts (§4e.3):
    t = [1 / (1/n_A + 1/n_B)] / [1 / (1/N_A + 1/N_B)], N the planned maxima. Exact when the two
    systems' run means have equal variances or the allocation is balanced (t = n/N)."""
    return (1.0 / (1.0 / n_a + 1.0 / n_b)) / (1.0 / (1.0 / max_a + 1.0 / max_b))


# -- the recursion (Jennison & Turnbull 2000, ch. 19) --------------------------------------------
def _grid(lo: float, hi: float, center: float, scale: float, r: int) -> tuple[np.ndarray, ...]:
    """Simpson nodes and weights on [lo, hi] ∩ the J&T grid around ``center`` (spread ``scale``).

    J&T §19.2.1: x_i = c + s·{−3 − 4 log(r/i)} (i < r), c + s·{−3 + 3(i − r)/(2r)} (r ≤ i ≤ 5r),
    c + s·{3 + 4 log(r/(6r − i))} (i > 5r), i = 1 ... 6r − 1; points outside (lo, hi) are
    replaced by the bounds; midpoints added, Simpson weights (d_{j−1} + d_j)/6 at the points and
    4 d_j / 6 at the midpoints."""
    i = np.arange(1, 6 * r, dtype=float)
    core = -3.0 + 3.0 * (i - r) / (2.0 * r)
    left = -3.0 - 4.0 * np.log(r / np.minimum(i, r))
    right = 3.0 + 4.0 * np.log(r / np.maximum(6 * r - i, 1.0))
    x = center + scale * np.where(i < r, left, np.where(i <= 5 * r, core, right))
    if hi <= lo:
        return np.empty(0), np.empty(0)
    inside = x[(x > lo) & (x < hi)]
    if lo > x[0]:
        inside = np.concatenate([[lo], inside])
    if hi < x[-1]:
        inside = np.concatenate([inside, [hi]])
    if inside.size < 2:
        inside = np.array([max(lo, x[0]), min(hi, x[-1])])
    d = np.diff(inside)
    nodes = np.empty(2 * inside.size - 1)
    nodes[0::2] = inside
    nodes[1::2] = inside[:-1] + d / 2.0
    weights = np.empty_like(nodes)
    weights[0::2] = (np.concatenate([[0.0], d]) + np.concatenate([d, [0.0]])) / 6.0
    weights[1::2] = 4.0 * d / 6.0
    return nodes, weights


@dataclass(frozen=True)
class _State:
    """The sub-density of the paths still running after a look: score values s = z √t and
    weights h (Simpson weight × density), Σ h = probability of having continued."""

    t: float
    s: np.ndarray
    h: np.ndarray


def _start(t0: float = 0.0, z0: float = 0.0) -> _State:
    return _State(t0, np.array([z0 * math.sqrt(t0)]), np.array([1.0]))


def _tails(state: _State, t: float, drift: float, z: float) -> tuple[float, float]:
    """P(Z(t) ≥ z, continued so far) and P(Z(t) ≤ z, continued so far)."""
    dt = t - state.t
    if dt <= 0:
        raise ValueError("information fractions must increase from look to look")
    arg = (z * math.sqrt(t) - state.s - drift * dt) / math.sqrt(dt)
    return float(state.h @ special.ndtr(-arg)), float(state.h @ special.ndtr(arg))


def _advance(
    state: _State,
    t: float,
    drift: float,
    regions: Sequence[tuple[float, float]],
    origin: _State,
    r: int,
) -> _State:
    """The sub-density at fraction t on the continuation ``regions`` (z intervals):
    f_Z(z) = √t Σ_j h_j φ((z √t − s_j − η Δ)/√Δ) / √Δ, Δ = t − t_prev, on a grid centred at the
    mean of Z(t) given the origin of the recursion (spread its SD)."""
    dt = t - state.t
    span = t - origin.t
    center = (origin.s[0] + drift * span) / math.sqrt(t)
    scale = math.sqrt(span / t)
    nodes, weights = [], []
    for lo, hi in regions:
        z, w = _grid(lo, hi, center, scale, r)
        nodes.append(z)
        weights.append(w)
    z = np.concatenate(nodes)
    w = np.concatenate(weights)
    if z.size == 0:
        return _State(t, np.empty(0), np.empty(0))
    arg = (z[:, None] * math.sqrt(t) - state.s[None, :] - drift * dt) / math.sqrt(dt)
    density = math.sqrt(t / dt) * (np.exp(-0.5 * arg**2) @ state.h) / _SQRT_2PI
    return _State(t, z * math.sqrt(t), w * density)


def _regions(lower: float, upper: float, inner: float) -> list[tuple[float, float]]:
    """Continuation region lower < Z < upper, less |Z| < inner (two-sided futility)."""
    if inner > 0 and lower < -inner and inner < upper:
        return [(lower, -inner), (inner, upper)]
    if inner > 0 and lower >= -inner:
        return [(max(lower, inner), upper)]
    return [(lower, upper)]


@dataclass(frozen=True)
class Crossings:
    """Per look, the probability of stopping there: above the upper boundary, below the lower
    one, in the inner (two-sided futility) band; ``continued`` after the last look."""

    upper: np.ndarray
    lower: np.ndarray
    inner: np.ndarray
    continued: float


def crossing_probabilities(
    fractions: Sequence[float],
    upper: Sequence[float],
    lower: Sequence[float],
    drift: float,
    inner: Sequence[float] | None = None,
    start: tuple[float, float] | None = None,
    r: int = GRID_R,
) -> Crossings:
    """P(first exit at look k through the upper / lower boundary / inner band) for Z(t_k) with
    E Z(t) = η √t, Corr(Z(t_j), Z(t_k)) = √(t_j / t_k) (Armitage, McPherson & Rowe 1969).

    ``upper``/``lower`` may be ±inf (no boundary); ``inner`` f_k > 0 stops when |Z_k| < f_k;
    ``start`` = (t_0, z_0) conditions on Z(t_0) = z_0 (conditional power), else the recursion
    starts at S(0) = 0."""
    origin = _start(*start) if start else _start()
    state = origin
    k = len(fractions)
    inner = np.zeros(k) if inner is None else np.asarray(inner, dtype=float)
    p_up, p_low, p_in = np.zeros(k), np.zeros(k), np.zeros(k)
    for j, t in enumerate(fractions):
        hi, lo, f = float(upper[j]), float(lower[j]), float(inner[j])
        p_up[j] = _tails(state, t, drift, hi)[0] if math.isfinite(hi) else 0.0
        p_low[j] = _tails(state, t, drift, lo)[1] if math.isfinite(lo) else 0.0
        if f > 0:
            a, b = max(-f, lo), min(f, hi)
            p_in[j] = max(_tails(state, t, drift, a)[0] - _tails(state, t, drift, b)[0], 0.0)
        if j < k - 1:
            state = _advance(state, t, drift, _regions(lo, hi, f), origin, r)
    continued = float(state.h.sum()) - p_up[-1] - p_low[-1] - p_in[-1]
    return Crossings(p_up, p_low, p_in, max(continued, 0.0))


# -- efficacy boundaries by error spending ------------------------------------------------------
@dataclass(frozen=True)
class Boundaries:
    """Efficacy boundaries of a group-sequential test at the given information fractions.

    ``critical`` c_k on the z scale (inf where a look spends nothing), ``alpha_cumulative`` the α
    spent up to each look, ``nominal`` the marginal level at which look k rejects: s Φ̄(c_k)
    (s = sides), the significance-level approach's level for the look's own test."""

    fractions: np.ndarray
    critical: np.ndarray
    alpha_cumulative: np.ndarray
    nominal: np.ndarray
    alpha: float
    spending: Spending
    sided: int
    final: bool


def efficacy_boundaries(
    fractions: Sequence[float],
    alpha: float,
    spending: Spending,
    sided: int,
    final: bool,
    r: int = GRID_R,
) -> Boundaries:
    """Error-spending boundaries (Lan & DeMets 1983) at increasing information fractions.

    Look k spends α(t_k) − α(t_{k−1}) given the boundaries already used: c_k solves
    P_0(continue to k, |Z_k| ≥ c_k) = α(t_k) − α(t_{k−1}) (one-sided: Z_k ≥ c_k). The last look
    spends what is left, α − α(t_{K−1}), when it is ``final`` or reaches t ≥ 1 (a plan stopped
    early, or overrun: the correlations use the observed fractions, only α(t) is capped at t = 1).
    Futility is non-binding: it never enters these boundaries."""
    t = np.asarray(fractions, dtype=float)
    if t.ndim != 1 or t.size == 0 or np.any(t <= 0) or np.any(np.diff(t) <= 0):
        raise ValueError(f"information fractions must be positive and increasing: {t}")
    if np.any(t[:-1] >= 1.0):
        raise ValueError("only the last look may reach the planned maximum (t ≥ 1)")
    if sided not in (1, 2):
        raise ValueError("sided must be 1 or 2")
    final = bool(final or t[-1] >= 1.0)
    cumulative = alpha_spent(t, alpha, spending, sided)
    if final:
        cumulative[-1] = alpha
    cumulative = np.maximum.accumulate(cumulative)
    critical = np.empty(t.size)
    state = _start()
    origin = state
    spent = 0.0
    for k, tk in enumerate(t):
        target = cumulative[k] - spent
        critical[k] = solve_boundary(state, tk, target, sided)
        lo = -critical[k] if sided == 2 else -np.inf
        hit = _tails(state, tk, 0.0, critical[k])[0] if math.isfinite(critical[k]) else 0.0
        spent += hit * sided
        if k < t.size - 1:
            state = _advance(state, tk, 0.0, [(lo, critical[k])], origin, r)
    nominal = sided * stats.norm.sf(critical)
    return Boundaries(t, critical, cumulative, nominal, alpha, spending, sided, final)


def solve_boundary(state: _State, t: float, target: float, sided: int) -> float:
    """The z boundary whose exit probability (both sides when two-sided) from ``state`` is
    ``target`` under the null; inf when nothing is to be spent."""
    if target <= 0:
        return math.inf

    def excess(c: float) -> float:
        return sided * _tails(state, t, 0.0, c)[0] - target

    if excess(0.0) <= 0:
        return 0.0
    if excess(_BOUND_MAX) >= 0:
        return _BOUND_MAX
    return float(optimize.brentq(excess, 0.0, _BOUND_MAX, xtol=1e-12, rtol=1e-13))


def look_z(p: float, estimate: float) -> float:
    """A look's statistic on the z scale, by its p (the significance-level approach's link):
    z̃ = sign(Δ̂) Φ̄⁻¹(p / 2)."""
    return float(np.sign(estimate) * stats.norm.isf(max(p, 1e-300) / 2.0))


def null_state(bounds: Boundaries, r: int = GRID_R) -> tuple[_State, float]:
    """The null sub-density after the looks of ``bounds`` and the α they spent."""
    state = origin = _start()
    spent = 0.0
    for t, c in zip(bounds.fractions, bounds.critical, strict=True):
        if math.isfinite(c):
            spent += bounds.sided * _tails(state, float(t), 0.0, float(c))[0]
        lo = -c if bounds.sided == 2 else -math.inf
        state = _advance(state, float(t), 0.0, [(lo, c)], origin, r)
    return state, spent


def final_boundary(bounds: Boundaries, t_final: float) -> float:
    """The z boundary of a final look at fraction ``t_final`` after the looks of ``bounds``:
    it spends what is left, α − (α spent so far)."""
    state, spent = null_state(bounds)
    return solve_boundary(state, t_final, bounds.alpha - spent, bounds.sided)


def conditional_power(z: float, t: float, t_final: float, critical: float, drift: float) -> float:
    """P(Z(t_K) ≥ c_K | Z(t) = z) at drift η (§4e.6), one final look at t_K:
    Φ̄((c_K √t_K − z √t − η (t_K − t)) / √(t_K − t))."""
    dt = t_final - t
    arg = (critical * math.sqrt(t_final) - z * math.sqrt(t) - drift * dt) / math.sqrt(dt)
    return float(stats.norm.sf(arg))


def conditional_power_at(bounds: Boundaries, z: float, drift: float, t_final: float) -> float:
    """Conditional power in the direction of z̃ (δ_min signed like the estimate) for a final
    look at ``t_final`` after the looks of ``bounds``, its boundary spending what is left."""
    t = float(bounds.fractions[-1])
    if t_final <= t:
        return math.nan
    c = final_boundary(bounds, t_final)
    return conditional_power(abs(z), t, t_final, c, drift)
