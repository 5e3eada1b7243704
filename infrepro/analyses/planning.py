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
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from infrepro.analyses.common.data import MetricData
from infrepro.analyses.common.fitlog import FitLog
from infrepro.analyses.common.smalltests import contest
from infrepro.analyses.decision.pairtests import RunVariance
from infrepro.core.decisions import FAMILY_BASELINE, FIRST_LOOK
from infrepro.core.registry import PLANNING
from infrepro.core.schema import defaults
from infrepro.core.vocabulary import RUN, SEGMENT, SYSTEM, columns, headline_formula
from infrepro.stats.calibrated import DEFAULT_BAND, critical_t, critical_t_floor, power
from infrepro.stats.group_sequential import BAND_LOOK_ALPHA_FACTOR
from infrepro.stats.sequential_plan import plan_sequential

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
    prior_df: float = 0.0

    @property
    def df_res(self) -> int:
        return (self.n_a + self.n_b - 1) * (self.segments - 1)


def draw_strata(
    n_a: int, n_b: int, segments: int, draws: int, seed: int, prior_df: float = 0.0
) -> StrataDraws:
    """M draws of chi2(nu)/nu for the residual, segment and run strata and of N(0, 1) for the
    contrast; seeded per design by (seed, n_a, n_b), so every design has its own stream. With
    moderated run variances (``prior_df`` d0 > 0) a run stratum's estimate has n_k − 1 + d0 df
    (the prior taken as centred on the true variance: the moderation at its best)."""
    rng = np.random.default_rng([seed, n_a, n_b])
    df_res = (n_a + n_b - 1) * (segments - 1)
    f_a, f_b = n_a - 1 + prior_df, n_b - 1 + prior_df
    return StrataDraws(
        n_a=n_a,
        n_b=n_b,
        segments=segments,
        res=rng.chisquare(df_res, draws) / df_res,
        seg=rng.chisquare(segments - 1, draws) / (segments - 1),
        run_a=rng.chisquare(f_a, draws) / f_a,
        run_b=rng.chisquare(f_b, draws) / f_b,
        normal=rng.standard_normal(draws),
        prior_df=prior_df,
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


@dataclass(frozen=True)
class StrataEstimates:
    """Per draw: the pair's Welch statistic t (t > 0: estimate above 0) and the estimated
    variances of the two systems' mean scores, lambda_hat_k / (S n_k)."""

    t: np.ndarray
    v_a: np.ndarray
    v_b: np.ndarray


def strata_estimates(comp: Components, delta: float, draws: StrataDraws) -> StrataEstimates:
    """V_hat = v_a + v_b with v_k = lambda_hat_k / (S n_k), t = D / sqrt(V_hat), the
    lambda_hat the REML estimates (a stratum below the residual's mean square pooled with
    it, §4d.1)."""
    s, n_a, n_b = comp.segments, draws.n_a, draws.n_b
    lam_a, lam_b = comp.lam(comp.run_a), comp.lam(comp.run_b)
    lam_seg = (n_a + n_b) * comp.segment + comp.residual
    ms = [comp.residual * draws.res, lam_seg * draws.seg, lam_a * draws.run_a, lam_b * draws.run_b]
    df = [float(draws.df_res), float(s - 1), n_a - 1 + draws.prior_df, n_b - 1 + draws.prior_df]
    est = _pooled(ms, df)
    v_a, v_b = est[2] / (s * n_a), est[3] / (s * n_b)
    d = delta + math.sqrt(lam_a / (s * n_a) + lam_b / (s * n_b)) * draws.normal
    return StrataEstimates(d / np.sqrt(v_a + v_b), v_a, v_b)


def headline_t(comp: Components, delta: float, draws: StrataDraws) -> np.ndarray:
    """The pair's Welch statistic for every draw."""
    return strata_estimates(comp, delta, draws).t


@dataclass(frozen=True)
class PlannedTest:
    """The test planning simulates: the decision's test of the pair (docs/method.md §4b.11,
    §4b.12) at its marginal level (α, or the family's max-t level p*; a sequential decision's
    α_j), calibrated over the band of run-mean SD ratios, with the moderation's prior df (0:
    none); ``plan_alpha`` the α a sequential plan of the pair spends (§4e.11)."""

    level: float
    band: float = DEFAULT_BAND
    prior_df: float = 0.0
    plan_alpha: float = math.nan

    def critical(self, n_a: int, n_b: int) -> float:
        """The |t| the test rejects beyond at design (n_a, n_b)."""
        f = (n_a - 1 + self.prior_df, n_b - 1 + self.prior_df)
        return critical_t(self.level, n_a, n_b, self.band, *f)

    def critical_floor(self, n_a: int, n_b: int) -> float:
        """A closed-form lower bound of :meth:`critical` (``calibrated.critical_t_floor``)."""
        return critical_t_floor(self.level, n_a - 1 + self.prior_df, n_b - 1 + self.prior_df)


def analytic_power(
    comp: Components,
    delta: float,
    n_a: int,
    n_b: int,
    test: PlannedTest,
    critical: float | None = None,
) -> float:
    """Directional power of the calibrated test on run means with the true lambdas, by
    quadrature (``calibrated.power``; the boundary pooling of REML left out); with
    ``critical``, of |T| > critical instead."""
    s = comp.segments
    v_a, v_b = comp.lam(comp.run_a) / s, comp.lam(comp.run_b) / s
    f = (n_a - 1 + test.prior_df, n_b - 1 + test.prior_df)
    return power(
        abs(delta), v_a, v_b, n_a, n_b, test.level, test.band, *f, critical, two_sided=False
    ).directional


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
    comp: Components, delta: float, n_a: int, n_b: int, test: PlannedTest, draws: int, seed: int
) -> Power:
    """Share of draws whose test is significant in delta's direction."""
    strata = draw_strata(n_a, n_b, comp.segments, draws, seed, test.prior_df)
    t = headline_t(comp, delta, strata)
    direction = 1.0 if delta >= 0 else -1.0
    hits = (np.abs(t) > test.critical(n_a, n_b)) & (direction * t > 0)
    power = float(hits.mean())
    se = math.sqrt(power * (1.0 - power) / draws)
    return Power(n_a, n_b, power, se, analytic_power(comp, delta, n_a, n_b, test), draws)


