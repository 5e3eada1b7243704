"""Power of the headline test and the runs it needs (docs/method.md §4d.1).

The headline model (§4b.1), ``score ~ system + (1|s) + per-system (1|run_id)``, fitted by REML
to a balanced two-system design (n_A, n_B runs, every run on all S segments) splits into
independent strata whose mean squares are sufficient:

    residual       SS_res ~ s2_res chi2((n_A + n_B - 1)(S - 1))
    segments       SS_seg ~ ((n_A + n_B) s2_s + s2_res) chi2(S - 1)
    runs of k      SS_k   ~ lambda_k chi2(n_k - 1),       lambda_k = S s2_k + s2_res
    contrast       D      ~ N(delta, V),                 V = sum_k lambda_k / (S n_k)

The REML estimates are the strata's mean squares with lambda_k >= s2_res and
lambda_seg >= s2_res (a violating stratum is pooled with the residual), and the test of the
contrast is t = D / sqrt(V_hat) with nu = V_hat^2 / sum_k (lambda_hat_k/(S n_k))^2 / (n_k - 1):
Welch's t on the run means, the engine's Kenward-Roger test on such data. Power is simulated
by drawing the strata (vectorized, seeded); a noncentral-t approximation guides and is
reported beside it.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from infrepro.registry import PLANNING
from infrepro.runcounts import holds_level
from infrepro.schema import with_defaults
from infrepro.vocabulary import RUN, SEGMENT, SYSTEM, headline_formula

from .data import MetricData
from .fitlog import FitLog
from .smalltests import contest

TARGETS = (0.8, 0.9)


@dataclass(frozen=True)
class Components:
    """The headline fit's variance components (stored scale) and the number of segments."""

    segment: float
    run_a: float
    run_b: float
    residual: float
    segments: int

    def lam(self, run: float) -> float:
        """E[mean square] of a system's run stratum: S s2_run + s2_res."""
        return self.segments * run + self.residual


@dataclass(frozen=True)
class StrataDraws:
    """Standardized draws of the strata for one design (n_a, n_b): chi-square variates divided
    by their df (so that a mean square is lambda times the draw) and the contrast's normal."""

    n_a: int
    n_b: int
    segments: int
    res: np.ndarray
    seg: np.ndarray
    run_a: np.ndarray
    run_b: np.ndarray
    normal: np.ndarray

    @property
    def df_res(self) -> int:
        return (self.n_a + self.n_b - 1) * (self.segments - 1)


def draw_strata(n_a: int, n_b: int, segments: int, draws: int, seed: int) -> StrataDraws:
    """M draws of chi2(nu)/nu for the residual, segment and run strata and of N(0, 1) for the
    contrast; seeded per design by (seed, n_a, n_b), so every design has its own stream."""
    rng = np.random.default_rng([seed, n_a, n_b])
    df_res = (n_a + n_b - 1) * (segments - 1)
    return StrataDraws(
        n_a=n_a,
        n_b=n_b,
        segments=segments,
        res=rng.chisquare(df_res, draws) / df_res,
        seg=rng.chisquare(segments - 1, draws) / (segments - 1),
        run_a=rng.chisquare(n_a - 1, draws) / (n_a - 1),
        run_b=rng.chisquare(n_b - 1, draws) / (n_b - 1),
        normal=rng.standard_normal(draws),
    )


def _pooled(ms: list[np.ndarray], df: list[float]) -> list[np.ndarray]:
    """REML estimates of the stratum expectations under lambda_j >= lambda_res (index 0):
    strata whose mean square falls below the pooled residual join it, until none does."""
    pooled = [np.zeros_like(ms[0], dtype=bool) for _ in ms]
    pooled[0][:] = True
    for _ in range(len(ms)):
        ss = sum(np.where(p, m * d, 0.0) for p, m, d in zip(pooled, ms, df, strict=True))
        nu = sum(np.where(p, d, 0.0) for p, d in zip(pooled, df, strict=True))
        level = ss / nu
        changed = False
        for j in range(1, len(ms)):
            join = ~pooled[j] & (ms[j] < level)
            changed = changed or bool(join.any())
            pooled[j] = pooled[j] | join
        if not changed:
            break
    return [np.where(p, level, m) for p, m in zip(pooled, ms, strict=True)]


