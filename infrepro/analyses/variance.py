"""Variance component analysis per system (REML), reliability phi, the SDs of a system's mean
score across retraining and across meta-parameter settings, and the D-study (docs/method.md
§4.3, §4.4).

Two VCA models per system: the run-aware one, with the run term ``(1|run_id)`` (the
highest-order crossing of the facets), from which phi, the D-study and the SDs are read; and the
thesis' main-effects model (eq. 3.13), kept as the reproduction of the thesis' tables. Every row
names its model in the ``vca`` column.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import pandas as pd

from infrepro.analyses.common.agreement import krippendorff_alpha, reliability_matrix
from infrepro.analyses.common.data import MetricData
from infrepro.analyses.common.fitlog import FitLog
from infrepro.core.registry import VARIANCE
from infrepro.core.vocabulary import (
    CONVERGED,
    NOT_CONVERGED,
    RESIDUAL,
    RUN,
    SEGMENT,
    SYSTEM,
    VARIANCE_COLUMN,
    VCA_COLUMN,
    VCA_MAIN_EFFECTS,
    VCA_RUN_AWARE,
    columns,
    vca_formula,
)
from infrepro.lmm import LmmResult, parse_formula

KOO_LI = ((0.5, "poor"), (0.75, "moderate"), (0.9, "good"), (math.inf, "excellent"))
PHI_TARGET = 0.8

__all__ = ["dstudy_phi", "spread_sds", "variance_components", "vca_formula"]


def koo_li_label(phi: float) -> str:
    """Koo & Li (2016): < 0.5 poor, 0.5-0.75 moderate, 0.75-0.9 good, >= 0.9 excellent."""
    for bound, label in KOO_LI:
        if phi < bound:
            return label
    return "excellent"


def dstudy_phi(components: pd.Series, facets: Sequence[str], n: int) -> float:
    """phi when scores are averaged over n levels of every facet (thesis eq. 3.9).

    A component is divided by n to the number of facets it involves; the residual and the run
    term by n to the number of facets (a fully crossed average over n^k runs); the segment
    variance stays.
    """
    segment = float(components.get(SEGMENT, 0.0))
    error = 0.0
    for name, variance in components.items():
        if name == SEGMENT:
            continue
        involved = len(facets) if name in (RESIDUAL, RUN) else _facets_in(name, facets)
        error += float(variance) / n ** max(involved, 1)
    total = segment + error
    return segment / total if total > 0 else math.nan


@dataclass(frozen=True)
class Spread:
    """SDs of a run's mean test score in points (docs/method.md §4.4): retraining the same
    recipe (``retrain``), choosing the setting (``metaparam``), and the retraining components."""

    retrain: float
    metaparam: float
    retrain_components: str


def spread_sds(
    components: pd.Series,
    n_segments: int,
    retraining: Sequence[str],
    run_component: str = RUN,
) -> Spread:
    """Split the variance of a run's mean over ``n_segments`` segments into retraining and
    setting parts: retraining is the run term (``run_component``), the residual and every
    component involving a facet of ``retraining``; the other components are the setting.
    Per-segment components (the residual, ``segment_id:f``) are divided by ``n_segments``; the
    segment variance does not enter (the test set stays the same)."""
    retrain = setting = 0.0
    names = []
    for name, variance in components.items():
        if name == SEGMENT:
            continue
        pieces = _parts(str(name))
        per_segment = name == RESIDUAL or SEGMENT in pieces
        redrawn = name in (RESIDUAL, run_component) or any(p in retraining for p in pieces)
        share = float(variance) / (n_segments if per_segment else 1)
        if redrawn:
            retrain += share
        else:
            setting += share
        if redrawn:
            names.append(f"{name}/N" if per_segment else str(name))
    return Spread(100.0 * math.sqrt(retrain), 100.0 * math.sqrt(setting), ", ".join(names))


def _facets_in(term: str, facets: Sequence[str]) -> int:
    return max(1, sum(part in facets for part in _parts(term)))


def _parts(term: str) -> list[str]:
    return term.replace("/", ":").split(":")


def run_grouping(rows: pd.DataFrame, facets: Sequence[str], terms: Sequence[str]) -> str | None:
    """The model term whose levels are the runs (a facet with one run per level, or a crossing
    such as ``rater:occasion`` that identifies them), if there is one: then it is the run term
    and ``(1|run_id)`` would duplicate it."""
    n_runs = rows[RUN].nunique()
    candidates = [[f] for f in facets] + [_parts(t) for t in terms if SEGMENT not in _parts(t)]
    for parts in candidates:
        pairs = rows[[RUN, *parts]].drop_duplicates()
        if len(pairs) == n_runs and len(pairs[parts].drop_duplicates()) == n_runs:
            return ":".join(parts)
    return None


@dataclass(frozen=True)
class _Vca:
    """One VCA model of one system: its reported components (boundary terms at exactly 0,
    docs/method.md §4.6.1), whether they are a converged REML optimum, and level counts."""

    label: str
    formula: str
    components: pd.Series
    converged: bool
    ngroups: dict[str, int]
    nobs: int
    run_component: str
    identical: bool = False  # identical runs: the components the data show, no fit

    @classmethod
    def of(cls, label: str, formula: str, result: LmmResult, run_component: str) -> _Vca:
        return cls(
            label,
            formula,
            result.reported_components,
            result.converged,
            result.ngroups,
            result.nobs,
            run_component,
        )


def identical_runs(rows: pd.DataFrame, metric: str) -> bool:
    """All runs give the same score on every segment, and the metric is not constant: the
    REML criterion then has no minimum (docs/method.md §4.6.1)."""
    return rows[metric].nunique() > 1 and int(rows.groupby(SEGMENT)[metric].nunique().max()) == 1


def _identical_vca(
    label: str, formula: str, rows: pd.DataFrame, metric: str, run_component: str
) -> _Vca:
    """The components identical runs show without a fit: every facet, run and residual
    component 0; the segment component the limit of the REML estimates as sigma^2 -> 0 (where
    lme4 stops), sum_i d_i^2 / (N - 1), d_i = segment i's score - the mean of all N rows."""
    names = list(parse_formula(formula).random_names)
    scores = rows[metric].astype(float)
    deviations = rows.assign(d=scores - scores.mean()).groupby(SEGMENT)["d"].first()
    segment = float((deviations**2).sum() / (len(rows) - 1))
    values = [segment if name == SEGMENT else 0.0 for name in names] + [0.0]
    ngroups = {name: len(rows[_parts(name)].drop_duplicates()) for name in names}
    components = pd.Series(values, index=[*names, RESIDUAL], dtype=float)
    return _Vca(label, formula, components, False, ngroups, len(rows), run_component, True)


