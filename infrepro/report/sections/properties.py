"""Data properties: system x property interaction plots (paper Fig. 1, baseline solid and
competitor dashed; lines from the run-aware fit), the run-aware F tests (primary) and the
paper's conditional GLRTs, slopes and within-bin comparisons (thesis Table 2.4)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from infrepro.core.registry import (
    CONDITIONAL,
    RUN_AWARE_SUFFIX,
    SUMMARY,
    interaction_only,
    joint,
    run_aware,
)
from infrepro.core.vocabulary import SYSTEM, bin_column
from infrepro.plots import system_style
from infrepro.report.figure import make_figure
from infrepro.report.formatting import is_significant, significant
from infrepro.report.htmltable import Cell, Column, Table, rows_table
from infrepro.report.inputs import ReportSettings
from infrepro.report.labels import metric_label, property_label, statistic_name, test_label
from infrepro.report.query import first, select
from infrepro.report.sections.interactions import Block, interaction_svg, p_of

MOST_LINES = 6  # systems drawn in one interaction plot: the baseline and the top 5


@dataclass(kw_only=True)
class PropertyBlock(Block):
    name: str
    label: str
    bins_text: str


def within_pairs_text(contrasts: pd.DataFrame, baseline: str) -> str:
    """``each system against the baseline`` or ``every pair of systems``: the pairs the
    conditional analysis compared within the bins (``analyses.conditional_pairs``, read off
    contrasts.csv); empty for one pair."""
    if not {"analysis", "level1", "level2"} <= set(contrasts.columns):
        return ""  # no contrasts at all
    analyses = (CONDITIONAL, run_aware(CONDITIONAL))
    rows = contrasts[contrasts["analysis"].astype(str).isin(analyses)]
    pairs = set(zip(rows["level1"].astype(str), rows["level2"].astype(str), strict=True))
    if len({name for pair in pairs for name in pair}) <= 2:
        return ""
    if all(baseline in pair for pair in pairs):
        return "each system against the baseline, analyses.conditional_pairs"
    return "every pair of systems"


def bins_text(tables: dict[str, pd.DataFrame], prop: str) -> str:
    """``low (−inf, 11], mid (11, 18], high (18, inf)`` from property_bins.csv."""
    rows = select(tables["property_bins"], property=prop)
    if rows.empty:
        return ""
    parts = [
        f"{r.bin} ({significant(r.lower, 4)}, {significant(r.upper, 4)}]"
        for r in rows.itertuples(index=False)
    ]
    text = ", ".join(parts).replace("−inf", "−∞").replace("inf]", "∞)")
    return "Bins (right-closed): " + text + "."


def overview(tables: dict[str, pd.DataFrame], settings: ReportSettings) -> Table:
    """Run-aware interaction-only F test of every property (rows) and metric (columns): Holm p
    for the numeric and categorical properties, unadjusted (descriptive) for binned ones."""
    headers = [Column("property", "property", numeric=False)] + [
        Column(
            m,
            metric_label(m),
            title="run-aware F test of system × property (interaction only), Holm p; "
            "hover for df, the joint test and the paper's GLRT",
        )
        for m in settings.metrics
    ]
    rows = []
    for prop in settings.properties:
        for variant in (prop, bin_column(prop)):
            cells = [Cell(property_label(variant))]
            for metric in settings.metrics:
                test = first(
                    tables["tests"],
                    metric=metric,
                    analysis=interaction_only(run_aware(CONDITIONAL)),
                    subset="all runs",
                    property=variant,
                )
                if test is None:
                    cells.append(Cell("–"))
                    continue
                joint_p = p_of(tables, metric, joint(run_aware(CONDITIONAL)), "all runs", variant)
                paper = p_of(tables, metric, interaction_only(CONDITIONAL), "all runs", variant)
                log10_p = float(test["log10_p_holm"])
                label = test_label(
                    "run-aware", statistic_name(test["numdf"]), test["method"], test["dendf"]
                )
                cells.append(
                    Cell(
                        str(test["p_holm"]),
                        log10_p,
                        "p-sig" if is_significant(log10_p, settings.alpha) else "p-ns",
                        f"{label}; joint {joint_p}; paper's interaction {paper}",
                    )
                )
            if any(c.sort is not None for c in cells[1:]):
                rows.append(cells)
    return rows_table(headers, rows, csv=settings.link("tests"))


def plotted_systems(
    tables: dict[str, pd.DataFrame],
    settings: ReportSettings,
    metric: str,
    eligible: set[str] | None = None,
) -> list[str]:
    """Every system when there are at most :data:`MOST_LINES`, else the baseline and the
    systems ranked first in the metric's decision table (summary.csv) among the ``eligible``
    ones (those that have the figure; default all), in the experiment's order: more lines
    than that overlap into one band, more panels than that make the page too large."""
    if len(settings.systems) <= MOST_LINES:
        return list(settings.systems)
    ranked = select(tables.get(SUMMARY, pd.DataFrame()), metric=metric)
    order = list(ranked.sort_values("rank", key=pd.to_numeric, kind="stable")[SYSTEM])
    if not order:  # no decision table: the experiment's order
        order = list(settings.systems)
    candidates = [s for s in order if s != settings.baseline]
    if eligible is not None:
        candidates = [s for s in candidates if s in eligible]
    top = candidates[: MOST_LINES - 1]
    return [s for s in settings.systems if s == settings.baseline or s in top]


def top_systems(tables: dict[str, pd.DataFrame], settings: ReportSettings) -> set[str] | None:
    """The systems a per-system table shows first (the baseline and the systems ranked first in
    any metric's decision table); None with at most :data:`MOST_LINES` systems (all shown)."""
    if len(settings.systems) <= MOST_LINES:
        return None
    return {s for m in settings.metrics for s in plotted_systems(tables, settings, m)}


def split_rows(
    frame: pd.DataFrame, top: set[str] | None, *, column: str = SYSTEM
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The rows of the ``top`` systems and the others (none with ``top`` None). ``column``:
    a system's column, or ``subset`` ("A vs B": a pair is top when both systems are; "all
    systems" and any other subset are top)."""
    if top is None or frame.empty or column not in frame:
        return frame, frame.iloc[0:0]
    if column == "subset":
        pairs = frame[column].astype(str).str.split(" vs ")
        keep = pairs.map(lambda names: len(names) != 2 or set(names) <= top)
    else:
        keep = frame[column].astype(str).isin(top)
    return frame[keep.to_numpy(dtype=bool)], frame[~keep.to_numpy(dtype=bool)]


def build(
    tables: dict[str, pd.DataFrame], settings: ReportSettings, bins: dict[str, list[str]]
) -> list[PropertyBlock]:
    styles = {s: system_style(i) for i, s in enumerate(settings.systems)}
    where = sorted(set(tables["property_bins"].get("computed_on", pd.Series(dtype=str))) - {""})
    on = f" (of the {where[0]})" if len(where) == 1 else ""
    blocks = []
    pairs = within_pairs_text(tables["contrasts"], settings.baseline)  # one for every property
    for prop in settings.properties:
        variants = [prop, bin_column(prop)]
        block = PropertyBlock(
            name=prop, label=property_label(prop), bins_text=bins_text(tables, prop)
        )
        for metric in settings.metrics:
            shown = plotted_systems(tables, settings, metric)
            title = f"{metric_label(metric)} × {property_label(prop)}"
            lines = run_aware(CONDITIONAL)
            if select(tables["predictions"], metric=metric, analysis=lines, property=prop).empty:
                lines = CONDITIONAL
            svg = interaction_svg(
                tables,
                metric=metric,
                analysis=lines,
                observed=CONDITIONAL,
                subset="all runs",
                prop=prop,
                styles={s: styles[s] for s in shown},
                bin_order=bins.get(prop, []),
                xlabel=property_label(prop) + on,
                title=title,
                key=f"cond-{metric}-{prop}",
            )
            if svg is None:
                continue
            model = "run-aware fit" if lines.endswith(RUN_AWARE_SUFFIX) else "paper's model"
            caption = (
                f"{title}, all runs (lines: {model}). Interaction "
                f"{p_of(tables, metric, interaction_only(lines), 'all runs', prop)}, joint "
                f"{p_of(tables, metric, joint(lines), 'all runs', prop)}; paper's interaction "
                f"{p_of(tables, metric, interaction_only(CONDITIONAL), 'all runs', prop)}."
            )
            if len(shown) < len(settings.systems):
                caption += (
                    f" Lines: the baseline and the {len(shown) - 1} systems ranked first in the "
                    f"decision table, of {len(settings.systems)}; the tables below hold them all."
                )
            block.figures.append(make_figure(svg, caption, f"cond-{metric}-{prop}"))
        block.fill(tables, settings, CONDITIONAL, variants, bins, slope_props=[prop])
        block.within_pairs = pairs
        blocks.append(block)
    return blocks
