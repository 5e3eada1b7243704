"""The decision table: any number of systems, ranked, with intervals (docs/method.md §4c).

One REML fit of all systems (model M, §4c.1) gives the model means with Kenward-Roger (or
Satterthwaite) intervals, every pairwise contrast, the improvement over the baseline in the
metric's own direction, the group letters and the rank intervals. A pair with a single-run
side is the segment-level comparison of outputs (§4c.4), with the borrowed-variance test as a
sensitivity line; where the runs share facet levels, the facet-aware model gives the second
reading a general claim needs (§4c.5). The best-run ranking's pairwise orders are checked
against M (§4c.8). Pure functions on the engine's fits; ``decision_table`` returns the rows of
``summary.csv``.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from infrepro.lmm import LmmError, LmmResult
from infrepro.registry import SUMMARY
from infrepro.runcounts import NOT_JUDGED, holds_level, too_few_runs
from infrepro.schema import defaults
from infrepro.vocabulary import (
    COMPARISON_COLUMN,
    NOT_CONVERGED,
    RUN,
    SYSTEM,
    columns,
    comparison_formulas,
    decision_formula,
    facet_aware_formula,
    headline_formula,
)

from .comparison import shared_facets
from .data import MetricData, best_runs, run_means
from .fitlog import FitLog
from .letters import compact_letters
from .pvalues import format_p, holm_log10, t_log10_two_sided
from .smalltests import ddf_method, t_quantile

RUN_AWARE = "run-aware"
OUTPUTS = "outputs"
OUTPUTS_BEST = "outputs (best run)"
FACET_AWARE = "facet-aware"
ONE_RUN = (
    "one run: this compares these outputs on these segments; "
    "how it varies with retraining is unknown"
)
GENERALISES = ", generalises"  # the facet-aware reading agrees: beyond these settings
NO_VERDICT = "the decision model did not converge: no verdict is read from it (§4.6.1)"
FAMILIES = ("baseline", "all_pairs")
RANK_DRAWS = 2000


@dataclass(frozen=True)
class Estimate:
    """An estimate with its SE and df; ``interval`` is the 95 % t interval."""

    estimate: float
    se: float
    df: float

    @property
    def interval(self) -> tuple[float, float]:
        """estimate -/+ t_{0.975, df} se."""
        half = t_quantile(self.df) * self.se
        return self.estimate - half, self.estimate + half


@dataclass(frozen=True)
class Sensitivity:
    """The borrowed-variance test of a pair with one single-run side (§4c.4)."""

    log10_p: float
    df: float
    ratio: float  # r*: the run-variance ratio at which it stops being significant
    run_sd: float  # the single-run system's run SD at which it stops being significant


@dataclass(frozen=True)
class PairTest:
    """A pairwise comparison, Δ = μ_first − μ_second, with its test and kind (§4c.4)."""

    first: str
    second: str
    kind: str
    delta: Estimate
    log10_p: float
    model: str
    sensitivity: Sensitivity | None = None


@dataclass
class DecisionModel:
    """Model M fitted, with its means, pairs (raw) and the df method."""

    formula: str
    fit: LmmResult
    method: str
    systems: list[str]
    means: dict[str, Estimate] = field(default_factory=dict)
    pairs: list[PairTest] = field(default_factory=list)


def mean_rows(fitted: LmmResult, systems: list[str]) -> np.ndarray:
    """L with row l_S = e_(Intercept) + e_systemS (the baseline, first, is the intercept)."""
    rows = [{"(Intercept)": 1.0}] + [{"(Intercept)": 1.0, f"{SYSTEM}{s}": 1.0} for s in systems[1:]]
    return fitted.contrast_matrix(rows)


def fit_decision_model(data: MetricData, log: FitLog) -> DecisionModel | None:
    """Fit M on every row (REML, baseline as reference) and test its means and all pairs."""
    counts = data.evaluation.groupby(SYSTEM, observed=True)[RUN].nunique()
    single = {s for s in data.systems if counts.get(s, 0) < 2}
    formula = decision_formula(data.metric, [s for s in data.systems if s not in single])
    fitted = log.fit(
        formula,
        data.evaluation,
        reml=True,
        analysis=SUMMARY,
        subset="all systems",
        reference_levels=data.reference_levels,
    )
    if fitted is None:
        return None
    return decision_model(log, fitted, data.systems, single)


def decision_model(
    log: FitLog, fitted: LmmResult, systems: list[str], single: set[str]
) -> DecisionModel | None:
    """The model means and all pairwise contrasts of a fit of M (baseline first in
    ``systems``; ``single``: the systems with one run); None (recorded) if a df fails."""
    model = DecisionModel(fitted.formula, fitted, ddf_method(fitted), systems)
    L = mean_rows(fitted, systems)
    for system, row in zip(systems, L, strict=True):
        mean = _estimate(log, fitted, model.method, row, system)
        if mean is None:
            return None
        model.means[system] = mean
    for i, j in itertools.combinations(range(len(systems)), 2):
        a, b = systems[i], systems[j]
        delta = _estimate(log, fitted, model.method, L[i] - L[j], f"{a} vs {b}")
        if delta is None:
            return None
        kind = OUTPUTS if {a, b} <= single else RUN_AWARE
        model.pairs.append(PairTest(a, b, kind, delta, _t_log10_p(delta), fitted.formula))
    return model


def _estimate(
    log: FitLog, fitted: LmmResult, method: str, row: np.ndarray, subset: str
) -> Estimate | None:
    """l'β̂ with its SE and df by ``method`` (the p comes from ``_t_log10_p``, which never
    underflows); None (recorded) if the df fails."""
    try:
        with np.errstate(all="ignore"):
            test = fitted.contest(row[None, :], method)
    except (LmmError, np.linalg.LinAlgError, ValueError) as err:
        log.skip(SUMMARY, subset, "", f"small-sample df on {fitted.formula} failed: {err}")
        return None
    if not (math.isfinite(test.dendf) and test.dendf > 0 and test.se > 0):
        log.skip(SUMMARY, subset, "", f"small-sample df on {fitted.formula}: {test.dendf:.4g}")
        return None
    return Estimate(test.estimate, test.se, test.dendf)


def outputs_pair(
    data: MetricData, log: FitLog, pair: PairTest, best: dict[str, str], alpha: float
) -> PairTest | None:
    """A pair with one single-run side: the segment-level comparison of the single run's
    output with the other system's best run, ``score ~ system + (1|s)`` (REML, t with the df of
    §4b.4), plus the borrowed-variance sensitivity test."""
    a, b = pair.first, pair.second
    rows = data.rows_of(runs=[best[a], best[b]])
    formula = comparison_formulas(data.metric, run_aware=False)[0]
    test = _pair_test(data, log, rows, formula, a, b)
    if test is None:
        return None
    pooled = headline_formula(data.metric, [a, b], pooled=True)
    borrowed = _pair_test(data, log, data.rows_of(systems=[a, b]), pooled, a, b)
    sensitivity = None
    if borrowed is not None:
        estimate, fitted = borrowed
        run_var = float(fitted.reported_components.get(RUN, np.nan))
        sensitivity = Sensitivity(
            _t_log10_p(estimate),
            estimate.df,
            critical_ratio(estimate, run_var, alpha),
            critical_run_sd(estimate, run_var, alpha),
        )
    estimate = test[0]
    return PairTest(a, b, OUTPUTS_BEST, estimate, _t_log10_p(estimate), formula, sensitivity)


def _pair_test(
    data: MetricData, log: FitLog, rows: pd.DataFrame, formula: str, a: str, b: str
) -> tuple[Estimate, LmmResult] | None:
    """The contrast a − b in a REML fit of ``formula`` on ``rows`` (reference a)."""
    subset = f"{a} vs {b}"
    fitted = log.fit(
        formula, rows, reml=True, analysis=SUMMARY, subset=subset, reference_levels={SYSTEM: a}
    )
    if fitted is None:
        return None
    L = fitted.contrast_matrix({f"{SYSTEM}{b}": -1.0})
    estimate = _estimate(log, fitted, ddf_method(fitted), L[0], subset)
    return None if estimate is None else (estimate, fitted)


def _t_log10_p(estimate: Estimate) -> float:
    """log10 of the two-sided t p-value of estimate / se with its df, never -inf."""
    return t_log10_two_sided(estimate.estimate / estimate.se, estimate.df)


def critical_ratio(delta: Estimate, run_var: float, alpha: float) -> float:
    """r* = 1 + ((Δ / t_{1−α/2, ν})² − V) / σ²_run: the single-run system's run variance, as a
    multiple of the pooled σ²_run, at which the borrowed-variance t stops being significant
    (V(r) = V + (r − 1) σ²_run, df held at ν). NaN when it is not significant at r = 1; inf
    when σ²_run is 0 (then see ``critical_run_sd``)."""
    extra = _critical_extra(delta, alpha)
    if math.isnan(extra) or not run_var >= 0:
        return float("nan")
    if run_var == 0:
        return float("inf")
    return 1.0 + extra / run_var


def critical_run_sd(delta: Estimate, run_var: float, alpha: float) -> float:
    """sqrt(r* σ²_run) = sqrt(σ²_run + (Δ / t)² − V): the same threshold as a run SD, in the
    metric's units (finite even when the pooled run variance is estimated as 0)."""
    extra = _critical_extra(delta, alpha)
    if math.isnan(extra) or not run_var >= 0:
        return float("nan")
    return math.sqrt(run_var + extra)


