"""Reliability: variance components per system (paper Table 4), phi with Koo & Li's labels and
the D-study curve with the 0.8 line (thesis Fig. 3.3)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from infrepro.plots import component_colours, dstudy_curve, system_style, variance_bars

from ..figure import Figure, make_figure
from ..formatting import fixed, integer, scientific
from ..htmltable import Column, Table, frame_table, text
from ..inputs import ReportSettings
from ..labels import metric_label
from ..query import select


@dataclass
class Reliability:
    components: Table | None = None
    phi: Table | None = None
    dstudy: Table | None = None
    bars: list[Figure] = field(default_factory=list)
    curves: list[Figure] = field(default_factory=list)


def component_order(components: pd.DataFrame, facets: list[str]) -> list[str]:
    """segment_id, the facets (experiment order), interaction terms, then the residual."""
    present = list(dict.fromkeys(components["component"]))
    middle = [f for f in facets if f in present]
    middle += [c for c in present if c not in middle and c not in ("segment_id", "Residual")]
    return [c for c in ["segment_id", *middle, "Residual"] if c in present]


def build(tables: dict[str, pd.DataFrame], settings: ReportSettings) -> Reliability:
    section = Reliability()
    vc = tables["variance_components"]
    if not vc.empty:
        order = component_order(vc, settings.facets)
        colours = component_colours(order)
        for metric in settings.metrics:
            shares = select(vc, metric=metric)
            if shares.empty:
                continue
            title = f"{metric_label(metric)}: variance shares"
            section.bars.append(
                make_figure(
                    variance_bars(
                        shares, settings.systems, order, colours, title=title, key=f"vc-{metric}"
                    ),
                    f"{title} per system (REML); the segment share is φ.",
                    f"vc-{metric}",
                )
            )
        section.components = frame_table(
            vc,
            [
                Column("metric", "metric", metric_label, numeric=False),
                Column("system", "system", text, numeric=False),
                Column("component", "component v", text, numeric=False),
                Column("variance", "variance σ²ᵥ", scientific, title="stored (fraction) scale"),
                Column("percent", "percent", lambda v: fixed(v, 1)),
                Column("n_levels", "levels", integer),
            ],
            csv=settings.link("variance_components"),
        )
    reliability = tables["reliability"]
    if not reliability.empty:
        section.phi = frame_table(
            reliability,
            [
                Column("metric", "metric", metric_label, numeric=False),
                Column("system", "system", text, numeric=False),
                Column("phi", "φ", lambda v: fixed(v, 3)),
                Column(
                    "krippendorff_alpha",
                    "Krippendorff's α",
                    lambda v: fixed(v, 3),
                    title="interval α, units = segments, coders = runs (docs/method.md §4c.3)",
                ),
                Column(
                    "label", "Koo & Li", text, numeric=False, css=lambda row: f"phi-{row['label']}"
                ),
                Column("n_per_facet_for_phi_08", "n per facet for φ ≥ 0.8", integer),
                Column("runs_for_phi_08", "runs for φ ≥ 0.8", integer),
                Column(
                    "retrain_sd_points",
                    "SD across retraining (points)",
                    lambda v: fixed(v, 2),
                    title="SD of one retrained run's mean: facet variances + residual / segments",
                ),
                Column("model", "model (REML)", text, numeric=False, cls="code"),
            ],
            csv=settings.link("reliability"),
        )
    dstudy = tables["dstudy"]
    styles = {s: system_style(i) for i, s in enumerate(settings.systems)}
    for metric in settings.metrics:
        curves = select(dstudy, metric=metric)
        if curves.empty:
            continue
        title = f"{metric_label(metric)}: D-study"
        mine = {s: st for s, st in styles.items() if s in set(curves["system"])}
        section.curves.append(
            make_figure(
                dstudy_curve(curves, mine, title=title, key=f"dstudy-{metric}"),
                f"{title}: φ when every facet's levels are averaged over n runs each; the dashed "
                "line is φ = 0.8, bands are Koo & Li's labels.",
                f"dstudy-{metric}",
            )
        )
    if not dstudy.empty:
        section.dstudy = frame_table(
            dstudy,
            [
                Column("metric", "metric", metric_label, numeric=False),
                Column("system", "system", text, numeric=False),
                Column("n_per_facet", "n per facet", integer),
                Column("runs_averaged", "runs averaged", integer),
                Column("phi", "φ", lambda v: fixed(v, 3)),
            ],
            csv=settings.link("dstudy"),
        )
    return section
