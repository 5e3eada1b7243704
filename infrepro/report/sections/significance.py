"""Significance of the system comparisons: the run-aware t tests (REML, Kenward-Roger or
Satterthwaite df) the verdict comes from, the paper's GLRTs (labelled), contrasts with effect
sizes and model means."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from infrepro.core.registry import COMPARISON, COMPARISON_MODELS
from infrepro.core.vocabulary import EFFECT_SD_TEXT, SYSTEM
from infrepro.report.formatting import fixed, integer, points
from infrepro.report.htmltable import Column, Table, frame_table, text
from infrepro.report.inputs import ReportSettings
from infrepro.report.labels import analysis_label, metric_label
from infrepro.report.pcolumns import difference_column, p_columns
from infrepro.report.sections.properties import split_rows, top_systems


@dataclass
class Significance:
    tests: Table
    glrt: Table
    contrasts: Table
    means: Table
    holm: bool
    # beyond MOST_LINES systems: the pairs of the other systems, one click away
    more: dict[str, Table] = field(default_factory=dict)


def _comparisons(frame: pd.DataFrame, settings: ReportSettings) -> pd.DataFrame:
    if frame.empty:
        return frame
    rows = frame[frame["analysis"].isin(COMPARISON_MODELS)].copy()
    rows["_m"] = rows["metric"].map({m: i for i, m in enumerate(settings.metrics)})
    rows["_a"] = rows["analysis"].map({a: i for i, a in enumerate(COMPARISON_MODELS)})
    return rows.sort_values(["_m", "_a"], kind="stable")


LEAD = (
    Column("metric", "metric", metric_label, numeric=False),
    Column("analysis", analysis_label(COMPARISON), analysis_label, numeric=False),
)


def build(tables: dict[str, pd.DataFrame], settings: ReportSettings) -> Significance:
    holm = len(settings.systems) > 2
    p = p_columns(settings.alpha, holm)

    top = top_systems(tables, settings)
    more: dict[str, Table] = {}

    def table(name: str, columns: list[Column]) -> Table:
        """The comparisons of one table, metric and analysis first: the top systems' pairs;
        the others' in ``more``."""
        rows = _comparisons(tables[name], settings)
        key = "group" if name == "means" else "subset"
        shown, rest = split_rows(rows, top, column=key)
        more[name] = frame_table(rest, [*LEAD, *columns], csv=settings.link(name))
        return frame_table(shown, [*LEAD, *columns], csv=settings.link(name))

    tests = table(
        "tests",
        [
            Column("subset", "systems", text, numeric=False),
            difference_column("points"),
            Column("se", "SE", points),
            Column("statistic", "t", lambda v: fixed(v, 2)),
            Column("dendf", "df", lambda v: fixed(v, 2), title="denominator df"),
            *p,
            Column("method", "df method", text, numeric=False),
            Column("n_runs", "runs", integer),
            Column("note", "note", text, numeric=False, cls="wrap"),
            Column("model", "model (REML)", text, numeric=False, cls="code"),
        ],
    )
    glrt = table(
        "glrt",
        [
            Column("subset", "systems", text, numeric=False),
            Column("h1", "H1", text, numeric=False, cls="code"),
            Column("h0", "H0", text, numeric=False, cls="code"),
            Column("n_obs", "rows", integer),
            Column("n_runs", "runs", integer),
            Column("loglik_h1", "logLik H1", lambda v: fixed(v, 2)),
            Column("loglik_h0", "logLik H0", lambda v: fixed(v, 2)),
            Column("lr_stat", "LR", lambda v: fixed(v, 2)),
            Column("df", "df", integer),
            *p,
        ],
    )
    contrasts = table(
        "contrasts",
        [
            Column("level1", "system 1", text, numeric=False),
            Column("level2", "system 2", text, numeric=False),
            difference_column("difference of model means, points"),
            Column("se", "SE", points),
            Column("effect_size", "d", lambda v: fixed(v, 3, sign=True)),
            Column("effect_label", "size", text, numeric=False),
            Column("p_method", "test", text, numeric=False),
            *p,
            Column(
                "effect_sd",
                "SD (d's denominator)",
                points,
                title=f"{EFFECT_SD_TEXT}, points",
            ),
        ],
    )
    means = table(
        "means",
        [
            Column("group", SYSTEM, text, numeric=False),
            Column("estimate", "model mean", points, title="estimated marginal mean, points"),
            Column("se", "SE", points),
            Column("n_obs", "rows", integer),
        ],
    )
    return Significance(tests, glrt, contrasts, means, holm, more)