def _fits(data: MetricData, log: FitLog, system: str, rows: pd.DataFrame) -> list[_Vca]:
    """The run-aware and the main-effects VCA of one system (one fit when they coincide)."""
    facets = data.facets_of(system)
    extra = list(data.options["vca_interactions"])
    terms = [t for t in extra if all(p in [SEGMENT, *facets] for p in _parts(t))]
    main = vca_formula(data.metric, facets, terms)
    grouping = run_grouping(rows, facets, terms)
    aware = main if grouping is not None else vca_formula(data.metric, facets, terms, True)
    run_component = grouping if grouping is not None else RUN
    if identical_runs(rows, data.metric):
        log.note(VARIANCE, system, IDENTICAL_RUNS)
        return [
            _identical_vca(label, formula, rows, data.metric, run_component)
            for label, formula in ((VCA_RUN_AWARE, aware), (VCA_MAIN_EFFECTS, main))
        ]
    out: list[_Vca] = []
    for label, formula in ((VCA_RUN_AWARE, aware), (VCA_MAIN_EFFECTS, main)):
        previous = next((v for v in out if v.formula == formula), None)
        if previous is not None:
            out.append(replace(previous, label=label))
            continue
        result = log.fit(formula, rows, reml=True, analysis=VARIANCE, subset=system)
        if result is None:
            continue
        if not result.converged:
            log.note(VARIANCE, system, f"{formula}: {NOT_CONVERGED_NOTE}")
        out.append(_Vca.of(label, formula, result, run_component))
    return out


IDENTICAL_RUNS = (
    "all runs are identical on every segment: every facet, run and residual variance is 0; "
    "the REML criterion has no minimum (it falls without bound as the residual variance goes "
    "to 0), so no share, phi or D-study is claimed (docs/method.md §4.6.1)"
)
NOT_CONVERGED_NOTE = (
    "the REML fit did not converge: its variances are listed, marked, but no share, phi, SD or "
    "D-study is read from them (docs/method.md §4.6.1)"
)


