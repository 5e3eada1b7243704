"""Diagnostics of every fit (convergence, singular fits, facets with few levels, sizes), residual
QQ plots, and the classical tests shown for context (seed 002, thesis 2.1)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pandas as pd

from infrepro.core.registry import ALL_RUNS, BEST_VS_BEST, HEADLINE, VARIANCE
from infrepro.core.vocabulary import CLASSICAL_TABLE, qq_theoretical, qq_values
from infrepro.plots import qq_panels
from infrepro.report.figure import Figure, make_figure
from infrepro.report.formatting import fixed, integer, significant, yes_no
from infrepro.report.htmltable import Column, Formatter, Table, frame_table, text
from infrepro.report.inputs import ReportSettings
from infrepro.report.labels import analysis_label, metric_label, property_label
from infrepro.report.pcolumns import difference_column, p_columns
from infrepro.report.query import select

QQ_ANALYSES = {
    BEST_VS_BEST: "best vs best",
    HEADLINE: "run-aware (verdict)",
    ALL_RUNS: "all runs, paper's",
    VARIANCE: "VCA",
}
QQ_MOST_PANELS = 20  # more models than this: one panel per analysis, its models' lines overlaid


def _warn_column(key: str, label: str, fmt: Formatter, warn: Callable[[object], bool]) -> Column:
    """A column sorted as text whose cell is marked ``warn`` where ``warn`` holds of its value."""
    return Column(key, label, fmt, numeric=False, css=lambda r: "warn" if warn(r[key]) else "")


DIAGNOSTICS_COLUMNS = [
    Column("metric", "metric", metric_label, numeric=False),
    Column("analysis", "analysis", analysis_label, numeric=False),
    Column("subset", "subset", text, numeric=False),
    Column("property", "property", lambda v: property_label(text(v)), numeric=False),
    Column("model", "model", text, numeric=False, cls="code"),
    Column("reml", "REML", yes_no, numeric=False),
    _warn_column("status", "status", text, lambda v: v != "fitted"),
    _warn_column("converged", "converged", yes_no, lambda v: v is False),
    _warn_column("singular", "singular", yes_no, lambda v: v is True),
    Column("n_obs", "rows", integer),
    Column("n_segments", "segments", integer),
    Column("n_runs", "runs", integer),
    Column("facets_lt5", "facets < 5 levels", text, numeric=False, cls="code"),
    Column("loglik", "logLik", lambda v: fixed(v, 2)),
    Column("reason", "reason", text, numeric=False, cls="wrap"),
    Column("messages", "messages", text, numeric=False, cls="wrap"),
]


@dataclass
class Diagnostics:
    summary: list[str] = field(default_factory=list)
    table: Table | None = None
    qq: list[Figure] = field(default_factory=list)
    classical: Table | None = None


def summary_lines(diagnostics: pd.DataFrame) -> list[str]:
    """Counts of fitted and skipped models, non-converged and singular fits, small facets."""
    if diagnostics.empty:
        return []
    fitted = diagnostics[diagnostics["status"] == "fitted"]
    skipped = diagnostics[diagnostics["status"] == "skipped"]
    notes = diagnostics[diagnostics["status"] == "note"]
    lines = [
        f"{len(fitted)} model fits, {len(skipped)} analyses skipped; "
        f"{int((~fitted['converged']).sum())} fits did not converge, "
        f"{int(fitted['singular'].sum())} are singular (a variance at 0).",
    ]
    small = fitted[fitted["facets_lt5"].astype(str) != ""]
    if not small.empty:
        facets = sorted({f for v in small["facets_lt5"] for f in str(v).split(";") if f})
        lines.append(
            f"{len(small)} fits have facets with fewer than 5 levels ({', '.join(facets)}): "
            "their variance is poorly estimated."
        )
    for reason in sorted(set(notes["reason"]) - {""}):
        lines.append(f"Note: {reason}")
    for reason in sorted(set(skipped["reason"]) - {""}):
        lines.append(f"Skipped: {reason}")
    return lines


def qq_points(rows: pd.DataFrame) -> pd.DataFrame:
    """The QQ points of qq.csv rows (one per fit, its quantiles in ``sample``): one row per
    quantile with its normal quantile (``theoretical``), the fit's ``subset`` and ``model``."""
    theoretical = qq_theoretical()
    frames = [
        pd.DataFrame(
            {
                "subset": subset,
                "model": model,
                "theoretical": theoretical,
                "sample": qq_values(cell),
            }
        )
        for subset, model, cell in rows[["subset", "model", "sample"]].itertuples(index=False)
    ]
    columns = ["subset", "model", "theoretical", "sample"]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)


def _overlaid(qq: pd.DataFrame, metric: str) -> list[tuple[str, pd.DataFrame]]:
    """One QQ panel per analysis, every subset's model a line in it."""
    panels = []
    for analysis, short in QQ_ANALYSES.items():
        rows = select(qq, metric=metric, analysis=analysis)
        if not rows.empty:
            panels.append((f"{rows['subset'].nunique()} × {short}", qq_points(rows)))
    return panels


def qq_figures(tables: dict[str, pd.DataFrame], settings: ReportSettings) -> list[Figure]:
    figures = []
    qq = tables["qq"]
    for metric in settings.metrics:
        panels = []
        for analysis, short in QQ_ANALYSES.items():
            rows = select(qq, metric=metric, analysis=analysis)
            for subset in sorted(set(rows["subset"])) if not rows.empty else []:
                name = short
                if analysis == VARIANCE or len(settings.systems) > 2:
                    name = f"{name}: {subset}"
                panels.append((name, qq_points(select(rows, subset=subset))))
        if len(panels) > QQ_MOST_PANELS:
            panels = _overlaid(qq, metric)
        if panels:
            key = f"qq-{metric}"
            title = f"{metric_label(metric)}: residual QQ plots"
            figures.append(
                make_figure(
                    qq_panels(panels, title=title, key=key),
                    f"{title} of the main models (H1 of each comparison, the VCA per system).",
                    key,
                )
            )
    return figures


def build(tables: dict[str, pd.DataFrame], settings: ReportSettings) -> Diagnostics:
    section = Diagnostics()
    diagnostics = tables["diagnostics"]
    section.summary = summary_lines(diagnostics)
    if not diagnostics.empty:
        section.table = frame_table(
            diagnostics, DIAGNOSTICS_COLUMNS, csv=settings.link("diagnostics")
        )
    section.qq = qq_figures(tables, settings)
    classical = tables[CLASSICAL_TABLE]
    if not classical.empty:
        section.classical = frame_table(
            classical,
            [
                Column("metric", "metric", metric_label, numeric=False),
                Column("test", "test", text, numeric=False),
                Column("subset", "systems", text, numeric=False),
                difference_column("difference of means, points"),
                Column("statistic", "statistic", significant),
                *p_columns(settings.alpha, holm=False),
                Column("n", "n", integer),
                Column("samples", "resamples", integer),
                Column("seed", "seed", text, numeric=False),
                Column("note", "note", text, numeric=False, cls="wrap"),
            ],
            csv=settings.link(CLASSICAL_TABLE),
        )
    return section