def _critical_extra(delta: Estimate, alpha: float) -> float:
    """(Δ / t_{1−α/2, ν})² − V, the variance the contrast can still absorb; NaN if the test is
    not significant."""
    crit = float(stats.t.ppf(1.0 - alpha / 2.0, delta.df))
    if not abs(delta.estimate / delta.se) >= crit:
        return float("nan")
    return (delta.estimate / crit) ** 2 - delta.se**2


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


def holm_pairs(pairs: list[PairTest]) -> dict[tuple[str, str], float]:
    """log10 Holm-adjusted p of each pair over the given family."""
    adjusted = holm_log10([p.log10_p for p in pairs])
    return {(p.first, p.second): float(v) for p, v in zip(pairs, adjusted, strict=True)}


def unjudged(pairs: list[PairTest], runs: dict[str, int], alpha: float) -> set[tuple[str, str]]:
    """The run-aware pairs whose run counts cannot carry a directional claim (§4b.6, run
    counts): they separate no groups and confirm no order, whatever their p."""
    out = set()
    for p in pairs:
        n = (runs.get(p.first, 0), runs.get(p.second, 0))
        if p.kind == RUN_AWARE and not holds_level(n[0], n[1], alpha):
            out.add((p.first, p.second))
    return out


def group_letters(
    systems: list[str],
    means: dict[str, Estimate],
    pairs: list[PairTest],
    sign: int,
    alpha: float,
    runs: dict[str, int] | None = None,
) -> dict[str, str]:
    """Letters over all pairs, Holm over k(k−1)/2 (§4c.6); rows best first, insertion by
    increasing model mean (multcomp's order). ``runs``: run counts per system, whose pairs
    that cannot hold the level separate nothing."""
    adjusted = holm_pairs(pairs)
    skip = unjudged(pairs, runs, alpha) if runs else set()
    separated = [k for k, v in adjusted.items() if v < math.log10(alpha) and k not in skip]
    by_mean = sorted(systems, key=lambda s: means[s].estimate)
    best_first = sorted(systems, key=lambda s: -sign * means[s].estimate)
    return compact_letters(best_first, by_mean, separated)


