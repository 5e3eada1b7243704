"""Variance component analysis per system (REML), reliability phi, the SD of a system's mean
score across retraining, and the D-study (docs/method.md §4.4)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from infrepro.vocabulary import RUN, SEGMENT, SYSTEM, columns

from .agreement import krippendorff_alpha, reliability_matrix
from .data import MetricData
from .fitlog import FitLog

KOO_LI = ((0.5, "poor"), (0.75, "moderate"), (0.9, "good"), (math.inf, "excellent"))
PHI_TARGET = 0.8


def koo_li_label(phi: float) -> str:
    """Koo & Li (2016): < 0.5 poor, 0.5-0.75 moderate, 0.75-0.9 good, >= 0.9 excellent."""
    for bound, label in KOO_LI:
        if phi < bound:
            return label
    return "excellent"


def vca_formula(metric: str, facets: Sequence[str], extra_terms: Sequence[str] = ()) -> str:
    """``metric ~ 1 + (1|segment_id) + (1|f1) + ...`` plus optional interaction terms."""
    terms = [SEGMENT, *facets, *extra_terms]
    return f"{metric} ~ 1 + " + " + ".join(f"(1|{t})" for t in terms)


def dstudy_phi(components: pd.Series, facets: Sequence[str], n: int) -> float:
    """phi when scores are averaged over n levels of every facet (thesis eq. 3.9).

    A component is divided by n to the number of facets it involves; the residual by n to the
    number of facets (a fully crossed average over n^k runs); the segment variance stays.
    """
    segment = float(components.get(SEGMENT, 0.0))
    error = 0.0
    for name, variance in components.items():
        if name == SEGMENT:
            continue
        involved = len(facets) if name == "Residual" else _facets_in(name, facets)
        error += float(variance) / n**involved
    total = segment + error
    return segment / total if total > 0 else math.nan


def retrain_sd(components: pd.Series, n_segments: int) -> float:
    """SD of one retrained run's mean test score, in points (x 100).

    Retraining redraws every facet effect (seed, lambda, ...) in full; the residual and any
    segment-by-facet components average over the test set's ``n_segments``; the segment
    variance does not enter (the test set stays the same).
    """
    var = 0.0
    for name, variance in components.items():
        if name == SEGMENT:
            continue
        per_segment = name == "Residual" or SEGMENT in _parts(str(name))
        var += float(variance) / n_segments if per_segment else float(variance)
    return 100.0 * math.sqrt(var)


def _facets_in(term: str, facets: Sequence[str]) -> int:
    parts = term.replace("/", ":").split(":")
    return max(1, sum(part in facets for part in parts))


def variance_components(data: MetricData, log: FitLog) -> dict[str, pd.DataFrame]:
    """VCA, reliability and D-study of every system with its facets."""
    vc_rows: list[dict[str, object]] = []
    reliability: list[dict[str, object]] = []
    dstudy: list[dict[str, object]] = []
    extra = list(data.options["vca_interactions"])
    max_n = int(data.options["dstudy_max_n"])
    for system in data.systems:
        rows = data.evaluation[data.evaluation[SYSTEM] == system]
        if rows[RUN].nunique() < 2:
            log.skip(
                "variance",
                system,
                "",
                "a single run: segment and residual variance cannot be separated",
            )
            continue
        facets = data.facets_of(system)
        terms = [t for t in extra if all(p in [SEGMENT, *facets] for p in _parts(t))]
        formula = vca_formula(data.metric, facets, terms)
        result = log.fit(formula, rows, reml=True, analysis="variance", subset=system)
        if result is None:
            continue
        components = result.variance_components
        total = float(components.sum())
        for name, variance in components.items():
            vc_rows.append(
                {
                    "metric": data.metric,
                    "system": system,
                    "component": name,
                    "variance": float(variance),
                    "percent": 100.0 * float(variance) / total if total > 0 else math.nan,
                    "n_levels": result.ngroups.get(name, len(rows))
                    if name != "Residual"
                    else result.nobs,
                }
            )
        phi = dstudy_phi(components, facets, 1)
        curve = [(n, dstudy_phi(components, facets, n)) for n in range(1, max_n + 1)]
        needed = next((n for n, value in curve if value >= PHI_TARGET), None)
        if needed is None:
            needed = _solve_n(components, facets, max_n)
        reliability.append(
            {
                "metric": data.metric,
                "system": system,
                "phi": phi,
                "label": koo_li_label(phi),
                "n_per_facet_for_phi_08": needed if needed is not None else math.nan,
                "runs_for_phi_08": needed ** max(len(facets), 1)
                if needed is not None
                else math.nan,
                "n_facets": len(facets),
                "retrain_sd_points": retrain_sd(components, int(rows[SEGMENT].nunique())),
                "model": formula,
                "krippendorff_alpha": krippendorff_alpha(reliability_matrix(rows, data.metric)),
            }
        )
        for n, value in curve:
            dstudy.append(
                {
                    "metric": data.metric,
                    "system": system,
                    "n_per_facet": n,
                    "runs_averaged": n ** max(len(facets), 1),
                    "phi": value,
                }
            )
    return {
        "variance_components": pd.DataFrame(vc_rows, columns=columns("variance_components")),
        "reliability": pd.DataFrame(reliability, columns=columns("reliability")),
        "dstudy": pd.DataFrame(dstudy, columns=columns("dstudy")),
    }


def _parts(term: str) -> list[str]:
    return term.replace("/", ":").split(":")


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
