"""System comparisons conditional on a data property (paper eq. 6-7, thesis ch. 2;
docs/method.md §4.2, §4b).

For each property d, two model families side by side:
- the paper's (ML GLRTs, no run terms; conditional on these trained runs): the joint test
  (system main effect and interaction) and the interaction-only test;
- the run-aware one the report concludes from: a REML fit of ``score ~ system * d + (1|s) +
  <run intercepts per system> + (0 + d_c | run_id)`` (runs with their own slopes on d centred
  at its mean, d_c; ``(1|run_id:d)`` for a categorical d), its joint and interaction F tests and
  every post-hoc number with Kenward-Roger or Satterthwaite df.
Post-hoc: per-level slopes and prediction bands for numeric d; model cell means and within-level
pairwise comparisons (Holm-adjusted; the decision family's pairs of systems unless
``analyses.conditional_pairs`` asks for all) for binned or categorical d. Numeric and categorical
properties form each metric's Holm family of property tests; binned versions are descriptive.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from infrepro.analyses.common.data import MetricData, distinct_count, distinct_strings
from infrepro.analyses.common.effects import effect_scale
from infrepro.analyses.common.fitlog import FitLog
from infrepro.analyses.common.glrt import holm_within, run_glrt
from infrepro.analyses.common.smalltests import (
    contest,
    contest_rows,
    method_label,
    t_quantile,
    test_row,
)
from infrepro.core.decisions import CONDITIONAL_PAIRS, FAMILIES, FAMILY_ALL, choice
from infrepro.core.registry import CONDITIONAL, INTERACTION_SUFFIX, JOINT_SUFFIX, RUN_AWARE_SUFFIX
from infrepro.core.vocabulary import (
    RUN,
    RUN_TERM,
    SYSTEM,
    centred,
    columns,
    property_formulas,
    run_terms,
    runaware_property_formula,
)
from infrepro.lmm import LmmResult
from infrepro.stats.effects import EffectScale, effect_label
from infrepro.stats.pvalues import format_p, normal_log10_two_sided

GRID_POINTS = 25
Z95 = 1.959963984540054


def conditional_analyses(data: MetricData, log: FitLog) -> dict[str, pd.DataFrame]:
    """All conditional tests of one metric over every property (all runs)."""
    tables = _Tables(data.binned_columns)
    if len(data.systems) < 2:
        log.skip(CONDITIONAL, "", "", "only one system: nothing to compare")
        return tables.frames()
    tables.scale = effect_scale(data, log)
    every_pair = compares_every_pair(data.options)
    for variant, rows, dropped in property_rows(data, data.evaluation):
        if dropped:  # its models are fitted on the other rows: a note, not a skip
            log.note(
                CONDITIONAL,
                "all runs",
                f"{dropped} rows without a value of {variant} left out of its models",
                prop=variant,
            )
        cell = Cell(SYSTEM, variant, CONDITIONAL, "all runs", data.baseline, every_pair)
        factor_analysis(data, log, tables, rows, cell)
    return tables.frames()


def compares_every_pair(options: Mapping[str, object]) -> bool:
    """Whether the within-bin contrasts compare every pair of systems or only the pairs with
    the baseline (``analyses.conditional_pairs``: the decision family's, or all; §4.2.3)."""
    chosen = choice("analyses.conditional_pairs", options["conditional_pairs"], CONDITIONAL_PAIRS)
    family = choice("analyses.comparisons", options["comparisons"], FAMILIES)
    return FAMILY_ALL in (chosen, family)


def _centre(rows: pd.DataFrame, prop: str) -> pd.Series:
    """A numeric property centred at its mean over ``rows`` (the run slopes' d_c)."""
    values = rows[prop].astype(float)
    return values - float(values.mean())


def property_rows(data: MetricData, rows: pd.DataFrame) -> Iterator[tuple[str, pd.DataFrame, int]]:
    """Every property variant (data.property_variants), the rows with a value of it, and how
    many rows lack one.

    Variants with a value on every row share one frame, which has the centred numeric
    properties added once (the fits to one frame share their data preparation, FitLog); a
    variant with missing values gets its own frame.
    """
    complete = [p for p in data.properties if data.is_numeric(p) and not rows[p].isna().any()]
    shared = rows.assign(**{centred(p): _centre(rows, p) for p in complete})
    for prop in data.properties:
        for variant in data.property_variants(prop):
            dropped = int(rows[variant].isna().sum())
            yield variant, (rows.dropna(subset=[variant]) if dropped else shared), dropped


class _Tables:
    """Row collectors for the tables a conditional analysis writes."""

    def __init__(self, binned: frozenset[str] = frozenset()) -> None:
        self.binned = binned  # the binned properties' columns: descriptive, not Holm-adjusted
        self.glrt: list[dict[str, object]] = []
        self.means: list[dict[str, object]] = []
        self.contrasts: list[dict[str, object]] = []
        self.slopes: list[dict[str, object]] = []
        self.predictions: list[dict[str, object]] = []
        self.tests: list[dict[str, object]] = []
        self.scale = EffectScale(math.nan, "")

    def frames(self) -> dict[str, pd.DataFrame]:
        contrasts = pd.DataFrame(self.contrasts)
        if not contrasts.empty:
            contrasts = holm_within(contrasts, ["metric", "analysis", "subset", "property"])
        return {
            "glrt": _property_family(pd.DataFrame(self.glrt), self.binned),
            "tests": _property_family(pd.DataFrame(self.tests), self.binned),
            "means": pd.DataFrame(self.means),
            "contrasts": contrasts,
            "slopes": pd.DataFrame(self.slopes, columns=columns("slopes")),
            "predictions": pd.DataFrame(self.predictions, columns=columns("predictions")),
        }


def _property_family(table: pd.DataFrame, binned_columns: frozenset[str]) -> pd.DataFrame:
    """Holm over each metric's property tests (per analysis and subset); binned versions
    are descriptive and keep their unadjusted p."""
    if table.empty:
        return table
    binned = table["property"].isin(binned_columns)
    tested = holm_within(table[~binned], ["metric", "analysis", "subset"])
    return pd.concat([tested, table[binned]]).sort_index()


@dataclass(frozen=True)
class Cell:
    """One ``factor`` x ``prop`` analysis: the factor (system or a facet), the property
    variant, the analysis and subset it reports under, and the factor's reference level."""

    factor: str
    prop: str
    analysis: str
    subset: str
    reference: str
    every_pair: bool = True  # within-bin contrasts of every pair of levels, else with reference


def factor_analysis(
    data: MetricData, log: FitLog, tables: _Tables, rows: pd.DataFrame, cell: Cell
) -> None:
    """Joint and interaction tests of ``factor`` x ``prop`` and the post-hoc tables, from the
    paper's models and from the run-aware model."""
    factor, prop, analysis, subset = cell.factor, cell.prop, cell.analysis, cell.subset
    if distinct_count(rows, factor) < 2:
        log.skip(analysis, subset, prop, f"{factor} has fewer than two levels in these rows")
        return
    if distinct_count(rows, prop) < 2:
        log.skip(analysis, subset, prop, f"{prop} is constant in these rows")
        return
    numeric = data.is_numeric(prop) and pd.api.types.is_numeric_dtype(rows[prop])
    if numeric and centred(prop) not in rows:  # the run-aware slope's d_c (property_rows)
        rows = rows.assign(**{centred(prop): _centre(rows, prop)})
    models = property_formulas(data.metric, factor, prop)
    joint, interaction = (
        run_glrt(
            log,
            rows,
            models["h1"],
            models[h0],
            analysis=analysis + suffix,
            subset=subset,
            prop=prop,
            facet=factor if factor != SYSTEM else "",
            reference_levels={factor: cell.reference},
        )
        for suffix, h0 in ((JOINT_SUFFIX, "h0_joint"), (INTERACTION_SUFFIX, "h0_interaction"))
    )
    for outcome in (joint, interaction):
        if outcome is not None:
            tables.glrt.append(outcome.row)
    levels = _levels(rows, factor, cell.reference)
    fits = [(analysis, joint.h1 if joint is not None else None)]
    run_aware = run_aware_fit(data, log, tables, rows, cell, numeric)
    fits.append((analysis + RUN_AWARE_SUFFIX, run_aware))
    for name, fitted in fits:
        if fitted is None:
            continue
        post = _PostHoc(
            metric=data.metric,
            fitted=fitted,
            rows=rows,
            factor=factor,
            prop=prop,
            levels=levels,
            analysis=name,
            subset=subset,
            scale=tables.scale,
            bin_column=data.bin_column(prop),
            every_pair=cell.every_pair,
            log=log if name.endswith(RUN_AWARE_SUFFIX) else None,
        )
        if numeric:
            post.slopes(tables)
            post.predictions(tables)
        else:
            post.cells(tables, _ordered_bins(rows, prop, data.bin_order.get(prop, [])))


def run_aware_fit(
    data: MetricData, log: FitLog, tables: _Tables, rows: pd.DataFrame, cell: Cell, numeric: bool
) -> LmmResult | None:
    """The REML run-aware fit of ``factor * prop`` and its joint and interaction F tests."""
    factor, prop, analysis, subset = cell.factor, cell.prop, cell.analysis, cell.subset
    name = analysis + RUN_AWARE_SUFFIX
    if distinct_count(rows, RUN) <= distinct_count(rows, factor):
        log.skip(name, subset, prop, f"every level of {factor} has a single run: no run variance")
        return None
    fitted = fit_run_aware(
        log,
        data.metric,
        rows,
        factor,
        prop,
        numeric,
        analysis=name,
        subset=subset,
        reference=cell.reference,
    )
    if fitted is None:
        return None
    main = fitted.term_columns(factor)
    inter = fitted.term_columns(factor, prop)
    facet = factor if factor != SYSTEM else ""
    for suffix, coefficients, hypothesis in (
        (JOINT_SUFFIX, main + inter, f"{factor} and {factor}:{prop} effects = 0"),
        (INTERACTION_SUFFIX, inter, f"{factor}:{prop} effects = 0"),
    ):
        L = fitted.contrast_matrix([{c: 1.0} for c in coefficients])
        test = contest(log, fitted, L, analysis=name + suffix, subset=subset, prop=prop)
        if test is not None:
            tables.tests.append(
                test_row(
                    log,
                    test,
                    fitted,
                    rows,
                    analysis=name + suffix,
                    hypothesis=hypothesis,
                    subset=subset,
                    prop=prop,
                    facet=facet,
                )
            )
    return fitted


def fit_run_aware(
    log: FitLog,
    metric: str,
    rows: pd.DataFrame,
    factor: str,
    prop: str,
    numeric: bool,
    *,
    analysis: str,
    reference: str,
    subset: str = "",
) -> LmmResult | None:
    """The REML run-aware model of ``factor * prop`` fitted to ``rows`` (its run terms from
    ``run_intercepts``, ``reference`` the level of ``factor`` the effects are against); None,
    recorded in the log, when it cannot be fitted. The analyses' and the calibration's fit."""
    formula = runaware_property_formula(metric, factor, prop, numeric, run_intercepts(rows, factor))
    return log.fit(
        formula,
        rows,
        reml=True,
        analysis=analysis,
        subset=subset,
        prop=prop,
        reference_levels={factor: reference},
    )


def run_intercepts(rows: pd.DataFrame, factor: str) -> str:
    """A run variance per level of ``factor`` (per system, per level of a facet) when every
    level has at least two runs, else one shared ``(1|run_id)`` (docs/method.md §4b.3)."""
    runs_per_level = rows.groupby(factor, sort=False, observed=True)[RUN].nunique()
    if bool((runs_per_level >= 2).all()):
        return run_terms([str(level) for level in runs_per_level.index], False, factor)
    return RUN_TERM


def _levels(rows: pd.DataFrame, factor: str, reference: str) -> list[str]:
    present = sorted(distinct_strings(rows[factor]))
    return [reference] + [lev for lev in present if lev != reference]


def wald(estimate: float, variance: float) -> tuple[float, float, float, float]:
    """Estimate, SE, z and two-sided log10 p of an estimate with its variance."""
    se = math.sqrt(max(variance, 0.0))
    if se <= 0:
        return estimate, se, math.nan, math.nan
    z = estimate / se
    return estimate, se, z, normal_log10_two_sided(z)


def wald_rows(
    weights: np.ndarray | sp.csr_matrix, fitted: LmmResult
) -> list[tuple[float, float, float, float]]:
    """``wald`` of each row's linear combination ``weights @ beta`` (one product for all)."""
    estimates, variances = fitted.combinations(weights)
    return [wald(float(e), float(v)) for e, v in zip(estimates, variances, strict=True)]


def difference_rows(x: np.ndarray, pairs: list[tuple[int, int]]) -> sp.csr_matrix:
    """x_i - x_j for each pair (i, j) of rows of ``x``, sparse: two cells of a bin share every
    column but their levels', so a difference has a few non-zeros. Every pair of a
    meta-parameter's levels within a bin (300 levels: 134,000 pairs a fit) then costs its
    non-zeros x p in ``LmmResult.combinations``, not a dense row of p weights times the p x p
    covariance (58 of a 117 s job)."""
    first, second = (np.array(side, dtype=np.int64) for side in zip(*pairs, strict=True))
    cells = sp.csr_matrix(x)
    return sp.csr_matrix(cells[first] - cells[second])


@dataclass(frozen=True)
class _PostHoc:
    """Post-hoc tables of one ``factor * prop`` fit: slopes, prediction bands, cell means."""

    metric: str
    fitted: LmmResult
    rows: pd.DataFrame
    factor: str
    prop: str
    levels: list[str]
    analysis: str
    subset: str
    scale: EffectScale
    bin_column: str  # the binned property's column (data.bin_column: names are internal)
    every_pair: bool = True  # else only the pairs with the reference level (levels[0])
    log: FitLog | None = None  # set for run-aware fits: t tests with small-sample df

    def tests(
        self, weights: np.ndarray | sp.csr_matrix
    ) -> list[tuple[float, float, float, float, float, str]]:
        """Estimate, SE, statistic, df, log10 p and method of each row's ``weights @ beta``:
        Wald z for the paper's fits (sparse rows stay sparse), t with Kenward-Roger /
        Satterthwaite df for run-aware fits (all rows' tests at once: their number grows with
        the square of the levels)."""
        if self.log is None:
            return [
                (estimate, se, z, math.nan, log10_p, "Wald z")
                for estimate, se, z, log10_p in wald_rows(weights, self.fitted)
            ]
        if sp.issparse(weights):
            weights = weights.toarray()
        results = contest_rows(
            self.log,
            self.fitted,
            weights,
            analysis=self.analysis,
            subset=self.subset,
            prop=self.prop,
        )
        out = []
        for w, result in zip(weights, results, strict=True):
            if result is None:
                estimate, se, _, _ = wald_rows(w[None, :], self.fitted)[0]
                out.append((estimate, se, math.nan, math.nan, math.nan, "not computed"))
                continue
            out.append(
                (
                    result.estimate,
                    result.se,
                    result.statistic,
                    result.dendf,
                    result.log10_p,
                    method_label(result),
                )
            )
        return out

    def key(self) -> dict[str, object]:
        """The columns every row of these tables starts with."""
        return {
            "metric": self.metric,
            "analysis": self.analysis,
            "subset": self.subset,
            "facet": self.factor if self.factor != SYSTEM else "",
            "property": self.prop,
        }

    def slopes(self, tables: _Tables) -> None:
        """The slope of ``prop`` for every level of ``factor`` (reference + interaction)."""
        names = list(self.fitted.fixed_effects.index)
        weights = np.zeros((len(self.levels), len(names)))
        weights[:, names.index(self.prop)] = 1.0
        for i, level in enumerate(self.levels[1:], start=1):
            weights[i, names.index(f"{self.factor}{level}:{self.prop}")] = 1.0
        for level, (slope, se, statistic, df, log10_p, method) in zip(
            self.levels, self.tests(weights), strict=True
        ):
            tables.slopes.append(
                {
                    **self.key(),
                    "group": level,
                    "slope": slope,
                    "se": se,
                    "statistic": statistic,
                    "df": df,
                    "method": method,
                    "p_value": format_p(log10_p),
                    "log10_p": log10_p,
                }
            )

    def predictions(self, tables: _Tables) -> None:
        """Prediction lines with 95 % bands over the property's range, and binned raw means."""
        values = self.rows[self.prop].to_numpy(dtype=float)
        grid = np.linspace(*np.quantile(values, [0.01, 0.99]), GRID_POINTS)
        newdata = pd.DataFrame(
            {
                self.factor: np.repeat(self.levels, GRID_POINTS),
                self.prop: np.tile(grid, len(self.levels)),
            }
        )
        predicted = self.fitted.predict(newdata)
        quantiles = np.full(len(newdata), Z95)
        if self.log is not None:  # t quantiles with each point's small-sample df
            x = self.fitted.design_matrix(newdata)
            for i, test in enumerate(self.tests(x)):
                df = test[3]
                quantiles[i] = t_quantile(df) if math.isfinite(df) else math.nan
        for (level, x), (estimate, se), q in zip(
            newdata[[self.factor, self.prop]].itertuples(index=False),
            predicted[["estimate", "se"]].itertuples(index=False),
            quantiles,
            strict=True,
        ):
            tables.predictions.append(
                {
                    **self.key(),
                    "group": level,
                    "x": float(x),
                    "estimate": float(estimate),
                    "se": float(se),
                    "lower": float(estimate - q * se),
                    "upper": float(estimate + q * se),
                }
            )
        bin_column = self.bin_column
        if self.log is not None or bin_column not in self.rows:
            return
        observed = self.rows.groupby([self.factor, bin_column], sort=False).agg(
            x=(self.prop, "mean"),
            estimate=(self.metric, "mean"),
            sd=(self.metric, "std"),
            n_obs=(self.metric, "size"),
        )
        for (level, bin_name), row in observed.iterrows():
            tables.means.append(
                {
                    **self.key(),
                    "bin": bin_name,
                    "group": level,
                    "kind": "observed",
                    "x": float(row["x"]),
                    "estimate": float(row["estimate"]),
                    "se": float(row["sd"] / math.sqrt(row["n_obs"])),
                    "n_obs": int(row["n_obs"]),
                }
            )

    def cells(self, tables: _Tables, bins: list[str]) -> None:
        """Model cell means and within-bin pairwise comparisons of the factor's levels (every
        pair, or each level with the reference)."""
        counts = self.rows.groupby([self.factor, self.prop]).size()
        present = [(lev, b) for b in bins for lev in self.levels if counts.get((lev, b), 0) > 0]
        cells = pd.DataFrame(present, columns=[self.factor, self.prop])
        x = self.fitted.design_matrix(cells)
        for (level, b), (estimate, se, _, _) in zip(
            present, wald_rows(x, self.fitted), strict=True
        ):
            tables.means.append(
                {
                    **self.key(),
                    "bin": b,
                    "group": level,
                    "kind": "model",
                    "x": math.nan,
                    "estimate": estimate,
                    "se": se,
                    "n_obs": int(counts.get((level, b), 0)),
                }
            )
        index = {cell: i for i, cell in enumerate(present)}
        pairs = [
            (b, first, second)
            for b in bins
            for first, second in itertools.combinations(self.levels, 2)
            if (first, b) in index
            and (second, b) in index
            and (self.every_pair or first == self.levels[0])
        ]
        if not pairs:
            return
        weights = difference_rows(x, [(index[(f, b)], index[(s, b)]) for b, f, s in pairs])
        for (b, first, second), test in zip(pairs, self.tests(weights), strict=True):
            difference, se, _, df, log10_p, method = test
            d = self.scale.d(difference)
            tables.contrasts.append(
                {
                    **self.key(),
                    "bin": b,
                    "level1": first,
                    "level2": second,
                    "estimate": difference,
                    "se": se,
                    "p_value": format_p(log10_p),
                    "p_holm": "",
                    "log10_p": log10_p,
                    "log10_p_holm": math.nan,
                    "p_method": method,
                    "df": df,
                    "effect_size": d,
                    "effect_sd": self.scale.sd,
                    "effect_label": effect_label(d),
                }
            )


def _ordered_bins(rows: pd.DataFrame, prop: str, order: list[str]) -> list[str]:
    """Levels present in the rows: bins in their defined order, other categories sorted."""
    present = distinct_strings(rows[prop])
    ordered = [b for b in order if b in present]
    return ordered + sorted(present - set(ordered))