def headline_p(comp: Components, delta: float, draws: StrataDraws) -> tuple[np.ndarray, np.ndarray]:
    """The headline test's two-sided p and its t for every draw (t > 0: estimate above 0).

    V_hat = sum_k lambda_hat_k / (S n_k); t = D / sqrt(V_hat);
    nu = V_hat^2 / sum_k (lambda_hat_k / (S n_k))^2 / (n_k - 1) (at a boundary fit, lambda_hat_k
    is the pooled residual but its df stay n_k - 1: the expected information at the estimate,
    as Kenward-Roger computes it)."""
    s, n_a, n_b = comp.segments, draws.n_a, draws.n_b
    lam_a, lam_b = comp.lam(comp.run_a), comp.lam(comp.run_b)
    lam_seg = (n_a + n_b) * comp.segment + comp.residual
    ms = [comp.residual * draws.res, lam_seg * draws.seg, lam_a * draws.run_a, lam_b * draws.run_b]
    df = [float(draws.df_res), float(s - 1), float(n_a - 1), float(n_b - 1)]
    est = _pooled(ms, df)
    v_a, v_b = est[2] / (s * n_a), est[3] / (s * n_b)
    v_hat = v_a + v_b
    nu = v_hat**2 / (v_a**2 / df[2] + v_b**2 / df[3])
    d = delta + math.sqrt(lam_a / (s * n_a) + lam_b / (s * n_b)) * draws.normal
    t = d / np.sqrt(v_hat)
    return 2.0 * stats.t.sf(np.abs(t), nu), t


def analytic_power(comp: Components, delta: float, n_a: int, n_b: int, alpha: float) -> float:
    """Directional power of Welch's t on run means with the true lambdas (noncentral t):
    nu* = Welch's df, ncp = delta / sqrt(V); P(T > t_crit) in delta's direction."""
    s = comp.segments
    a, b = comp.lam(comp.run_a) / (s * n_a), comp.lam(comp.run_b) / (s * n_b)
    nu = (a + b) ** 2 / (a**2 / (n_a - 1) + b**2 / (n_b - 1))
    crit = float(stats.t.isf(alpha / 2, nu))
    return float(stats.nct.sf(crit, nu, abs(delta) / math.sqrt(a + b)))


@dataclass(frozen=True)
class Power:
    """Simulated directional power at one design, its Monte Carlo SE and the analytic guide."""

    n_a: int
    n_b: int
    power: float
    mc_se: float
    analytic: float
    draws: int


def simulated_power(
    comp: Components, delta: float, n_a: int, n_b: int, alpha: float, draws: int, seed: int
) -> Power:
    """Share of draws whose headline test is significant at alpha in delta's direction."""
    strata = draw_strata(n_a, n_b, comp.segments, draws, seed)
    p, t = headline_p(comp, delta, strata)
    direction = 1.0 if delta >= 0 else -1.0
    hits = (p < alpha) & (direction * t > 0)
    power = float(hits.mean())
    se = math.sqrt(power * (1.0 - power) / draws)
    return Power(n_a, n_b, power, se, analytic_power(comp, delta, n_a, n_b, alpha), draws)


@dataclass(frozen=True)
class Plan:
    """The planning answers for one effect: the equal-allocation curve n = 2 ... max_runs, the
    current design, and per target the runs per system needed and the cheapest allocation
    (None when max_runs runs per system do not reach it)."""

    curve: list[Power]
    current: Power
    needed: dict[float, Power | None]
    cheapest: dict[float, Power | None]


def _cheapest(
    comp: Components, delta: float, target: float, max_runs: int, run: PowerRun
) -> Power | None:
    """Smallest n_A + n_B in [2, max_runs]^2 whose simulated power reaches ``target`` (ties to
    the higher power), among the allocations whose run counts hold the level (§4b.6, run
    counts: an unbalanced design such as 10 vs 2 would claim nothing). The analytic power
    guides the search: per total, only the allocations within 0.1 of the best analytic power
    at that total are simulated."""
    for total in range(4, 2 * max_runs + 1):
        pairs = [
            (a, total - a)
            for a in range(2, max_runs + 1)
            if 2 <= total - a <= max_runs and holds_level(a, total - a, run.alpha)
        ]
        if not pairs:
            continue
        guide = [analytic_power(comp, delta, a, b, run.alpha) for a, b in pairs]
        if max(guide) < target - 0.1:
            continue
        best = max(guide)
        found = [
            run(comp, delta, a, b)
            for (a, b), g in zip(pairs, guide, strict=True)
            if g >= best - 0.1
        ]
        found = [p for p in found if p.power >= target]
        if found:
            return max(found, key=lambda p: (p.power, -p.n_a))
    return None


@dataclass(frozen=True)
class PowerRun:
    """Simulation settings: level, draws per design and seed."""

    alpha: float
    draws: int
    seed: int

    def __call__(self, comp: Components, delta: float, n_a: int, n_b: int) -> Power:
        return simulated_power(comp, delta, n_a, n_b, self.alpha, self.draws, self.seed)


def plan(
    comp: Components,
    delta: float,
    current: tuple[int, int],
    run: PowerRun,
    targets: tuple[float, ...] = (0.8, 0.9),
    max_runs: int = 30,
) -> Plan:
    """Power curve, current design, runs needed and cheapest allocation for one effect. A
    current design with a single-run system (its test borrows the other's run variance) is not
    a per-system design: its power is NaN."""
    curve = [run(comp, delta, n, n) for n in range(2, max_runs + 1)]
    needed = {t: next((p for p in curve if p.power >= t), None) for t in targets}
    cheapest = {t: _cheapest(comp, delta, t, max_runs, run) for t in targets}
    if min(current) >= 2:
        now = run(comp, delta, *current)
    else:
        now = Power(*current, math.nan, math.nan, math.nan, run.draws)
    return Plan(curve, now, needed, cheapest)