@dataclass(frozen=True)
class Plan:
    """The planning answers for one effect: the equal-allocation curve n = 2 ... max_runs, the
    current design, and per target the runs per system needed and the cheapest allocation
    (None when max_runs runs per system do not reach it)."""

    curve: list[Power]
    current: Power
    needed: dict[float, Power | None]
    cheapest: dict[float, Power | None]


@dataclass
class _Search:
    """One effect's designs, each evaluated once: the targets' searches and the power curve
    meet the same designs (a total skipped for 0.8 is skipped for 0.9 too)."""

    comp: Components
    delta: float
    run: PowerRun
    _bound: dict[tuple[int, int], float] = field(default_factory=dict)
    _guide: dict[tuple[int, int], float] = field(default_factory=dict)
    _simulated: dict[tuple[int, int], Power] = field(default_factory=dict)

    def bound(self, a: int, b: int) -> float:
        """Analytic power at the critical value's closed-form floor: an upper bound."""
        if (a, b) not in self._bound:
            floor = self.run.test.critical_floor(a, b)
            self._bound[a, b] = analytic_power(self.comp, self.delta, a, b, self.run.test, floor)
        return self._bound[a, b]

    def guide(self, a: int, b: int) -> float:
        if (a, b) not in self._guide:
            self._guide[a, b] = analytic_power(self.comp, self.delta, a, b, self.run.test)
        return self._guide[a, b]

    def simulated(self, a: int, b: int) -> Power:
        if (a, b) not in self._simulated:
            self._simulated[a, b] = self.run(self.comp, self.delta, a, b)
        return self._simulated[a, b]


