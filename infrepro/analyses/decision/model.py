"""Model M (docs/method.md §4c.1): one REML fit of all systems, its means and every pairwise
contrast, and the calibrated test of each pair of multi-run systems (§4b.11, §4b.12). The
decision (``summary``) and its sequential looks (``looks``) both read it."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import numpy as np

from infrepro.analyses.common.data import MetricData
from infrepro.analyses.common.fitlog import FitLog
from infrepro.analyses.common.smalltests import ddf_method, fitted_but, no_df, t_quantile
from infrepro.analyses.decision.pairtests import (
    RUN_MEANS,
    T_TEST,
    PairTest,
    Ratio,
    RunVariance,
    calibrated_test,
    ratio_of,
    run_means_test,
    t_test,
    variances,
)
from infrepro.core.decisions import (
    SYSTEMS,
    VS_OUTPUT,
    comparison_of,
)
from infrepro.core.registry import SUMMARY
from infrepro.core.vocabulary import (
    RUN,
    SYSTEM,
    decision_formula,
    decision_record_model,
)
from infrepro.lmm import LmmError, LmmResult
from infrepro.stats.pvalues import t_log10_two_sided


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
class Contrast:
    """One pair's contrast in M: Δ = μ_system − μ_reference (stored scale), the row of L and
    its marginal test (a t test with the contrast's df; for two multi-run systems, the
    calibrated one of ``pairtests``)."""

    reference: str
    system: str
    comparison: str
    delta: Estimate
    row: np.ndarray = field(repr=False)
    test: PairTest = field(repr=False)

    @property
    def log10_p(self) -> float:
        """The marginal two-sided p of its test (log10)."""
        return self.test.log10_p

    @property
    def df(self) -> float:
        """The df the pair is read with: its t test's (M's; for a "vs single output" pair the
        run means', §4c.4), else M's contrast's."""
        return self.test.df if self.test.kind in (T_TEST, RUN_MEANS) else self.delta.df


@dataclass
class DecisionModel:
    """Model M fitted, with its means, every pair's contrast and the df method."""

    formula: str
    fit: LmmResult
    method: str
    systems: list[str]
    runs: dict[str, int]
    means: dict[str, Estimate] = field(default_factory=dict)
    pairs: list[Contrast] = field(default_factory=list)

    def pair(self, a: str, b: str) -> Contrast:
        """The contrast of the unordered pair {a, b}."""
        return next(p for p in self.pairs if {p.reference, p.system} == {a, b})

    def record_formula(self, metric: str) -> str:
        """M as the tables name it (decisions.csv and summary.csv ``model``): its per-system
        run terms written once as their rule, so that a row does not grow with the systems
        (the fitted formula, each term spelled, is diagnostics.csv's)."""
        return decision_record_model(metric, [s for s in self.systems if self.runs[s] >= 2])


def mean_rows(fitted: LmmResult, systems: list[str]) -> np.ndarray:
    """L with row l_S = e_(Intercept) + e_systemS (the baseline, first, is the intercept)."""
    rows = [{"(Intercept)": 1.0}] + [{"(Intercept)": 1.0, f"{SYSTEM}{s}": 1.0} for s in systems[1:]]
    return fitted.contrast_matrix(rows)


def run_counts(data: MetricData) -> dict[str, int]:
    """Runs per system."""
    counts = data.evaluation.groupby(SYSTEM, observed=True)[RUN].nunique()
    return {s: int(counts.get(s, 0)) for s in data.systems}


def fit_decision_model(
    data: MetricData, log: FitLog, subset: str = "all systems"
) -> DecisionModel | None:
    """Fit M on every row (REML, baseline as reference) and estimate its means and all pairs
    (``subset``: how the diagnostics name the rows, e.g. the runs of a look, §4e.10)."""
    runs = run_counts(data)
    formula = decision_formula(data.metric, [s for s in data.systems if runs[s] >= 2])
    fitted = log.fit(
        formula,
        data.evaluation,
        reml=True,
        analysis=SUMMARY,
        subset=subset,
        reference_levels=data.reference_levels,
    )
    if fitted is None:
        return None
    return decision_model(log, fitted, data.systems, runs)


