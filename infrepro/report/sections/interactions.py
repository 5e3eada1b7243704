"""Shared by the data-property and meta-parameter sections: interaction plots of a factor
(system or facet) with a property, its run-aware F tests (primary) and the paper's GLRTs, and
slope and within-bin tables with run-aware rows first."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd

from infrepro.core.registry import RUN_AWARE_SUFFIX, interaction_only, joint, run_aware
from infrepro.core.vocabulary import EFFECT_SD_TEXT, SYSTEM, is_bin_column, unbinned
from infrepro.plots import PlotText, categorical_interaction, numeric_interaction
from infrepro.report.figure import Figure
from infrepro.report.formatting import (
    fixed,
    integer,
    is_missing,
    is_significant,
    points,
    significant,
)
from infrepro.report.htmltable import Cell, Column, Table, frame_table, rows_table, text
from infrepro.report.inputs import ReportSettings
from infrepro.report.labels import (
    PAPER_TEST,
    analysis_label,
    metric_label,
    property_label,
    statistic_name,
    test_label,
)
from infrepro.report.pcolumns import DIFFERENCE_LABEL, p_columns
from infrepro.report.query import first, ordered, select

Z95 = 1.959963984540054


@dataclass(kw_only=True)
class Block:
    """One block of interaction plots and its tables: run-aware F tests (primary), the paper's
    GLRTs, slopes and within-bin comparisons."""

    figures: list[Figure] = field(default_factory=list)
    tests: Table | None = None
    glrt: Table | None = None
    slopes: Table | None = None
    within: Table | None = None
    within_pairs: str = ""  # which pairs the within-bin table shows, when it does not say itself

    def fill(
        self,
        tables: dict[str, pd.DataFrame],
        settings: ReportSettings,
        analysis: str,
        variants: Sequence[str],
        bins: Mapping[str, list[str]],
        *,
        slope_props: Sequence[str],
        group_label: str = SYSTEM,
    ) -> None:
        """The four tables of ``analysis`` (and its run-aware twin) for the given properties."""
        self.tests = tests_table(
            tables,
            settings,
            (joint(run_aware(analysis)), interaction_only(run_aware(analysis))),
            variants,
        )
        self.glrt = glrt_table(
            tables, settings, (joint(analysis), interaction_only(analysis)), variants
        )
        slopes = slopes_table(tables, settings, analysis, slope_props, group_label=group_label)
        self.slopes = None if slopes.empty else slopes
        within = within_bins_table(tables, settings, analysis, variants, bins)
        self.within = None if within.empty else within


def _in_points(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.copy()
    out["lower"] = (frame["estimate"] - Z95 * frame["se"]) * 100
    out["upper"] = (frame["estimate"] + Z95 * frame["se"]) * 100
    out["estimate"] = frame["estimate"] * 100
    return out


def p_of(
    tables: dict[str, pd.DataFrame], metric: str, analysis: str, subset: str, prop: str
) -> str:
    """``p = 0.0054 (run-aware F, KR df 22.2, Holm)`` from tests.csv for run-aware analyses,
    ``p = 2.6e-08 (paper's model, ML GLRT)`` from glrt.csv otherwise."""
    if RUN_AWARE_SUFFIX in analysis:
        row = first(tables["tests"], metric=metric, analysis=analysis, subset=subset, property=prop)
        if row is None:
            return "not fitted"
        holm = ", Holm" if not is_bin_column(prop) else ""
        label = test_label("run-aware", statistic_name(row["numdf"]), row["method"], row["dendf"])
        return f"p = {row['p_holm']} ({label}{holm})"
    row = first(tables["glrt"], metric=metric, analysis=analysis, subset=subset, property=prop)
    return "not fitted" if row is None else f"p = {row['p_value']} ({PAPER_TEST})"


def interaction_svg(
    tables: dict[str, pd.DataFrame],
    *,
    metric: str,
    analysis: str,
    subset: str,
    prop: str,
    styles: Mapping[str, Mapping[str, object]],
    bin_order: Sequence[str],
    xlabel: str,
    title: str,
    key: str,
    legend_title: str = "",
    observed: str = "",
) -> str | None:
    """The interaction plot of one metric x property, or None when the tables hold no data.
    Lines and cell means come from ``analysis``; observed bin means from ``observed``."""
    words = PlotText(xlabel, f"{metric_label(metric)}, points", title, key, legend_title)
    lines = select(
        tables["predictions"], metric=metric, analysis=analysis, subset=subset, property=prop
    )
    if not lines.empty:
        lines = lines.assign(
            estimate=lines["estimate"] * 100, lower=lines["lower"] * 100, upper=lines["upper"] * 100
        )
        points_ = select(
            tables["means"],
            metric=metric,
            analysis=observed or analysis,
            subset=subset,
            property=prop,
            kind="observed",
        )
        return numeric_interaction(
            lines, _in_points(points_) if not points_.empty else points_, styles, words
        )
    cells = select(
        tables["means"],
        metric=metric,
        analysis=analysis,
        subset=subset,
        property=prop,
        kind="model",
    )
    if cells.empty:
        return None
    levels = ordered(sorted(set(cells["bin"])), list(bin_order))
    return categorical_interaction(_in_points(cells), levels, styles, words)


def _property_tests(
    table: pd.DataFrame,
    settings: ReportSettings,
    analyses: Sequence[str],
    props: Sequence[str],
) -> pd.DataFrame:
    """The rows of ``analyses`` x ``props``, ordered by metric, subset, property, analysis."""
    if table.empty:
        return table
    rows = table[table["analysis"].isin(analyses) & table["property"].isin(props)].copy()
    if not rows.empty:
        rows["_m"] = rows["metric"].map({m: i for i, m in enumerate(settings.metrics)})
        rows["_p"] = rows["property"].map({p: i for i, p in enumerate(props)})
        rows["_a"] = rows["analysis"].map({a: i for i, a in enumerate(analyses)})
        rows = rows.sort_values(["_m", "subset", "_p", "_a"], kind="stable")
    return rows


def glrt_table(
    tables: dict[str, pd.DataFrame],
    settings: ReportSettings,
    analyses: Sequence[str],
    props: Sequence[str],
) -> Table:
    """Joint and interaction-only GLRTs of the given properties, metric by metric."""
    rows = _property_tests(tables["glrt"], settings, analyses, props)
    columns = [
        Column("metric", "metric", metric_label, numeric=False),
        Column("property", "property", property_label, numeric=False),
        Column("analysis", "test", analysis_label, numeric=False),
        Column("h1", "H1", text, numeric=False, cls="code"),
        Column("h0", "H0", text, numeric=False, cls="code"),
        Column("lr_stat", "LR", lambda v: fixed(v, 2)),
        Column("df", "df", integer),
        *p_columns(settings.alpha, holm=True),
    ]
    return frame_table(rows, columns, csv=settings.link("glrt"))


def tests_table(
    tables: dict[str, pd.DataFrame],
    settings: ReportSettings,
    analyses: Sequence[str],
    props: Sequence[str],
) -> Table:
    """Run-aware joint and interaction F tests (REML, Kenward-Roger or Satterthwaite df) of the
    given properties; Holm over the metric's numeric and categorical property tests."""
    rows = _property_tests(tables["tests"], settings, analyses, props)
    if not rows.empty:
        rows["stat"] = [
            f"{statistic_name(n)} = {fixed(v, 2)}"
            for n, v in zip(rows["numdf"], rows["statistic"], strict=True)
        ]
    columns = [
        Column("metric", "metric", metric_label, numeric=False),
        Column("property", "property", property_label, numeric=False),
        Column("analysis", "test", analysis_label, numeric=False),
        Column("stat", "t or F", text, sort_key="statistic", title="t when num df = 1, else F"),
        Column("numdf", "num df", integer),
        Column("dendf", "den df", lambda v: fixed(v, 1)),
        Column("method", "df method", text, numeric=False),
        *p_columns(settings.alpha, holm=True),
        Column("model", "model (REML)", text, numeric=False, cls="code"),
    ]
    return frame_table(rows, columns, csv=settings.link("tests"))


def slopes_table(
    tables: dict[str, pd.DataFrame],
    settings: ReportSettings,
    analysis: str,
    props: Sequence[str],
    *,
    group_label: str = SYSTEM,
) -> Table:
    """Per-group slopes of numeric properties, in points per unit of the property: the
    run-aware fit's (t, small-sample df) first, then the paper's (Wald z)."""
    slopes = tables["slopes"]
    order = (run_aware(analysis), analysis)
    rows = slopes[slopes["analysis"].isin(order)].copy() if not slopes.empty else slopes
    rows = rows[rows["property"].isin(props)] if not rows.empty else rows
    if not rows.empty:
        rows["_a"] = rows["analysis"].map({a: i for i, a in enumerate(order)})
        rows = rows.sort_values("_a", kind="stable")
    columns = [
        Column("analysis", "model", analysis_label, numeric=False),
        Column("metric", "metric", metric_label, numeric=False),
        Column("property", "property", property_label, numeric=False),
        Column("group", group_label, text, numeric=False),
        Column(
            "slope",
            "slope",
            lambda v: significant(_times100(v)),
            title="points per unit of the property",
        ),
        Column("se", "SE", lambda v: significant(_times100(v))),
        Column("statistic", "t or z", lambda v: fixed(v, 2)),
        Column("df", "df", lambda v: fixed(v, 1), title="empty for Wald z"),
        Column("method", "test", text, numeric=False),
        *p_columns(settings.alpha, holm=False),
    ]
    return frame_table(rows, columns, csv=settings.link("slopes"))


def _times100(value: object) -> object:
    try:
        return float(value) * 100  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return value


def within_bins_table(
    tables: dict[str, pd.DataFrame],
    settings: ReportSettings,
    analysis: str,
    props: Sequence[str],
    bins: Mapping[str, list[str]],
) -> Table:
    """Pairwise comparisons within each bin or level (Holm-adjusted within a property), with
    the two model cell means (thesis Table 2.4): the run-aware fit's rows (t with
    small-sample df) first, then the paper's (Wald z)."""
    headers = [
        Column("model", "model", numeric=False),
        Column("metric", "metric", numeric=False),
        Column("property", "property", numeric=False),
        Column("bin", "bin", numeric=False),
        Column("level1", "1", numeric=False),
        Column("mean1", "mean 1"),
        Column("level2", "2", numeric=False),
        Column("mean2", "mean 2"),
        Column("estimate", DIFFERENCE_LABEL, title="difference of model cell means, points"),
        Column("se", "SE"),
        Column("effect", "d", title=f"Δ / {EFFECT_SD_TEXT}"),
        Column("test", "test", numeric=False),
        Column("p", "p"),
        Column("p_holm", "p (Holm)"),
    ]
    out: list[list[Cell]] = []
    for name in (run_aware(analysis), analysis):
        contrasts = select(tables["contrasts"], analysis=name)
        if contrasts.empty:
            continue
        cells = select(tables["means"], analysis=name, kind="model")
        means = {
            (r.metric, r.subset, r.property, r.bin, r.group): r.estimate
            for r in cells.itertuples(index=False)
        }
        # one pass over the rows: (metric, subset, property) -> bin -> rows, in table order
        # (a select per metric, subset, property and bin made a new frame to index each time)
        grouped: dict[tuple[str, str, str], dict[str, list]] = {}
        for row in contrasts.itertuples(index=False):
            cell = (str(row.metric), str(row.subset), str(row.property))
            grouped.setdefault(cell, {}).setdefault(str(row.bin), []).append(row)
        model = Cell("run-aware" if RUN_AWARE_SUFFIX in name else "paper's model")
        alpha = settings.alpha
        for metric in settings.metrics:
            for subset in sorted({s for m, s, _ in grouped if m == str(metric)}):
                for prop in props:
                    rows = grouped.get((str(metric), subset, str(prop)), {})
                    for b in ordered(sorted(rows), bins.get(unbinned(prop), [])):
                        out.extend(
                            [model, *_bin_row(means, row, metric, subset, prop, alpha)]
                            for row in rows[b]
                        )
    return rows_table(headers, out, csv=settings.link("contrasts"))


def _bin_row(
    means: Mapping[tuple[str, ...], float],
    row,
    metric: str,
    subset: str,
    prop: str,
    alpha: float,
) -> list[Cell]:
    def mean(group: str) -> Cell:
        value = means.get((metric, subset, prop, str(row.bin), group))
        return Cell(points(value), None if value is None else float(value))

    significant_ = is_significant(row.log10_p_holm, alpha)
    return [
        Cell(metric_label(metric)),
        Cell(property_label(unbinned(prop))),
        Cell(str(row.bin)),
        Cell(str(row.level1)),
        mean(str(row.level1)),
        Cell(str(row.level2)),
        mean(str(row.level2)),
        Cell(points(row.estimate, sign=True), float(row.estimate)),
        Cell(points(row.se), float(row.se)),
        Cell(f"{fixed(row.effect_size, 2, sign=True)} {row.effect_label}", float(row.effect_size)),
        _test_cell(row),
        Cell(str(row.p_value), float(row.log10_p)),
        Cell(str(row.p_holm), float(row.log10_p_holm), "p-sig" if significant_ else "p-ns"),
    ]


def _test_cell(row) -> Cell:
    """``t, df 21.8`` (the full method in the tooltip) or the paper's ``Wald z``."""
    method = str(getattr(row, "p_method", ""))
    df = getattr(row, "df", None)
    if df is None or is_missing(df):
        return Cell(method)
    return Cell(f"t, df {fixed(df, 1)}", title=method)
