"""A declared sequential plan, the analysis of its looks and the planning of a design
(docs/method.md §4e.2-§4e.6, §4e.8).

Every rerun of the analysis after new runs arrive is a look at the data; stopping at the first
significant look inflates the level (14.6 % false claims at α = 0.05 for looks at 3 ... 10
runs per system). Each look's z boundary c_k (``group_sequential``) becomes a nominal level
2 Φ̄(c_k) at which the look's own small-df test (``LookTest``) rejects; the plan's action at the
latest look (``PlanAction``); non-binding futility and the expected runs of a plan. Pure
functions on numbers, with the per-look test passed in.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import optimize, stats

from infrepro.core.decisions import plan_sentence
from infrepro.stats.group_sequential import (
    LOOK_ALPHA_FACTOR,
    MAX_EXTRA_RUNS,
    Boundaries,
    Spending,
    conditional_power,
    conditional_power_at,
    crossing_probabilities,
    efficacy_boundaries,
    information_fraction,
    look_z,
    null_state,
    solve_boundary,
)


# -- the per-look test (pluggable) --------------------------------------------------------------
@dataclass(frozen=True)
class LookData:
    """One look's comparison of B with A: the estimate Δ̂ (B − A, positive = B better in the
    metric's direction), its SE and df, the run counts and the df of each system's run
    variance (f_k = n_k − 1 unless moderated)."""

    estimate: float
    se: float
    df: float
    n_a: int
    n_b: int
    f_a: float | None = None
    f_b: float | None = None

    @property
    def t(self) -> float:
        return self.estimate / self.se


@dataclass(frozen=True)
class LookTest:
    """A look's own test: ``p_value(look)`` the marginal two-sided p of its statistic t,
    ``critical(level, look)`` its inverse, the |t| at which p equals ``level``, and the κ its
    plans need (``alpha_factor``, §4e.5: measured per test). Welch's t with Welch-Satterthwaite
    df (``WELCH``) is the stand-in; the calibrated test plugs in as
    ``LookTest(name, p_value, critical, BAND_LOOK_ALPHA_FACTOR)``."""

    name: str
    p_value: Callable[[LookData], float]
    critical: Callable[[float, LookData], float]
    alpha_factor: float = LOOK_ALPHA_FACTOR


WELCH = LookTest(
    "Welch's t",
    lambda look: float(2.0 * stats.t.sf(abs(look.t), look.df)),
    lambda level, look: float(stats.t.isf(level / 2.0, look.df)),
)


def welch_look(runs_a: Sequence[float], runs_b: Sequence[float]) -> LookData:
    """Welch's t on run means (what the per-system test of §4b.1 is with every run on every
    segment): Δ̂ = ȳ_B − ȳ_A, SE² = s²_A/n_A + s²_B/n_B, Welch-Satterthwaite df."""
    a, b = np.asarray(runs_a, dtype=float), np.asarray(runs_b, dtype=float)
    va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    df = (va + vb) ** 2 / (va**2 / (a.size - 1) + vb**2 / (b.size - 1))
    return LookData(float(b.mean() - a.mean()), math.sqrt(va + vb), float(df), a.size, b.size)


# -- the declared plan and the analysis of its looks (§4e.2-§4e.6) -------------------------------
def plan_alpha(
    alpha: float,
    spending: Spending,
    looks: int,
    final: bool,
    factor: float = LOOK_ALPHA_FACTOR,
) -> float:
    """The α the z boundaries are computed at (§4e.5): κ α (κ = ``factor``, the look test's)
    when the plan tests at more than one look. The significance-level conversion to the looks'
    own small-df tests loses the correlation the z recursion assumes (each look re-estimates the
    run variances), which raised the level to 0.050-0.055 (Welch's t) and 0.060 (the
    band-calibrated test) at looks after every run from 3 to 10 runs per system; κ = 0.85
    (Welch) and 0.80 (calibrated) hold it at run-SD ratios up to 2. A single final look, or
    spending ``none`` (only the final look tests), needs no κ."""
    if spending == "none" or (looks == 1 and final):
        return alpha
    return factor * alpha


@dataclass(frozen=True)
class SequentialPlan:
    """A declared plan: maximum runs per system, spending function, the report's two-sided
    α, the minimum effect of interest δ_min (> 0, in the estimate's units; None: no
    conditional power), the non-binding futility threshold γ on conditional power (None: no
    futility advice) and the conditional power the "continue" advice aims at."""

    max_runs_a: int
    max_runs_b: int
    alpha: float
    spending: Spending
    min_effect: float | None
    futility: float | None
    target_power: float


@dataclass(frozen=True)
class LookResult:
    """One look of a plan: its runs and information fraction, the α spent so far, the z
    boundary and its nominal level, the look test's critical |t| there, the look's estimate,
    p and repeated CI, and whether it crossed (p ≤ nominal)."""

    look: int
    n_a: int
    n_b: int
    fraction: float
    alpha_spent: float
    z_boundary: float
    nominal: float
    critical_t: float
    estimate: float
    se: float
    df: float
    p_value: float
    ci_lower: float
    ci_upper: float
    crossed: bool


Action = Literal[
    "stop: significant",
    "stop: futility",
    "continue",
    "stop: maximum reached",
    "stop: declared final",
]


@dataclass(frozen=True)
class PlanAction:
    """What the plan says now: ``action`` at look ``look``; ``direction`` +1 (B better), −1
    (A better) or 0; conditional power at δ_min (NaN without one); ``more_runs`` per system
    for the target conditional power (None when stopping, or when MAX_EXTRA_RUNS do not
    reach it)."""

    action: Action
    look: int
    n_a: int
    n_b: int
    max_a: int
    max_b: int
    direction: int
    conditional_power: float
    more_runs: int | None
    target_power: float

    def sentence(self, name_a: str, name_b: str) -> str:
        """The decision in words, e.g. "stop: B better (look 2, 5 of 10 runs per system)"
        (``infrepro.core.decisions.plan_sentence``, the words the records use)."""
        return plan_sentence(
            self.action,
            name_b if self.direction > 0 else name_a,
            self.look,
            (self.n_a, self.n_b),
            (self.max_a, self.max_b),
            self.conditional_power,
            self.more_runs,
            self.target_power,
        )


@dataclass(frozen=True)
class SequentialAnalysis:
    """A plan's looks (up to its final look), their boundaries, the decision, and how many
    looks came after the final one (beyond the plan: not tested)."""

    looks: tuple[LookResult, ...]
    boundaries: Boundaries
    decision: PlanAction
    beyond_plan: int


def analyse_looks(
    looks: Sequence[LookData], plan: SequentialPlan, test: LookTest, final: bool
) -> SequentialAnalysis:
    """Apply a declared plan to a pair's looks so far (§4e.3-§4e.6).

    Information fractions from run counts; error-spending z boundaries at ``plan_alpha``; look
    k crosses when the look test's p ≤ its nominal level 2 Φ̄(c_k) and claims Δ̂_k's direction;
    the first crossing stops. The repeated CI is Δ̂_k ± q_k SE_k with q_k the look test's
    critical |t| at the nominal level. Without a crossing, the last look's conditional power at
    δ_min decides: futility advice below γ, else the runs per system for the target. ``final``
    declares the last look the final one (stopping early: it spends what is left)."""
    fractions = [
        information_fraction(lk.n_a, lk.n_b, plan.max_runs_a, plan.max_runs_b) for lk in looks
    ]
    if any(b <= a for a, b in zip(fractions, fractions[1:], strict=False)):
        raise ValueError("every look must add runs (information fractions must increase)")
    reached = next((k for k, t in enumerate(fractions) if t >= 1.0), None)
    used = len(looks) if reached is None else reached + 1
    is_final = final or reached is not None
    alpha_z = plan_alpha(plan.alpha, plan.spending, used, is_final, test.alpha_factor)
    bounds = efficacy_boundaries(fractions[:used], alpha_z, plan.spending, 2, is_final)
    rows: list[LookResult] = []
    for k, look in enumerate(looks[:used]):
        nominal = float(bounds.nominal[k])
        p = test.p_value(look)
        q = test.critical(nominal, look) if nominal > 0 else math.inf
        rows.append(
            LookResult(
                k + 1,
                look.n_a,
                look.n_b,
                fractions[k],
                float(bounds.alpha_cumulative[k]),
                float(bounds.critical[k]),
                nominal,
                q,
                look.estimate,
                look.se,
                look.df,
                p,
                look.estimate - q * look.se,
                look.estimate + q * look.se,
                p <= nominal,
            )
        )
    # a look declared final before the maximum is the user's stop, not the plan's end (§4e.3)
    end: Action | None = "stop: maximum reached" if reached is not None else None
    if end is None and final:
        end = "stop: declared final"
    decision = _decide(rows, looks[:used], bounds, plan, test, end)
    return SequentialAnalysis(tuple(rows), bounds, decision, len(looks) - used)


def _decide(
    rows: list[LookResult],
    looks: Sequence[LookData],
    bounds: Boundaries,
    plan: SequentialPlan,
    test: LookTest,
    end: Action | None,
) -> PlanAction:
    def decision(row: LookResult, action: Action, direction: int, cp: float, more: int | None):
        return PlanAction(
            action,
            row.look,
            row.n_a,
            row.n_b,
            plan.max_runs_a,
            plan.max_runs_b,
            direction,
            cp,
            more,
            plan.target_power,
        )

    for row in rows:
        if row.crossed:
            return decision(row, "stop: significant", int(np.sign(row.estimate)), math.nan, None)
    last, look = rows[-1], looks[-1]
    if end is not None:  # the final look did not cross: the planned maximum, or declared final
        return decision(last, end, 0, math.nan, None)
    if plan.min_effect is None:
        return decision(last, "continue", 0, math.nan, None)
    z = look_z(last.p_value, last.estimate)
    drift = plan.min_effect / (last.se * math.sqrt(last.fraction))
    cp = conditional_power_at(bounds, z, drift, 1.0)
    if plan.futility is not None and cp < plan.futility:
        return decision(last, "stop: futility", 0, cp, None)
    more = runs_for_power(bounds, z, drift, look, plan, plan.target_power)
    return decision(last, "continue", 0, cp, more)


def repeated_p_value(
    p_values: Sequence[float],
    fractions: Sequence[float],
    spending: Spending,
    used: int,
    final: bool,
    factor: float,
    floor: float = 1e-16,
) -> float:
    """The repeated p-value of a plan's looks 1 ... k (Jennison & Turnbull 2000, §9.1): the
    smallest α′ at which one of them crosses, p_j ≤ a_j(α′), a_j the nominal levels of the same
    plan (its ``used`` tested looks, ``final`` as ``analyse_looks`` decided, κ = ``factor``) at
    α′. At most α exactly when a look up to k crosses at α (the nominal levels grow with α′).
    By Brent's method on max_j log(a_j(α′) / p_j), in log10 α′ on [log10 ``floor``, 0);
    ``floor`` when even that crosses."""
    k = len(p_values)
    is_final = final and k == used
    logs = np.log(np.maximum(np.asarray(p_values, dtype=float), 1e-300))

    def excess(log10_alpha: float) -> float:
        alpha = 10.0**log10_alpha
        z_alpha = plan_alpha(alpha, spending, used, final, factor)
        nominal = efficacy_boundaries(list(fractions)[:k], z_alpha, spending, 2, is_final).nominal
        with np.errstate(divide="ignore"):
            gaps = np.log(nominal) - logs
        return float(np.max(gaps))

    lo, hi = math.log10(floor), math.log10(1.0 - 1e-9)
    if excess(lo) >= 0:
        return floor
    if excess(hi) < 0:
        return 1.0
    return float(10.0 ** optimize.brentq(excess, lo, hi, xtol=1e-7, rtol=1e-12))


def runs_for_power(
    bounds: Boundaries,
    z: float,
    drift: float,
    look: LookData,
    plan: SequentialPlan,
    target: float,
) -> int | None:
    """The fewest more runs m per system (both systems) whose final look, at
    n_A + m, n_B + m runs (beyond the planned maximum if need be), has conditional power
    ≥ ``target`` at δ_min; None when MAX_EXTRA_RUNS do not reach it."""
    state, spent = null_state(bounds)
    t = float(bounds.fractions[-1])
    for m in range(1, MAX_EXTRA_RUNS + 1):
        t_final = information_fraction(look.n_a + m, look.n_b + m, plan.max_runs_a, plan.max_runs_b)
        c = solve_boundary(state, t_final, bounds.alpha - spent, bounds.sided)
        if conditional_power(abs(z), t, t_final, c, drift) >= target:
            return m
    return None


# -- planning a sequential design (§4e.8) -------------------------------------------------------
@dataclass(frozen=True)
class DesignCharacteristics:
    """A balanced plan with looks at ``runs`` per system: its boundaries, the non-binding
    futility band |z| < f_k (zeros without futility), the directional power at the effect (the
    futility advice followed, when given), and the expected runs per system at no difference
    and at the effect (futility obeyed when given)."""

    runs: np.ndarray
    boundaries: Boundaries
    futility: np.ndarray
    drift: float
    power: float
    expected_runs_null: float
    expected_runs_effect: float


def design_characteristics(
    runs: Sequence[int],
    sd_a: float,
    sd_b: float,
    effect: float,
    alpha: float,
    spending: Spending,
    futility: float | None,
    alpha_factor: float = LOOK_ALPHA_FACTOR,
) -> DesignCharacteristics:
    """Power and expected runs of a plan with looks at ``runs`` runs per system (the last the
    maximum N), run-mean SDs sd_a, sd_b, true difference ``effect`` (z approximation: the run
    variances known). Drift η = δ / sqrt((sd_a² + sd_b²)/N); the recursion of
    ``crossing_probabilities`` under η and under 0;
    E[runs] = Σ_k n_k P(stop at look k) + N P(reach the last look)."""
    n = np.asarray(runs, dtype=float)
    fractions = n / n[-1]
    bounds = efficacy_boundaries(
        fractions, plan_alpha(alpha, spending, n.size, True, alpha_factor), spending, 2, True
    )
    drift = effect / math.sqrt((sd_a**2 + sd_b**2) / n[-1])
    band = np.zeros(n.size)
    if futility is not None:
        band = futility_band(bounds, drift, futility)
    upper = bounds.critical
    cross = crossing_probabilities(fractions, upper, -upper, drift, band)
    power = float(cross.upper.sum())

    def expected(eta: float, inner: np.ndarray) -> float:
        c = crossing_probabilities(fractions, upper, -upper, eta, inner)
        stop = c.upper + c.lower + c.inner
        return float((n[:-1] * stop[:-1]).sum() + n[-1] * (1.0 - stop[:-1].sum()))

    return DesignCharacteristics(
        n.astype(int), bounds, band, drift, power, expected(0.0, band), expected(drift, band)
    )


def futility_band(bounds: Boundaries, drift: float, threshold: float) -> np.ndarray:
    """The non-binding futility band of a plan: at look k < K, stop when the conditional power
    at drift η in the direction of z is below γ, i.e. |z| < f_k with
    f_k = (c_K − η (1 − t_k) − √(1 − t_k) Φ̄⁻¹(γ)) / √t_k (clipped to [0, c_k]); none at the
    last look."""
    t = bounds.fractions
    c_final = float(bounds.critical[-1])
    band = np.zeros(t.size)
    head = t[:-1]
    f = c_final - drift * (1 - head) - np.sqrt(1 - head) * stats.norm.isf(threshold)
    band[:-1] = np.clip(f / np.sqrt(head), 0.0, bounds.critical[:-1])
    return band


@dataclass(frozen=True)
class SequentialDesign:
    """The smallest balanced plan (looks at first, first + every, ..., N runs per system)
    whose power at the effect reaches the target, beside the fixed design's runs."""

    characteristics: DesignCharacteristics
    fixed_runs: int


def plan_sequential(
    sd_a: float,
    sd_b: float,
    effect: float,
    alpha: float,
    spending: Spending,
    power: float,
    first: int,
    every: int,
    futility: float | None,
    alpha_factor: float = LOOK_ALPHA_FACTOR,
    max_runs: int = MAX_EXTRA_RUNS,
) -> SequentialDesign | None:
    """Plan a sequential design (z approximation): the smallest maximum N (looks at
    first, first + every, ... up to N) with directional power ≥ ``power`` at ``effect``; the
    fixed design's n is the smallest with Φ̄(z_{1−α/2} − δ / sqrt((sd_a² + sd_b²)/n)) ≥ power.
    None when ``max_runs`` runs per system do not reach it. The search starts at the fixed n:
    a plan spends at most α at its maximum, so it never has more power there."""
    fixed = next(
        (
            n
            for n in range(2, max_runs + 1)
            if stats.norm.sf(
                stats.norm.isf(alpha / 2) - effect / math.sqrt((sd_a**2 + sd_b**2) / n)
            )
            >= power
        ),
        None,
    )
    if fixed is None:
        return None
    for top in range(max(first, fixed), max_runs + 1):
        runs = list(range(first, top + 1, every))
        if runs[-1] != top:
            runs.append(top)
        design = design_characteristics(
            runs, sd_a, sd_b, effect, alpha, spending, futility, alpha_factor
        )
        if design.power >= power:
            return SequentialDesign(design, fixed)
    return None