def decision_model(
    log: FitLog, fitted: LmmResult, systems: list[str], runs: Mapping[str, int]
) -> DecisionModel | None:
    """The model means and every pairwise contrast of a fit of M (baseline first in
    ``systems``, each pair's reference the earlier system); None (recorded) if a df fails."""
    model = DecisionModel(fitted.formula, fitted, ddf_method(fitted), systems, dict(runs))
    L = mean_rows(fitted, systems)
    pairs = list(itertools.combinations(range(len(systems)), 2))
    rows = np.vstack([L, *(L[j] - L[i] for i, j in pairs)])
    names = [*systems, *(f"{systems[j]} vs {systems[i]}" for i, j in pairs)]
    estimates = estimates_of(log, fitted, model.method, rows, names)
    if estimates is None:
        return None
    n = len(systems)
    model.means = dict(zip(systems, estimates[:n], strict=True))
    for (i, j), delta, row in zip(pairs, estimates[n:], rows[n:], strict=True):
        a, b = systems[i], systems[j]
        kind = comparison_of(runs[a], runs[b])
        test = t_test(delta.estimate, delta.se, delta.df, model.method)
        test = replace(test, log10_p=t_log10_p(delta))
        model.pairs.append(Contrast(a, b, kind, delta, row, test))
    return model


def estimates_of(
    log: FitLog, fitted: LmmResult, method: str, rows: np.ndarray, subsets: list[str]
) -> list[Estimate] | None:
    """l'β̂ of each row with its SE and df by ``method``, all rows' df in shared products (the
    p comes from ``t_log10_p``, which never underflows); None, the first failing row recorded
    under its name in ``subsets``, if a df fails."""
    try:
        with np.errstate(all="ignore"):
            tests = fitted.contest_rows(rows, method)
    except (LmmError, np.linalg.LinAlgError, ValueError) as err:
        log.skip(SUMMARY, subsets[0], "", f"{fitted_but(fitted)} its small-sample df failed: {err}")
        return None
    for test, subset in zip(tests, subsets, strict=True):
        if not (math.isfinite(test.dendf) and test.dendf > 0 and test.se > 0):
            log.skip(SUMMARY, subset, "", f"{fitted_but(fitted)} {no_df(test.dendf, fitted)}")
            return None
    return [Estimate(test.estimate, test.se, test.dendf) for test in tests]


def t_log10_p(estimate: Estimate) -> float:
    """log10 of the two-sided t p-value of estimate / se with its df, never -inf
    (``pvalues.t_log10_two_sided``)."""
    return t_log10_two_sided(estimate.estimate / estimate.se, estimate.df)


# -- the calibrated tests of two multi-run systems (§4b.11, §4b.12) ---------------------------
def calibrate(
    model: DecisionModel, data: MetricData, options: RunVariance
) -> tuple[dict[tuple[str, str], Ratio], float, tuple[str, ...]]:
    """Give every ``systems`` contrast of M its calibrated test (moderated where at least
    three systems have two or more runs) and every ``vs output`` contrast its run-means t; the
    run-mean SD ratio of each ``systems`` pair, the prior df of the moderation (NaN when there
    is none) and the systems whose variance the prior does not support (not shrunk below their
    own, §4b.12)."""
    if not any(c.comparison in (SYSTEMS, VS_OUTPUT) for c in model.pairs):
        return {}, math.nan, ()
    var = variances(model.fit, data, model.runs, options)
    ratios: dict[tuple[str, str], Ratio] = {}
    pairs = []
    for c in model.pairs:
        if c.comparison == VS_OUTPUT:
            multi = c.reference if model.runs[c.reference] >= 2 else c.system
            c = replace(c, test=run_means_test(c.delta.estimate, multi, model.runs, var))
        if c.comparison == SYSTEMS:
            ratio = ratio_of(c.reference, c.system, model.runs, var, options)
            ratios[(c.reference, c.system)] = ratio
            test = calibrated_test(
                c.delta.estimate,
                c.delta.se,
                c.reference,
                c.system,
                model.runs,
                var,
                options,
                ratio.outside,
            )
            c = replace(c, test=test)
        pairs.append(c)
    model.pairs = pairs
    return ratios, var.prior_df, var.unsupported
