"""The decision: any number of systems, ranked, and one record per claim (docs/method.md §4c).

One REML fit of all systems (model M, §4c.1) gives the model means, every pairwise contrast,
the family's adjusted p and intervals from one procedure (§4c.5, §4c.10), the verdicts, the
group letters and the rank intervals. What each pair's contrast estimates follows from its runs
(§4c.4): systems over retraining, a system against a single output, or two outputs; no run is
ever picked by its test score. Every claim is a :class:`~infrepro.core.decisions.PairDecision`
(``decisions.csv``, §4c.11); ``summary.csv`` holds the per-system view (means, groups, ranks).
Pure functions on the engine's fits.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from infrepro.analyses.common.data import MetricData, best_runs, run_means
from infrepro.analyses.common.fitlog import FitLog
from infrepro.analyses.common.smalltests import ddf_method
from infrepro.analyses.comparison import shared_facets
from infrepro.analyses.decision.model import (
    Contrast,
    DecisionModel,
    Estimate,
    calibrate,
    estimates_of,
    fit_decision_model,
    mean_rows,
)
from infrepro.analyses.decision.pairtests import (
    BAND,
    RATIO_LEVEL,
    T_TEST,
    PairTest,
    Ratio,
    RunVariance,
    t_test,
)
from infrepro.core.decisions import (
    BETTER,
    BONFERRONI,
    DIRECTIONAL,
    FAMILIES,
    FAMILY_ALL,
    FAMILY_BASELINE,
    HOLM,
    MAX_T,
    NOT_SHOWN,
    NOT_SHOWN_TO_SURVIVE,
    ONE_RUN,
    OUTPUTS,
    REVERSED,
    STEP_DOWN,
    SURVIVES,
    SYSTEMS,
    VS_OUTPUT,
    WORSE,
    PairDecision,
    band_assumption,
    choice,
    estimand_text,
    interval_kind,
    level_text,
    single_look,
)
from infrepro.core.registry import PLANNING, SUMMARY
from infrepro.core.schema import defaults
from infrepro.core.vocabulary import (
    LOOKS_TABLE,
    NOT_CONVERGED,
    RUN,
    SYSTEM,
    columns,
    facet_aware_formula,
)
from infrepro.stats.calibrated import DEFAULT_SUPPORT
from infrepro.stats.letters import compact_letters
from infrepro.stats.pvalues import format_p, holm_log10
from infrepro.stats.runcounts import holds_level, too_few_runs

if TYPE_CHECKING:
    from infrepro.analyses.decision.looks import Sequential

RANK_DRAWS = 2000
NO_VERDICT = "the decision model did not converge: no verdict is read from it (§4.6.1)"


# -- the family's procedure (§4c.5, §4c.10) -------------------------------------------------------
@dataclass(frozen=True)
class Adjusted:
    """A contrast adjusted over its family: log10 adjusted p, the critical value that makes its
    interval (estimate ± critical · se) and the marginal level it is significant below (the
    level its power is computed at)."""

    log10_p: float
    critical: float
    level: float
    method: str = MAX_T  # the procedure it came from: max-t, bonferroni or holm


def adjust_family(
    contrasts: list[Contrast],
    covariance: Callable[[], np.ndarray] | None,
    adjust: str,
    alpha: float,
    log10_p: list[float] | None = None,
) -> list[Adjusted]:
    """Adjusted p and critical values of a family's contrasts (``covariance``: their covariance
    from M, computed only when max-t needs it). ``step-down``: §4c.10's step-down, each
    interval at its step's level. ``holm``: Holm's step-down on the marginal p,
    each test's critical value at α (unadjusted intervals). ``max-t``: when every contrast is
    M's t, the single-step max-t of §4c.10 with the contrasts' correlation (emmeans' ``mvt``);
    otherwise single-step Bonferroni (§4c.10); either way each test's critical value is at its
    marginal level, so that its interval excludes 0 exactly when its adjusted p is below α. The
    marginal p may be given (``log10_p``: the facet-aware reading), else each test's own."""
    if not contrasts:
        return []
    if adjust == STEP_DOWN:
        return _step_down(contrasts, covariance, alpha, log10_p)
    plain = log10_p is None and all(c.test.kind == T_TEST for c in contrasts)
    if adjust == HOLM:
        marginal = [c.log10_p for c in contrasts] if log10_p is None else list(log10_p)
        first = alpha / len(contrasts)  # Holm's first step: the level its power is at
        return [
            Adjusted(float(p), c.test.critical(alpha), first, HOLM)
            for p, c in zip(holm_log10(marginal), contrasts, strict=True)
        ]
    if not plain:
        # A family with tests other than M's t (calibrated, moderated, Berger-Boos; or the
        # facet-aware reading): their joint law is not M's multivariate t, and max-t on M's
        # correlation was liberal there (family-wise 0.062-0.114 at 5 and 10 systems, §4c.10).
        # Single-step Bonferroni holds whatever the dependence (the union bound over tests that
        # each hold their level) and keeps interval ⇔ verdict: each at level α / m.
        m = len(contrasts)
        marginal = [c.log10_p for c in contrasts] if log10_p is None else list(log10_p)
        level = alpha / m
        return [
            Adjusted(min(0.0, float(p) + math.log10(m)), c.test.critical(level), level, BONFERRONI)
            for p, c in zip(marginal, contrasts, strict=True)
        ]
    from infrepro.stats.simultaneous import max_t

    assert covariance is not None
    corr = _correlation(covariance())
    t = np.array([c.delta.estimate / c.delta.se for c in contrasts])
    df = np.array([c.df for c in contrasts])
    result = max_t(t, df, corr, alpha)  # every contrast M's t: emmeans' adjust = "mvt" exactly
    return [
        Adjusted(
            float(p),
            float(q) if c.test.kind == T_TEST else c.test.critical(float(level)),
            float(level),
        )
        for p, q, level, c in zip(
            result.log10_p_adjusted, result.critical, result.level, contrasts, strict=True
        )
    ]


def _correlation(cov: np.ndarray) -> np.ndarray:
    sd = np.sqrt(np.diag(cov))
    return cov / np.outer(sd, sd)


def _step_down(
    contrasts: list[Contrast],
    covariance: Callable[[], np.ndarray] | None,
    alpha: float,
    log10_p: list[float] | None,
) -> list[Adjusted]:
    """The step-down of §4c.10: M's t tests (unless the marginal p are given) form the max-t
    block, read at ν' with their correlation from M; every other test enters by the union
    bound. Each interval is its own test's at the level of the step that decided it."""
    from infrepro.stats.simultaneous import block_levels, marginal_critical, max_t
    from infrepro.stats.stepdown import step_down, step_levels

    m = len(contrasts)
    marginal = np.array([c.log10_p for c in contrasts] if log10_p is None else log10_p, float)
    members = [i for i, c in enumerate(contrasts) if log10_p is None and c.test.kind == T_TEST]
    joint, u_block, nu = np.full(m, np.nan), np.full(m, np.nan), np.full(m, np.nan)
    if members:
        assert covariance is not None
        corr = _correlation(covariance()[np.ix_(members, members)])
        t = np.array([contrasts[i].delta.estimate / contrasts[i].delta.se for i in members])
        df = np.array([contrasts[i].df for i in members])
        block = max_t(t, df, corr, alpha)
        marginal[members], joint[members], nu[members] = (
            block.log10_p,
            block.log10_p_adjusted,
            block.df_used,
        )
    steps = step_down(marginal, joint, alpha)
    if members:
        _, u_block[members] = block_levels(corr, df, alpha, steps.others[members])
    levels = step_levels(steps, ~np.isnan(joint), u_block, alpha)
    return [
        Adjusted(
            float(steps.log10_p_adjusted[i]),
            c.test.critical(float(level))
            if np.isnan(nu[i])
            else marginal_critical(float(nu[i]), float(level)),  # at ν', as the block reads it
            float(level),
            STEP_DOWN,
        )
        for i, (c, level) in enumerate(zip(contrasts, levels, strict=True))
    ]


# -- settings --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Settings:
    """The choices of the decision: family and adjustment (§4c.5), α, the smallest effect of
    interest (points; NaN: none declared), rank draws and their seed."""

    family: str = field(default_factory=lambda: str(defaults("analyses")["comparisons"]))
    adjust: str = field(default_factory=lambda: str(defaults("analyses")["adjust"]))
    alpha: float = field(default_factory=lambda: float(defaults("report")["alpha"]))
    min_effect: float = math.nan
    runs: RunVariance = field(
        default_factory=lambda: RunVariance.of(defaults("analyses")["run_variance"])
    )
    draws: int = RANK_DRAWS
    seed: int = 0

    def __post_init__(self) -> None:
        choice("analyses.comparisons", self.family, FAMILIES)


def settings_of(options: Mapping[str, object]) -> Settings:
    """The settings from the analysis options (``alpha`` is the report's, passed along)."""
    min_effect = options[PLANNING].get("min_effect")  # type: ignore[attr-defined]
    return Settings(
        family=str(options["comparisons"]),
        adjust=str(options["adjust"]),
        alpha=float(options["alpha"]),  # type: ignore[arg-type]
        min_effect=math.nan if min_effect is None else float(min_effect),  # type: ignore[arg-type]
        runs=RunVariance.of(options["run_variance"]),  # type: ignore[arg-type]
        seed=int(options["bootstrap"]["seed"]),  # type: ignore[index]
    )


# -- the records ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Context:
    """What every record of one metric shares."""

    metric: str
    sign: int
    settings: Settings
    converged: bool
    best: dict[str, float]  # best run's mean score per system
    dev_selected: bool  # best runs selected by dev score (not by test score)
    ratios: dict[tuple[str, str], Ratio] = field(default_factory=dict)
    prior_df: float = math.nan  # the moderation's prior df (NaN: not moderated)
    unsupported: tuple[str, ...] = ()  # systems whose variance the prior does not support


def family_contrasts(model: DecisionModel, family: str) -> list[Contrast]:
    """The contrasts of a family: with the baseline (first system) or all pairs."""
    if family == FAMILY_BASELINE:
        return [p for p in model.pairs if p.reference == model.systems[0]]
    return list(model.pairs)


def records(
    model: DecisionModel,
    family: str,
    ctx: Context,
    facet: Mapping[str, Contrast] | None = None,
) -> list[PairDecision]:
    """The decision records of one family (§4c.11); ``facet``: the facet-aware contrasts of
    pairs with the baseline, keyed by the other system (§4c.5)."""
    contrasts = family_contrasts(model, family)
    if not contrasts:
        return []
    L = np.vstack([c.row for c in contrasts])
    cov = functools.cache(lambda: model.fit.contrast_cov(L, model.method))
    alpha = ctx.settings.alpha
    adjusted = adjust_family(contrasts, cov, ctx.settings.adjust, alpha)
    facet_adjusted: list[Adjusted] = []
    if facet:
        base = model.systems[0]
        marginal = [
            facet[c.system].log10_p if c.reference == base and c.system in facet else c.log10_p
            for c in contrasts
        ]
        facet_adjusted = adjust_family(contrasts, cov, ctx.settings.adjust, alpha, marginal)
    out = []
    for i, c in enumerate(contrasts):
        facet_p = None
        if facet and facet_adjusted and c.reference == model.systems[0] and c.system in facet:
            own = facet[c.system]
            facet_p = (own.delta.estimate, facet_adjusted[i].log10_p, own.delta.df)
        out.append(_record(model, family, len(contrasts), c, adjusted[i], ctx, facet_p))
    return out


def _record(
    model: DecisionModel,
    family: str,
    size: int,
    c: Contrast,
    adjusted: Adjusted,
    ctx: Context,
    facet: tuple[float, float, float] | None,
) -> PairDecision:
    """One record: the contrast in the metric's direction, its interval and verdict."""
    s, alpha = ctx.sign, ctx.settings.alpha
    runs_ref, runs_sys = model.runs[c.reference], model.runs[c.system]
    improvement = s * c.delta.estimate
    half = adjusted.critical * c.test.se
    lower, upper = improvement - half, improvement + half
    significant = adjusted.log10_p < math.log10(alpha)
    ratio = ctx.ratios.get((c.reference, c.system))
    notes = _ratio_notes(ratio, c.test, ctx.settings.runs)
    if c.comparison in (SYSTEMS, VS_OUTPUT):
        notes += _moderation_notes(c.reference, c.system, ctx.unsupported)
    if not ctx.converged:
        verdict = NOT_CONVERGED
        notes.append(NO_VERDICT)
    elif not significant:
        verdict = NOT_SHOWN
    else:
        verdict = BETTER if improvement > 0 else WORSE
    generalises = _generalises(facet, verdict, s * improvement, alpha)
    assumption = _assumption(verdict, c.test, size, alpha, ctx.settings.runs)
    best_vs_best = s * (ctx.best[c.system] - ctx.best[c.reference])
    effect = ctx.settings.min_effect / 100.0
    return PairDecision(
        metric=ctx.metric,
        family=family,
        family_size=size,
        adjust=adjusted.method,
        reference=c.reference,
        system=c.system,
        runs_reference=runs_ref,
        runs_system=runs_sys,
        comparison=c.comparison,
        estimand=estimand_text(c.comparison, c.reference, c.system, runs_ref),
        improvement=improvement,
        se=c.test.se,
        df=c.df,
        df_method=model.method,
        test=c.test.name,
        statistic=improvement / c.test.se,
        critical=adjusted.critical,
        lower=lower,
        upper=upper,
        interval=interval_kind(adjusted.method, alpha),
        level=adjusted.level,
        p_value=format_p(c.log10_p),
        log10_p=c.log10_p,
        p_adjusted=format_p(adjusted.log10_p),
        log10_p_adjusted=adjusted.log10_p,
        verdict=verdict,
        assumption=assumption,
        generalises=generalises,
        facet_aware_p=format_p(facet[1]) if facet else "",
        log10_facet_aware_p=facet[1] if facet else math.nan,
        facet_aware_df=facet[2] if facet else math.nan,
        run_sd_ratio=ratio.ratio if ratio else math.nan,
        run_sd_ratio_lower=ratio.lower if ratio else math.nan,
        run_sd_ratio_upper=ratio.upper if ratio else math.nan,
        band=ctx.settings.runs.band if c.comparison == SYSTEMS else math.nan,
        prior_df=ctx.prior_df if c.comparison == SYSTEMS else math.nan,
        survival=_survival(verdict, improvement, best_vs_best, ctx, runs_ref, runs_sys),
        best_vs_best=best_vs_best,
        min_effect=ctx.settings.min_effect,
        power=c.test.power(effect, adjusted.level),
        # one look (docs/method.md §4e.10): a look column lets ``looks.Sequential`` revise these
        **single_look(runs_ref, runs_sys),  # type: ignore[arg-type]
        few_runs=few_runs_note(c.reference, runs_ref, c.system, runs_sys, alpha),
        model=model.record_formula(ctx.metric),
        note="; ".join(notes),
    )


def _assumption(verdict: str, test: PairTest, size: int, alpha: float, runs: RunVariance) -> str:
    """The assumption a directional verdict rests on (§4c.5): a calibrated test's verdict that
    Berger and Boos' test of the same statistic (valid at any run-SD ratio), Bonferroni-adjusted
    over the family, does not reach rests on the band; '' for every other verdict."""
    if verdict not in DIRECTIONAL or test.kind != BAND:
        return ""
    any_ratio = min(0.0, test.any_ratio_log10_p + math.log10(size))
    return "" if any_ratio < math.log10(alpha) else band_assumption(runs.band)


def _generalises(
    facet: tuple[float, float, float] | None, verdict: str, signed: float, alpha: float
) -> bool:
    """Both the verdict and the facet-aware test are significant in the same direction (§4c.5);
    ``signed``: the improvement times the metric's sign, as the facet's estimate is."""
    return bool(
        facet is not None
        and verdict in DIRECTIONAL
        and facet[1] < math.log10(alpha)
        and facet[0] * signed > 0
    )


def few_runs_note(
    reference: str, n_reference: int, system: str, n_system: int, alpha: float
) -> str:
    """Why the pair's run counts cannot carry a claim that rests on each system's own runs (a
    run-level slope of the inputs note, §4b.6 "Run counts"); '' when they can."""
    if holds_level(n_reference, n_system, alpha):
        return ""
    return too_few_runs(reference, n_reference, system, n_system, alpha)


def _ratio_notes(ratio: Ratio | None, test: PairTest, runs: RunVariance) -> list[str]:
    """What the record says of a run-SD ratio outside the band: the test it took (Berger-Boos),
    or, short of that, that the band is in doubt and how to test at any ratio."""
    if ratio is not None and ratio.outside:
        return [
            f"the run-mean SD ratio's {1 - runs.beta:.1%} interval lies outside the band "
            f"(≤ {runs.band:g}): Berger-Boos' test, valid at any ratio"
        ]
    if ratio is not None and ratio.beyond(runs.band) and test.kind == BAND:
        return [
            f"the run-mean SD ratio {ratio.ratio:.3g} ({level_text(RATIO_LEVEL)} CI "
            f"{ratio.lower:.3g}-"
            f"{ratio.upper:.3g}) lies outside the band the test assumes (≤ {runs.band:g}); "
            "analyses.run_variance.berger_boos: true gives a test valid at any ratio"
        ]
    return []


def _moderation_notes(reference: str, system: str, unsupported: tuple[str, ...]) -> list[str]:
    """That the moderation's prior does not support the run-mean variance of a system of the
    pair, which keeps it from shrinking below its own (§4b.12)."""
    names = [s for s in (reference, system) if s in unsupported]
    if not names:
        return []
    quantile = f"{100 * DEFAULT_SUPPORT:g} %"
    return [
        f"the run-mean variance of {' and '.join(names)} lies above the {quantile} quantile "
        "the moderation's prior allows: not shrunk below its own"
    ]


def _survival(
    verdict: str, improvement: float, best_vs_best: float, ctx: Context, n_a: int, n_b: int
) -> str:
    """Whether best vs best's direction survives retraining (§4b.6): only with dev-selected
    best runs and a selection to make (a side with two or more runs)."""
    if not ctx.dev_selected or max(n_a, n_b) < 2 or best_vs_best == 0 or verdict == NOT_CONVERGED:
        return ""
    if verdict not in DIRECTIONAL:
        return NOT_SHOWN_TO_SURVIVE
    return SURVIVES if improvement * best_vs_best > 0 else REVERSED


def runs_named(subset: str, runs_of: str) -> str:
    """A fit's ``subset`` in the diagnostics, with the earlier look's runs it is on (§4e.12)."""
    return f"{subset}, {runs_of}" if runs_of else subset


# -- facet-aware reading ---------------------------------------------------------------------------
def facet_aware_pairs(
    data: MetricData, log: FitLog, model: DecisionModel, runs_of: str = ""
) -> dict[str, Contrast]:
    """For each `systems` comparison with the baseline whose runs share facet levels, the
    facet-aware model of §4b.2 on the pair's rows (REML, t with the df of §4b.4), keyed by the
    competitor (§4c.5: the second reading a general claim needs); ``runs_of`` (``runs of looks
    1-2``) names an earlier look's runs in the diagnostics."""
    out = {}
    base = model.systems[0]
    for pair in model.pairs:
        if pair.reference != base or pair.comparison != SYSTEMS:
            continue
        members = [base, pair.system]
        rows = data.rows_of(systems=members)
        groups = {s: shared_facets(data, rows, s) for s in members}
        groups = {s: g for s, g in groups.items() if g}
        if not groups:
            continue
        formula = facet_aware_formula(data.metric, members, groups)
        subset = runs_named(f"{pair.system} vs {base}", runs_of)
        fitted = log.fit(
            formula,
            rows,
            reml=True,
            analysis=SUMMARY,
            subset=subset,
            reference_levels={SYSTEM: base},
        )
        if fitted is None:
            continue
        L = fitted.contrast_matrix({f"{SYSTEM}{pair.system}": 1.0})
        estimates = estimates_of(log, fitted, ddf_method(fitted), L, [subset])
        if estimates is not None:
            estimate = estimates[0]
            test = t_test(estimate.estimate, estimate.se, estimate.df, ddf_method(fitted))
            out[pair.system] = Contrast(base, pair.system, SYSTEMS, estimate, L[0], test)
    return out


# -- the per-system view ---------------------------------------------------------------------------
def rank_intervals(
    model: DecisionModel, sign: int, draws: int, seed: int
) -> dict[str, tuple[int, int]]:
    """2.5 % and 97.5 % quantiles (inverted_cdf) of each system's rank (1 = best) over
    parametric draws β* ~ N(β̂, Cov(β̂)) of M, μ* = L β*, ranked by sign · μ* (§4c.7)."""
    fitted = model.fit
    L = mean_rows(fitted, model.systems)
    rng = np.random.default_rng(seed)
    beta = rng.multivariate_normal(
        fitted.fixed_effects.to_numpy(), fitted.fixed_cov.to_numpy(), size=draws, method="cholesky"
    )
    scores = sign * (beta @ L.T)
    ranks = np.argsort(np.argsort(-scores, axis=1, kind="stable"), axis=1) + 1
    out = {}
    for j, system in enumerate(model.systems):
        low, high = np.quantile(ranks[:, j], [0.025, 0.975], method="inverted_cdf")
        out[system] = (int(low), int(high))
    return out


def group_letters(
    systems: list[str], means: Mapping[str, Estimate], decided: list[PairDecision], sign: int
) -> dict[str, str]:
    """Letters of ``systems`` (rows best first, insertion by increasing model mean, multcomp's
    order), separated by the directional verdicts among ``decided`` (§4c.6)."""
    if not systems:
        return {}
    members = set(systems)
    separated = [
        (d.reference, d.system)
        for d in decided
        if d.directional and {d.reference, d.system} <= members
    ]
    by_mean = sorted(systems, key=lambda s: means[s].estimate)
    best_first = sorted(systems, key=lambda s: -sign * means[s].estimate)
    return compact_letters(best_first, by_mean, separated)


def letters_apart(
    model: DecisionModel, all_pairs: list[PairDecision], sign: int
) -> tuple[dict[str, str], dict[str, str]]:
    """The systems' letters from their `systems` records and the single-run systems' output
    letters (upper case) from their `outputs` records (§4c.6)."""
    multi = [s for s in model.systems if model.runs[s] >= 2]
    single = [s for s in model.systems if model.runs[s] < 2]
    # a letter says which members of a set no verdict separates: none for a set of one
    multi, single = (group if len(group) > 1 else [] for group in (multi, single))
    groups = group_letters(
        multi, model.means, [d for d in all_pairs if d.comparison == SYSTEMS], sign
    )
    outputs = group_letters(
        single, model.means, [d for d in all_pairs if d.comparison == OUTPUTS], sign
    )
    return groups, {s: v.swapcase() for s, v in outputs.items()}


def best_run_orders(
    best: Mapping[str, float], all_pairs: list[PairDecision], sign: int
) -> dict[str, tuple[int, int]]:
    """Per system: how many systems its best run beats (sign · (best_S − best_T) > 0), and how
    many of those orders a directional verdict of the `all_pairs` records confirms (§4c.8)."""
    winners = {frozenset((d.reference, d.system)): d.winner for d in all_pairs if d.directional}
    out = {}
    for s in best:
        wins = [t for t in best if sign * (best[s] - best[t]) > 0]
        confirmed = [t for t in wins if winners.get(frozenset((s, t))) == s]
        out[s] = (len(wins), len(confirmed))
    return out


def _run_columns(data: MetricData, picked: pd.DataFrame) -> dict[str, dict[str, object]]:
    """runs, mean and SD of the run means, the best run (``picked``: ``best_runs``), its
    score and how it was selected."""
    means = run_means(data)
    best = dict(picked[[SYSTEM, RUN]].itertuples(index=False))
    how = dict(picked[[SYSTEM, "selected_by"]].itertuples(index=False))
    out: dict[str, dict[str, object]] = {}
    for system in data.systems:
        own = means[means[SYSTEM] == system]
        scores = own["mean"].astype(float)
        single = len(own) < 2
        out[system] = {
            "runs": len(own),
            "run_mean": float(scores.mean()),
            "run_sd": float(scores.std(ddof=1)) if not single else float("nan"),
            "best_run": best[system],
            "best_run_score": float(own.loc[own[RUN] == best[system], "mean"].iloc[0]),
            "best_run_selected_by": "" if single else str(how[system]),
        }
    return out


def _mean_columns(mean: Estimate, single: bool) -> dict[str, float]:
    """The model mean with its interval; a single-run system's is its output's mean, with no
    interval (§4c.2)."""
    lower, upper = (math.nan, math.nan) if single else mean.interval
    return {
        "model_mean": mean.estimate,
        "model_se": math.nan if single else mean.se,
        "model_df": math.nan if single else mean.df,
        "model_lower": lower,
        "model_upper": upper,
    }


# -- the analysis ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class MetricDecision:
    """One metric's decision: the per-system rows and the records of every family decided (the
    named family's and, with `baseline`, all pairs' behind the letters; :func:`summary_tables`
    writes the named family's, §4c.5)."""

    summary: pd.DataFrame
    records: list[PairDecision]


Revision = Callable[[list[PairDecision], DecisionModel], list[PairDecision]]


@dataclass(frozen=True)
class Decided:
    """The fixed-look decision of one set of runs (§4c): model M, what its records share, the
    per-system run columns, and the records of all pairs and of the named family (the same
    list with ``all_pairs``)."""

    model: DecisionModel
    ctx: Context
    runs: dict[str, dict[str, object]]
    all_pairs: list[PairDecision]
    named: list[PairDecision]

    @property
    def records(self) -> list[PairDecision]:
        """Every record decided: the named family's, then (with ``baseline``) all pairs'."""
        return self.named if self.named is self.all_pairs else self.named + self.all_pairs


def fixed_look(
    data: MetricData, log: FitLog, settings: Settings, runs_of: str = ""
) -> Decided | None:
    """Model M fitted on ``data`` and the records of its families, each pair's verdict at the
    fixed-look level (§4c); None when M fails or holds fewer than two systems. ``runs_of``
    (``runs of looks 1-2``) names an earlier look's runs in the diagnostics (§4e.12)."""
    model = fit_decision_model(data, log, runs_named("all systems", runs_of))
    if model is None or len(model.systems) < 2:
        return None
    picked = best_runs(data)
    runs = _run_columns(data, picked)
    ratios, prior_df, unsupported = calibrate(model, data, settings.runs)
    ctx = Context(
        metric=log.metric,
        sign=data.sign(),
        settings=settings,
        converged=bool(model.fit.converged),
        best={s: float(runs[s]["best_run_score"]) for s in model.systems},  # type: ignore[arg-type]
        dev_selected=not bool(picked["optimistic"].any()),
        ratios=ratios,
        prior_df=prior_df,
        unsupported=unsupported,
    )
    facet = facet_aware_pairs(data, log, model, runs_of)
    all_pairs = records(model, FAMILY_ALL, ctx, facet)
    named = (
        all_pairs if settings.family == FAMILY_ALL else records(model, settings.family, ctx, facet)
    )
    return Decided(model, ctx, runs, all_pairs, named)


def decide(
    data: MetricData, log: FitLog, settings: Settings, revise: Revision | None = None
) -> MetricDecision:
    """The decision of one metric (§4c): ``summary.csv``'s rows, best system first, and the
    records of the named family and, for the letters, of all pairs. ``revise`` (the sequential
    looks of §4e.10, ``looks.Sequential``) replaces each family's records before the letters
    and orders are drawn from them."""
    empty = MetricDecision(pd.DataFrame(columns=columns(SUMMARY)), [])
    fixed = fixed_look(data, log, settings)
    if fixed is None:
        return empty
    model, ctx, runs = fixed.model, fixed.ctx, fixed.runs
    sign = ctx.sign
    all_pairs, named = fixed.all_pairs, fixed.named
    if revise is not None:
        all_pairs = revise(all_pairs, model)
        named = all_pairs if settings.family == FAMILY_ALL else revise(named, model)
    decided = named if settings.family == FAMILY_ALL else named + all_pairs
    groups, outputs = letters_apart(model, all_pairs, sign)
    ranks = rank_intervals(model, sign, settings.draws, settings.seed)
    orders = best_run_orders(ctx.best, all_pairs, sign)
    rows = []
    for system in model.systems:
        single = model.runs[system] < 2
        notes = [ONE_RUN] if single and len(model.systems) > 1 else []
        if not ctx.converged:
            notes.append(NO_VERDICT)
        rows.append(
            {
                "metric": log.metric,
                SYSTEM: system,
                **runs[system],
                **_mean_columns(model.means[system], single),
                "group": groups.get(system, ""),
                "output_group": outputs.get(system, ""),
                "rank_lower": ranks[system][0],
                "rank_upper": ranks[system][1],
                "best_run_rank": 1
                + sum(sign * v > sign * ctx.best[system] for v in ctx.best.values()),
                "best_run_wins": orders[system][0],
                "best_run_wins_confirmed": orders[system][1],
                "model": model.record_formula(log.metric),
                "df_method": model.method,
                "note": "; ".join(notes),
            }
        )
    table = pd.DataFrame(rows)
    order = np.argsort(-sign * table["model_mean"].to_numpy(), kind="stable")
    table = table.iloc[order].reset_index(drop=True)
    table["rank"] = np.arange(1, len(table) + 1)
    return MetricDecision(table[columns(SUMMARY)], decided)


def sequential_path(data: MetricData, log: FitLog, settings: Settings) -> Sequential | None:
    """The sequential path of the decision (§4e.10; None when the runs are one look), with the
    fixed-look decision of an earlier look's runs for the pairs with one look of their own
    (§4e.12)."""
    from infrepro.analyses.decision.looks import sequential_of

    def read_then(part: MetricData, runs_of: str) -> list[PairDecision]:
        fixed = fixed_look(part, log, settings, runs_of)
        return [] if fixed is None else fixed.records

    return sequential_of(data, log, settings.alpha, read_then)


def summary_tables(data: MetricData, log: FitLog) -> dict[str, pd.DataFrame]:
    """The summary analysis' tables (its registry entry): the per-system decision table, the
    decision records of the named family (`analyses.comparisons`; with `baseline`, the all-pairs
    records behind the letters are not written, §4c.5) and, when the runs declare looks, their
    look history (§4e.10)."""
    settings = settings_of(data.options)
    sequential = sequential_path(data, log, settings)
    decision = decide(data, log, settings, sequential)
    named = [r.row() for r in decision.records if r.family == settings.family]
    frame = pd.DataFrame(named, columns=columns("decisions"))
    if sequential is None:
        looks = pd.DataFrame(columns=columns(LOOKS_TABLE))
    else:
        looks = sequential.table()
        looks = looks[looks["family"] == settings.family].reset_index(drop=True)
    return {SUMMARY: decision.summary, "decisions": frame, LOOKS_TABLE: looks}