def decided_pairs(
    data: MetricData, log: FitLog, model: DecisionModel, alpha: float
) -> list[PairTest] | None:
    """M's pairs, with each pair that has exactly one single-run side replaced by the
    segment-level comparison of outputs (§4c.4)."""
    counts = data.evaluation.groupby(SYSTEM, observed=True)[RUN].nunique()
    best = dict(best_runs(data)[[SYSTEM, RUN]].itertuples(index=False))
    out = []
    for pair in model.pairs:
        singles = [counts.get(s, 0) < 2 for s in (pair.first, pair.second)]
        if sum(singles) == 1:
            replaced = outputs_pair(data, log, pair, best, alpha)
            if replaced is None:
                return None
            pair = replaced
        out.append(pair)
    return out


def facet_aware_pairs(
    data: MetricData, log: FitLog, against: list[PairTest]
) -> dict[str, PairTest]:
    """For each run-aware comparison with the baseline whose runs share facet levels, the
    facet-aware model of §4b.2 on the pair's rows (REML, t with the df of §4b.4), keyed by the
    competitor (§4c.5: the second reading a general claim needs)."""
    out = {}
    for pair in against:
        if pair.kind != RUN_AWARE:
            continue
        members = [pair.first, pair.second]
        rows = data.rows_of(systems=members)
        groups = {s: shared_facets(data, rows, s) for s in members}
        groups = {s: g for s, g in groups.items() if g}
        if not groups:
            continue
        formula = facet_aware_formula(data.metric, members, groups)
        found = _pair_test(data, log, rows, formula, pair.first, pair.second)
        if found is not None:
            estimate = found[0]
            out[pair.second] = PairTest(
                pair.first, pair.second, FACET_AWARE, estimate, _t_log10_p(estimate), formula
            )
    return out