def headline_components(
    data: MetricData, log: FitLog, members: list[str]
) -> tuple[Components, float, tuple[int, int]] | None:
    """The headline REML fit of a pair (§4b.1): its components, the observed contrast
    (baseline - competitor) and the pair's run counts; None (recorded) when it cannot be had."""
    rows = data.rows_of(systems=members)
    subset = f"{members[0]} vs {members[1]}"
    counts = rows.groupby(SYSTEM, sort=False)[RUN].nunique()
    n_a, n_b = (int(counts.get(s, 0)) for s in members)
    if max(n_a, n_b) < 2:
        log.skip(PLANNING, subset, "", "every system has a single run: no run variance to plan")
        return None
    pooled = min(n_a, n_b) < 2
    formula = headline_formula(data.metric, members, pooled)
    fitted = log.fit(
        formula,
        rows,
        reml=True,
        analysis=PLANNING,
        subset=subset,
        reference_levels={SYSTEM: members[0]},
    )
    if fitted is None:
        return None
    if not fitted.converged:  # docs/method.md §4.6.1: no plan from a fit without an optimum
        log.skip(PLANNING, subset, "", f"the headline fit {formula} did not converge")
        return None
    test = contest(
        log,
        fitted,
        fitted.contrast_matrix({f"{SYSTEM}{members[1]}": -1.0}),
        analysis=PLANNING,
        subset=subset,
        prop="",
    )
    if test is None:
        return None
    vc = fitted.reported_components.to_numpy()  # boundary terms at exactly 0 (§4.6.1)
    run_a, run_b = (vc[1], vc[1]) if pooled else (vc[1], vc[2])
    comp = Components(
        float(vc[0]), float(run_a), float(run_b), float(vc[-1]), int(rows[SEGMENT].nunique())
    )
    return comp, float(test.estimate), (n_a, n_b)


def _rows(
    comp: Components, result: Plan, improvement: float, source: str, base: dict[str, object]
) -> list[dict[str, object]]:
    """planning.csv rows of one effect (``improvement``: in the metric's direction, positive =
    the competitor better, stored scale): the curve, the current design, needed and cheapest."""
    head = {
        **base,
        "effect_source": source,
        "improvement_points": 100.0 * improvement,
        "var_segment": comp.segment,
        "var_run_baseline": comp.run_a,
        "var_run_competitor": comp.run_b,
        "var_residual": comp.residual,
        "segments": comp.segments,
    }
    picks: list[tuple[str, float, Power | None]] = [("equal", math.nan, p) for p in result.curve]
    picks.append(("current", math.nan, result.current))
    for target in TARGETS:
        picks.append(("needed", target, result.needed[target]))
        picks.append(("cheapest", target, result.cheapest[target]))
    rows = []
    for design, target, found in picks:
        power = found or Power(0, 0, math.nan, math.nan, math.nan, result.current.draws)
        rows.append(
            {
                **head,
                "design": design,
                "target": target,
                "runs_baseline": power.n_a or math.nan,
                "runs_competitor": power.n_b or math.nan,
                "power": power.power,
                "mc_se": power.mc_se,
                "power_analytic": power.analytic,
                "draws": power.draws,
            }
        )
    return rows


def planning_analysis(
    data: MetricData, log: FitLog, alpha: float | None = None
) -> dict[str, pd.DataFrame]:
    """``planning.csv``: power of the headline test for 2 ... max_runs runs per system, the
    current design, runs needed and cheapest allocations, for the observed contrast and for
    ``planning.min_effect`` (points), per pair baseline vs competitor (docs/method.md §4d.1)."""
    options = data.options[PLANNING]
    if alpha is None:  # the verdict's level: report.alpha (passed by the workflow's rule)
        alpha = float(data.options.get("alpha", with_defaults("report", None)["alpha"]))
    run = PowerRun(alpha, int(options["draws"]), int(options["seed"]))
    rows: list[dict[str, object]] = []
    for members in itertools.combinations(data.systems, 2):
        if members[0] != data.baseline:
            continue
        found = headline_components(data, log, list(members))
        if found is None:
            continue
        comp, observed, current = found
        # effects as baseline - competitor (the simulation's contrast) and as the improvement
        # (positive = the competitor better); the smallest effect of interest first
        effects = []
        if options.get("min_effect") is not None:
            size = abs(float(options["min_effect"])) / 100.0  # power is symmetric in the sign
            effects.append(("min_effect", size, size))
        effects.append(("observed (post hoc)", observed, -data.sign() * observed))
        base = {"metric": data.metric, "subset": f"{members[0]} vs {members[1]}", "alpha": alpha}
        for source, effect, improvement in effects:
            result = plan(comp, effect, current, run, TARGETS, int(options["max_runs"]))
            rows += _rows(comp, result, improvement, source, base)
    return {PLANNING: pd.DataFrame(rows)}