def _cheapest(search: _Search, target: float, max_runs: int, first: int = 4) -> Power | None:
    """Smallest n_A + n_B in [2, max_runs]^2 (from total ``first`` on) whose simulated power
    reaches ``target`` (ties to the higher power). The analytic power guides the search: per
    total, only the allocations within 0.1 of the best analytic power at that total are
    simulated."""
    for total in range(first, 2 * max_runs + 1):
        pairs = [(a, total - a) for a in range(2, max_runs + 1) if 2 <= total - a <= max_runs]
        if not pairs:
            continue
        # an upper bound first (the critical value's closed-form floor): a total it keeps
        # below the window is skipped without a calibrated critical value (the costly part)
        if max(search.bound(a, b) for a, b in pairs) < target - 0.1:
            continue
        guide = [search.guide(a, b) for a, b in pairs]
        if max(guide) < target - 0.1:
            continue
        best = max(guide)
        found = [
            search.simulated(a, b)
            for (a, b), g in zip(pairs, guide, strict=True)
            if g >= best - 0.1
        ]
        found = [p for p in found if p.power >= target]
        if found:
            return max(found, key=lambda p: (p.power, -p.n_a))
    return None


@dataclass(frozen=True)
class PowerRun:
    """Simulation settings: the test, draws per design and seed."""

    test: PlannedTest
    draws: int
    seed: int

    def __call__(self, comp: Components, delta: float, n_a: int, n_b: int) -> Power:
        return simulated_power(comp, delta, n_a, n_b, self.test, self.draws, self.seed)


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
    search = _Search(comp, delta, run)
    curve = [search.simulated(n, n) for n in range(2, max_runs + 1)]
    needed = {t: next((p for p in curve if p.power >= t), None) for t in targets}
    cheapest: dict[float, Power | None] = {}
    first = 4  # a design reaching a higher target reaches the lower: its total is no smaller
    for t in sorted(targets):
        cheapest[t] = _cheapest(search, t, max_runs, first)
        if cheapest[t] is None:
            first = 2 * max_runs + 1
        else:
            first = cheapest[t].n_a + cheapest[t].n_b
    cheapest = {t: cheapest[t] for t in targets}
    if min(current) >= 2:
        now = search.simulated(*current)
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


def _head(
    comp: Components, improvement: float, source: str, base: dict[str, object]
) -> dict[str, object]:
    """What every planning.csv row of one effect shares: the pair, the effect, the components."""
    return {
        **base,
        "effect_source": source,
        "improvement_points": 100.0 * improvement,
        "var_segment": comp.segment,
        "var_run_baseline": comp.run_a,
        "var_run_competitor": comp.run_b,
        "var_residual": comp.residual,
        "segments": comp.segments,
    }


def _rows(
    comp: Components, result: Plan, improvement: float, source: str, base: dict[str, object]
) -> list[dict[str, object]]:
    """planning.csv rows of one effect (``improvement``: in the metric's direction, positive =
    the competitor better, stored scale): the curve, the current design, needed and cheapest."""
    head = _head(comp, improvement, source, base)
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


def planned_test(
    decisions: pd.DataFrame | None,
    baseline: str,
    competitor: str,
    options: RunVariance,
    alpha: float,
) -> PlannedTest:
    """The pair's decision's test (its record in ``decisions.csv``): its marginal level, band
    and prior df; without a record, the calibrated test at ``alpha`` with the options' band."""
    rows = pd.DataFrame() if decisions is None else decisions
    if not rows.empty:
        rows = rows[(rows["reference"] == baseline) & (rows[SYSTEM] == competitor)]
        rows = rows.sort_values("family", key=lambda f: f != FAMILY_BASELINE, kind="stable")
    if rows.empty:
        return PlannedTest(alpha, options.band, 0.0, alpha)
    record = rows.iloc[0]
    band = float(record["band"]) if math.isfinite(float(record["band"])) else options.band
    prior = float(record["prior_df"]) if math.isfinite(float(record["prior_df"])) else 0.0
    planned = float(record["plan_alpha"])
    if not math.isfinite(planned):  # one look: the plan α_j the family would give it
        planned = alpha / max(int(record["family_size"]), 1)
    level = planned if str(record["sequential"]) else float(record["level"])
    return PlannedTest(level, band, prior, planned)