def facet_reading(
    family: list[PairTest], facet: dict[str, PairTest], baseline: str
) -> dict[tuple[str, str], float]:
    """log10 Holm p over the same family with each facet-aware p in place of its per-system p
    (the pairs with the baseline that have one)."""
    return holm_pairs([facet.get(p.second, p) if p.first == baseline else p for p in family])


@dataclass(frozen=True)
class Settings:
    """The choices of the table: family (§4c.5), α, rank draws and their seed."""

    family: str = field(default_factory=lambda: str(defaults("analyses")["comparisons"]))
    alpha: float = field(default_factory=lambda: float(defaults("report")["alpha"]))
    draws: int = RANK_DRAWS
    seed: int = 0

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ValueError(f"analyses.comparisons: {self.family!r}; choose from {FAMILIES}")


def family_label(settings: Settings, k: int) -> str:
    """``Holm over 2, vs baseline`` / ``Holm over 3, all pairs``."""
    if settings.family == "baseline":
        return f"Holm over {k - 1}, vs baseline"
    return f"Holm over {k * (k - 1) // 2}, all pairs"


def summary_table(data: MetricData, log: FitLog) -> pd.DataFrame:
    """``decision_table`` with the settings of the analysis options: ``comparisons``, the
    report's ``alpha`` (passed as option ``alpha``) and ``bootstrap.seed`` for the rank draws."""
    settings = Settings(
        family=str(data.options["comparisons"]),
        alpha=float(data.options.get("alpha", defaults("report")["alpha"])),
        seed=int(data.options["bootstrap"]["seed"]),
    )
    return decision_table(data, log, settings)


def summary_tables(data: MetricData, log: FitLog) -> dict[str, pd.DataFrame]:
    """The summary analysis' tables (its registry entry): the decision table."""
    return {SUMMARY: summary_table(data, log)}