def variance_components(data: MetricData, log: FitLog) -> dict[str, pd.DataFrame]:
    """VCA (both models), reliability and D-study (run-aware model) of every system with two
    or more runs."""
    vc_rows: list[dict[str, object]] = []
    reliability: list[dict[str, object]] = []
    dstudy: list[dict[str, object]] = []
    for system in data.systems:
        rows = data.system_rows(system)
        if rows[RUN].nunique() < 2:
            log.skip(
                VARIANCE,
                system,
                "",
                "a single run: segment and residual variance cannot be separated",
            )
            continue
        facets = data.facets_of(system)
        agreement = krippendorff_alpha(reliability_matrix(rows, data.metric))
        for vca in _fits(data, log, system, rows):
            key = {"metric": data.metric, SYSTEM: system, VCA_COLUMN: vca.label}
            vc_rows += _component_rows(key, vca)
            reliability.append(_reliability_row(data, key, vca, facets, rows, agreement))
            if vca.label == VCA_RUN_AWARE and vca.converged:
                dstudy += _dstudy_rows(data, system, vca.components, facets)
    return {
        "variance_components": pd.DataFrame(vc_rows, columns=columns("variance_components")),
        "reliability": pd.DataFrame(reliability, columns=columns("reliability")),
        "dstudy": pd.DataFrame(dstudy, columns=columns("dstudy")),
    }


def _component_rows(key: dict[str, object], vca: _Vca) -> list[dict[str, object]]:
    """Rows of variance_components.csv; no percentage from a fit that did not converge."""
    components = vca.components
    total = float(components.sum()) if vca.converged else math.nan
    return [
        {
            **key,
            "component": name,
            VARIANCE_COLUMN: float(variance),
            "percent": 100.0 * float(variance) / total if total > 0 else math.nan,
            "n_levels": vca.ngroups.get(name, vca.nobs) if name != RESIDUAL else vca.nobs,
            CONVERGED: vca.converged,
        }
        for name, variance in components.items()
    ]


def _reliability_row(
    data: MetricData,
    key: dict[str, object],
    vca: _Vca,
    facets: Sequence[str],
    rows: pd.DataFrame,
    agreement: float,
) -> dict[str, object]:
    """One row of reliability.csv; ``agreement``: Krippendorff's alpha of the system's runs as
    coders (the same for both VCA models: it does not depend on the model). A fit that did not
    converge gives no phi, label or n; its SDs only when the runs are identical (0, §4.6.1)."""
    components = vca.components
    spread = spread_sds(
        components,
        int(rows[SEGMENT].nunique()),
        list(data.options["retraining_facets"]),
        vca.run_component,
    )
    row: dict[str, object] = {
        **key,
        "n_facets": len(facets),
        "retrain_sd_points": spread.retrain,
        "metaparam_sd_points": spread.metaparam,
        "retrain_components": spread.retrain_components,
        "model": vca.formula,
        "krippendorff_alpha": agreement,
        CONVERGED: vca.converged,
    }
    if not vca.converged:
        identical = vca.identical
        return row | {
            "phi": math.nan,
            "label": NOT_CONVERGED,
            "n_per_facet_for_phi_08": math.nan,
            "runs_for_phi_08": math.nan,
            "retrain_sd_points": spread.retrain if identical else math.nan,
            "metaparam_sd_points": spread.metaparam if identical else math.nan,
        }
    phi = dstudy_phi(components, facets, 1)
    needed = _needed_n(components, facets, int(data.options["dstudy_max_n"]))
    return row | {
        "phi": phi,
        "label": koo_li_label(phi),
        "n_per_facet_for_phi_08": needed if needed is not None else math.nan,
        "runs_for_phi_08": needed ** max(len(facets), 1) if needed is not None else math.nan,
    }


def _dstudy_rows(
    data: MetricData, system: str, components: pd.Series, facets: Sequence[str]
) -> list[dict[str, object]]:
    return [
        {
            "metric": data.metric,
            SYSTEM: system,
            "n_per_facet": n,
            "runs_averaged": n ** max(len(facets), 1),
            "phi": dstudy_phi(components, facets, n),
        }
        for n in range(1, int(data.options["dstudy_max_n"]) + 1)
    ]


def _needed_n(components: pd.Series, facets: Sequence[str], max_n: int) -> int | None:
    """The smallest n with phi(n) >= 0.8: in the tabulated range, else searched beyond it."""
    for n in range(1, max_n + 1):
        if dstudy_phi(components, facets, n) >= PHI_TARGET:
            return n
    return _solve_n(components, facets, max_n)


def _solve_n(components: pd.Series, facets: Sequence[str], start: int) -> int | None:
    """The smallest n beyond the tabulated range that reaches phi >= 0.8 (None if unreachable)."""
    if float(components.get(SEGMENT, 0.0)) <= 0:
        return None
    n = start
    while n < 1_000_000:
        n *= 2
        if dstudy_phi(components, facets, n) >= PHI_TARGET:
            low, high = n // 2, n
            while high - low > 1:
                middle = (low + high) // 2
                if dstudy_phi(components, facets, middle) >= PHI_TARGET:
                    high = middle
                else:
                    low = middle
            return high
    return None