def sequential_rows(
    comp: Components,
    effect: float,
    test: PlannedTest,
    spending: str,
    futility: float | None,
    max_runs: int,
) -> list[dict[str, object]]:
    """planning.csv's ``sequential`` rows of one effect (§4e.8): per power target the smallest
    plan with looks at 3, 4, ..., N runs per system (z approximation, the decision's κ), its
    power, looks and expected runs under no difference and under the effect, and the fixed
    design's runs on the same approximation."""
    s = comp.segments
    sd_a = math.sqrt(comp.lam(comp.run_a) / s)
    sd_b = math.sqrt(comp.lam(comp.run_b) / s)
    rows: list[dict[str, object]] = []
    for target in TARGETS:
        design = plan_sequential(
            sd_a,
            sd_b,
            abs(effect),
            test.plan_alpha,
            spending,  # type: ignore[arg-type]
            target,
            FIRST_LOOK,
            1,
            futility,
            BAND_LOOK_ALPHA_FACTOR,
            max_runs,
        )
        row: dict[str, object] = {"design": "sequential", "target": target}
        if design is not None:
            plan = design.characteristics
            top = float(plan.runs[-1])
            row.update(
                runs_baseline=top,
                runs_competitor=top,
                power_analytic=plan.power,
                looks=float(plan.runs.size),
                expected_runs_null=plan.expected_runs_null,
                expected_runs_effect=plan.expected_runs_effect,
                fixed_runs=float(design.fixed_runs),
            )
        rows.append(row)
    return rows


def planning_analysis(
    data: MetricData,
    log: FitLog,
    decisions: pd.DataFrame | None = None,
    alpha: float | None = None,
) -> dict[str, pd.DataFrame]:
    """``planning.csv``: power of each pair's decision test (``decisions``: the summary
    analysis' records, for its level, band and moderation) for 2 ... max_runs runs per system,
    the current design, runs needed and cheapest allocations, for ``planning.min_effect``
    (points) and the observed contrast (post hoc), per pair baseline vs competitor
    (docs/method.md §4d.1)."""
    options = data.options[PLANNING]
    runs = RunVariance.of(data.options["run_variance"])
    level = float(defaults("report")["alpha"]) if alpha is None else alpha
    rows: list[dict[str, object]] = []
    for members in itertools.combinations(data.systems, 2):
        if members[0] != data.baseline:
            continue
        found = headline_components(data, log, list(members))
        if found is None:
            continue
        comp, observed, current = found
        test = planned_test(decisions, *members, runs, level)
        run = PowerRun(test, int(options["draws"]), int(options["seed"]))
        # effects as baseline - competitor (the simulation's contrast) and as the improvement
        # (positive = the competitor better); the smallest effect of interest first
        effects = []
        if options.get("min_effect") is not None:
            size = abs(float(options["min_effect"])) / 100.0  # power is symmetric in the sign
            effects.append(("min_effect", size, size))
        effects.append(("observed (post hoc)", observed, -data.sign() * observed))
        subset = f"{members[0]} vs {members[1]}"
        base = {"metric": data.metric, "subset": subset, "alpha": test.level}
        sequential = data.options["sequential"]
        for source, effect, improvement in effects:
            result = plan(comp, effect, current, run, TARGETS, int(options["max_runs"]))
            rows += _rows(comp, result, improvement, source, base)
            proposed = sequential_rows(
                comp,
                effect,
                test,
                str(sequential["spending"]),
                sequential.get("futility"),
                int(options["max_runs"]),
            )
            head = {**_head(comp, improvement, source, base), "alpha": test.plan_alpha}
            rows += [{**head, **row} for row in proposed]
    return {PLANNING: pd.DataFrame(rows, columns=columns(PLANNING))}