def decision_table(data: MetricData, log: FitLog, settings: Settings) -> pd.DataFrame:
    """The rows of ``summary.csv`` for one metric, best system first (§4c)."""
    model = fit_decision_model(data, log)
    pairs = None if model is None else decided_pairs(data, log, model, settings.alpha)
    if model is None or pairs is None or len(model.systems) < 2:
        return pd.DataFrame(columns=columns(SUMMARY))
    sign = data.sign()
    base = data.baseline
    against = [p for p in pairs if p.first == base]
    family = against if settings.family == "baseline" else pairs
    adjusted = holm_pairs(family)
    facet = facet_aware_pairs(data, log, against)
    facet_adjusted = facet_reading(family, facet, base)
    runs = _run_columns(data)
    counts = {s: int(str(runs[s]["runs"])) for s in model.systems}
    letters = group_letters(model.systems, model.means, pairs, sign, settings.alpha, counts)
    ranks = rank_intervals(model, sign, settings.draws, settings.seed)
    best = {s: float(runs[s]["best_run_score"]) for s in model.systems}
    skip = unjudged(pairs, counts, settings.alpha)
    orders = best_run_orders(best, model.means, pairs, sign, settings.alpha, skip)
    label = family_label(settings, len(model.systems))
    rows = []
    for system in model.systems:
        pair = next((p for p in against if p.second == system), None)
        reading = None
        if system in facet:
            reading = (-sign * facet[system].delta.estimate, facet_adjusted[(base, system)])
        row = {
            "metric": log.metric,
            SYSTEM: system,
            **runs[system],
            **_mean_columns(model.means[system]),
            **_improvement_columns(
                pair, adjusted, sign, settings.alpha, reading, pair_key(pair) not in skip
            ),
            "family": label if pair is not None else "",
            "group": letters[system],
            "rank_lower": ranks[system][0],
            "rank_upper": ranks[system][1],
            "best_run_rank": 1 + sum(sign * v > sign * best[system] for v in best.values()),
            "best_run_wins": orders[system][0],
            "best_run_wins_confirmed": orders[system][1],
            "model": model.formula,
            "df_method": model.method,
        }
        row["note"] = _note(system, counts, pair, settings.alpha, row["verdict"] == NOT_JUDGED)
        if pair is not None and not model.fit.converged:  # §4.6.1: no verdict from it
            row["verdict"] = NOT_CONVERGED
            row["note"] = "; ".join(filter(None, [row["note"], NO_VERDICT]))
        rows.append(row)
    table = pd.DataFrame(rows)
    order = np.argsort(-sign * table["model_mean"].to_numpy(), kind="stable")
    table = table.iloc[order].reset_index(drop=True)
    table["rank"] = np.arange(1, len(table) + 1)
    return table[columns(SUMMARY)]


def best_run_orders(
    best: dict[str, float],
    means: dict[str, Estimate],
    pairs: list[PairTest],
    sign: int,
    alpha: float,
    skip: set[tuple[str, str]] | None = None,
) -> dict[str, tuple[int, int]]:
    """Per system: how many systems its best run beats (sign · (best_S − best_T) > 0), and how
    many of those orders M confirms: the pair's Holm p over all pairs below α with
    sign · (μ_S − μ_T) > 0 (§4c.8), except the ``skip`` pairs (``unjudged``)."""
    adjusted = holm_pairs(pairs)
    separated = {
        frozenset(key)
        for key, v in adjusted.items()
        if v < math.log10(alpha) and key not in (skip or set())
    }
    out = {}
    for s in best:
        wins = [t for t in best if sign * (best[s] - best[t]) > 0]
        confirmed = [
            t
            for t in wins
            if frozenset((s, t)) in separated and sign * (means[s].estimate - means[t].estimate) > 0
        ]
        out[s] = (len(wins), len(confirmed))
    return out


def _run_columns(data: MetricData) -> dict[str, dict[str, object]]:
    """runs, mean and SD of the run means, the best run and its score, per system."""
    means = run_means(data)
    best = dict(best_runs(data)[[SYSTEM, RUN]].itertuples(index=False))
    out: dict[str, dict[str, object]] = {}
    for system in data.systems:
        own = means[means[SYSTEM] == system]
        scores = own["mean"].astype(float)
        out[system] = {
            "runs": len(own),
            "run_mean": float(scores.mean()),
            "run_sd": float(scores.std(ddof=1)) if len(own) > 1 else float("nan"),
            "best_run": best[system],
            "best_run_score": float(own.loc[own[RUN] == best[system], "mean"].iloc[0]),
        }
    return out


def _mean_columns(mean: Estimate) -> dict[str, float]:
    lower, upper = mean.interval
    return {
        "model_mean": mean.estimate,
        "model_se": mean.se,
        "model_df": mean.df,
        "model_lower": lower,
        "model_upper": upper,
    }


