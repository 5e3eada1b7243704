"""Reliability: variance components per system (paper Table 4), phi with Koo & Li's labels, the
SDs across retraining (same recipe) and across meta-parameter settings, and the D-study curve
with the 0.8 line (thesis Fig. 3.3). Bars, phi's headline numbers and the D-study come from the
run-aware VCA; the thesis' main-effects model is listed beside it as the reproduction
(docs/method.md §4.3, §4.4)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from infrepro.core.vocabulary import (
    CONVERGED,
    RUN,
    RUN_TERM,
    SEGMENT,
    SYSTEM,
    VARIANCE_COLUMN,
    VCA_COLUMN,
    VCA_RUN_AWARE,
)
from infrepro.plots import component_colours, dstudy_curve, system_style, variance_bars
from infrepro.report.figure import Figure, make_figure
from infrepro.report.formatting import fixed, flag, integer, scientific, yes_no
from infrepro.report.htmltable import Column, Table, frame_table, text
from infrepro.report.inputs import ReportSettings
from infrepro.report.labels import metric_label
from infrepro.report.query import select
from infrepro.report.sections.properties import split_rows, top_systems

STORED_SCALE = "stored (fraction) scale"

VCA_MODEL = Column(
    VCA_COLUMN,
    "VCA model",
    text,
    numeric=False,
    title=f"run-aware: with the run term {RUN_TERM}, what φ, the D-study and the SDs come from; "
    "main effects: the thesis' eq. 3.13, the reproduction of its tables",
)

CONVERGED_COLUMN = Column(
    CONVERGED,
    "converged",
    yes_no,
    numeric=False,
    title="no: the REML fit has no optimum (or did not reach one); no share, φ, SD or D-study "
    "is read from it (docs/method.md §4.6.1)",
    css=lambda row: "warn" if flag(row.get(CONVERGED)) is False else "",
)


@dataclass
class Reliability:
    components: Table | None = None
    phi: Table | None = None
    dstudy: Table | None = None
    # beyond MOST_LINES systems: the other systems' rows, one click away
    components_more: Table | None = None
    phi_more: Table | None = None
    bars: list[Figure] = field(default_factory=list)
    curves: list[Figure] = field(default_factory=list)


def component_order(components: pd.DataFrame, facets: list[str]) -> list[str]:
    """segment_id, the facets (experiment order), interaction terms, then the residual."""
    present = list(dict.fromkeys(components["component"]))
    middle = [f for f in facets if f in present]
    middle += [c for c in present if c not in middle and c not in (SEGMENT, "Residual")]
    return [c for c in [SEGMENT, *middle, "Residual"] if c in present]


COMPONENT_COLUMNS = [
    Column("metric", "metric", metric_label, numeric=False),
    Column(SYSTEM, SYSTEM, text, numeric=False),
    VCA_MODEL,
    Column("component", "component v", text, numeric=False),
    Column(VARIANCE_COLUMN, "variance σ²ᵥ", scientific, title=STORED_SCALE),
    Column("percent", "percent", lambda v: fixed(v, 1)),
    Column("n_levels", "levels", integer),
    CONVERGED_COLUMN,
]
PHI_COLUMNS = [
    Column("metric", "metric", metric_label, numeric=False),
    Column(SYSTEM, SYSTEM, text, numeric=False),
    VCA_MODEL,
    Column("phi", "φ", lambda v: fixed(v, 3)),
    Column(
        "krippendorff_alpha",
        "Krippendorff's α",
        lambda v: fixed(v, 3),
        title="interval α, units = segments, coders = runs (docs/method.md §4d.3)",
    ),
    Column("label", "Koo & Li", text, numeric=False, css=lambda row: f"phi-{row['label']}"),
    Column("n_per_facet_for_phi_08", "n per facet for φ ≥ 0.8", integer),
    Column("runs_for_phi_08", "runs for φ ≥ 0.8", integer),
    Column(
        "retrain_sd_points",
        "SD across retraining, same recipe (points)",
        lambda v: fixed(v, 2),
        title="SD of the mean of one run trained again with the same meta-parameter "
        "setting: the retraining components (next columns but one) + residual / "
        "segments",
    ),
    Column(
        "metaparam_sd_points",
        "SD across settings (points)",
        lambda v: fixed(v, 2),
        title="SD of a run's mean across choices of the meta-parameter setting: "
        "the other facets' components",
    ),
    Column("retrain_components", "retraining components", text, numeric=False),
    Column("model", "model (REML)", text, numeric=False, cls="code"),
    CONVERGED_COLUMN,
]
DSTUDY_COLUMNS = [
    Column("metric", "metric", metric_label, numeric=False),
    Column(SYSTEM, SYSTEM, text, numeric=False),
    Column("n_per_facet", "n per facet", integer),
    Column("runs_averaged", "runs averaged", integer),
    Column("phi", "φ", lambda v: fixed(v, 3)),
]


def build(tables: dict[str, pd.DataFrame], settings: ReportSettings) -> Reliability:
    section = Reliability()
    top = top_systems(tables, settings)
    vc = tables["variance_components"]
    if not vc.empty:
        section.bars = _bars(vc, settings)
        link = settings.link("variance_components")
        shown, rest = split_rows(vc, top)
        section.components = frame_table(shown, COMPONENT_COLUMNS, csv=link)
        section.components_more = frame_table(rest, COMPONENT_COLUMNS, csv=link)
    reliability = tables["reliability"]
    if not reliability.empty:
        link = settings.link("reliability")
        shown, rest = split_rows(reliability, top)
        section.phi = frame_table(shown, PHI_COLUMNS, csv=link)
        section.phi_more = frame_table(rest, PHI_COLUMNS, csv=link)
    dstudy = tables["dstudy"]
    section.curves = _curves(dstudy, settings)
    if not dstudy.empty:
        section.dstudy = frame_table(dstudy, DSTUDY_COLUMNS, csv=settings.link("dstudy"))
    return section


def _bars(vc: pd.DataFrame, settings: ReportSettings) -> list[Figure]:
    """One stacked bar chart of the run-aware variance shares per metric."""
    order = component_order(vc, settings.facets)
    colours = component_colours(order)
    figures = []
    for metric in settings.metrics:
        shares = select(vc, metric=metric, **{VCA_COLUMN: VCA_RUN_AWARE})
        if shares.empty:
            continue
        title = f"{metric_label(metric)}: variance shares"
        figures.append(
            make_figure(
                variance_bars(
                    shares, settings.systems, order, colours, title=title, key=f"vc-{metric}"
                ),
                f"{title} per system (run-aware VCA, REML: facets and the run term "
                f"{RUN}); the segment share is φ.",
                f"vc-{metric}",
            )
        )
    return figures


def _curves(dstudy: pd.DataFrame, settings: ReportSettings) -> list[Figure]:
    """One D-study plot per metric, a curve per system."""
    styles = {s: system_style(i) for i, s in enumerate(settings.systems)}
    figures = []
    for metric in settings.metrics:
        curves = select(dstudy, metric=metric)
        if curves.empty:
            continue
        title = f"{metric_label(metric)}: D-study"
        mine = {s: st for s, st in styles.items() if s in set(curves[SYSTEM])}
        figures.append(
            make_figure(
                dstudy_curve(curves, mine, title=title, key=f"dstudy-{metric}"),
                f"{title}: φ when every facet's levels are averaged over n runs each; the dashed "
                "line is φ = 0.8, bands are Koo & Li's labels.",
                f"dstudy-{metric}",
            )
        )
    return figures