def _improvement_columns(
    pair: PairTest | None,
    adjusted: dict[tuple[str, str], float],
    sign: int,
    alpha: float,
    facet: tuple[float, float] | None,
    judged: bool = True,
) -> dict[str, object]:
    """improvement = sign · (μ_S − μ_B) = −sign · Δ(B, S), its CI, p and verdict (§4c.3);
    ``facet``: the facet-aware reading's (improvement, log10 adjusted p), if fitted;
    ``judged``: False when the pair's run counts cannot hold the level (``unjudged``)."""
    nan = float("nan")
    if pair is None:
        text = (COMPARISON_COLUMN, "p_value", "p_adjusted", "sensitivity_p", "facet_aware_p")
        numbers = [c for c in columns(SUMMARY) if c.startswith(("improvement", "sensitivity_"))]
        numbers += ["log10_p", "log10_p_adjusted", "log10_facet_aware_p"]
        return {
            **dict.fromkeys(numbers, nan),
            **dict.fromkeys(text, ""),
            "verdict": "baseline",
        }
    lower, upper = (-sign * v for v in pair.delta.interval)
    improvement = -sign * pair.delta.estimate
    log10_adj = adjusted[(pair.first, pair.second)]
    return {
        "improvement": improvement,
        "improvement_se": pair.delta.se,
        "improvement_df": pair.delta.df,
        "improvement_lower": min(lower, upper),
        "improvement_upper": max(lower, upper),
        COMPARISON_COLUMN: pair.kind,
        "p_value": format_p(pair.log10_p),
        "log10_p": pair.log10_p,
        "p_adjusted": format_p(log10_adj),
        "log10_p_adjusted": log10_adj,
        "verdict": verdict(pair.kind, improvement, log10_adj, alpha, facet, judged),
        "facet_aware_p": format_p(facet[1]) if facet else "",
        "log10_facet_aware_p": facet[1] if facet else nan,
        "sensitivity_p": format_p(pair.sensitivity.log10_p) if pair.sensitivity else "",
        "sensitivity_ratio": pair.sensitivity.ratio if pair.sensitivity else nan,
        "sensitivity_run_sd": pair.sensitivity.run_sd if pair.sensitivity else nan,
    }


def pair_key(pair: PairTest | None) -> tuple[str, str] | None:
    return None if pair is None else (pair.first, pair.second)


def _note(
    system: str, runs: dict[str, int], pair: PairTest | None, alpha: float, unjudged: bool
) -> str:
    """The one-run sentence, the run-count line of an unjudged pair (§4b.6) and the
    borrowed-variance sensitivity line (§4c.4)."""
    own = runs[system]
    parts = [ONE_RUN] if own < 2 else []
    if pair is not None and unjudged:
        a, b = pair.first, pair.second
        parts.append("not judged: " + too_few_runs(a, runs[a], b, runs[b], alpha))
    sens = pair.sensitivity if pair is not None else None
    if pair is not None and sens is not None:
        single = pair.first if own >= 2 else pair.second
        line = (
            f"sensitivity, not a verdict: borrowing the other system's run variance for "
            f"{single}, t({sens.df:.3g}), p = {format_p(sens.log10_p)}"
        )
        if math.isfinite(sens.run_sd):
            line += (
                f"; not significant once {single}'s run SD exceeds {sens.run_sd:.3g} "
                f"({100 * sens.run_sd:.3g} points)"
            )
        parts.append(line)
    return "; ".join(parts)


def verdict(
    kind: str,
    improvement: float,
    log10_p_adjusted: float,
    alpha: float,
    facet: tuple[float, float] | None = None,
    judged: bool = True,
) -> str:
    """``better``/``worse`` (``outputs better``/``outputs worse`` for outputs) when the
    adjusted p is below α, else ``not shown``; ``not judged (runs)`` when the run counts cannot
    hold the level. Where a facet-aware reading exists and is significant the same way:
    ``better, generalises`` (§4c.5, as the verdict rule §4b.6: the per-system reading decides,
    the facet-aware one never downgrades it)."""
    cut = math.log10(alpha)
    if not log10_p_adjusted < cut:
        return "not shown"
    if not judged:
        return NOT_JUDGED
    word = "better" if improvement > 0 else "worse"
    if kind != RUN_AWARE:
        return f"outputs {word}"
    if facet is not None and facet[1] < cut and facet[0] * improvement > 0:
        return f"{word}{GENERALISES}"
    return word
