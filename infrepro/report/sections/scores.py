"""Score distributions: run-level mean scores per system, the best run marked (thesis Fig. 2.4)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from infrepro.core.vocabulary import RUN, SYSTEM
from infrepro.plots import MOST_UPRIGHT, run_distribution
from infrepro.report.figure import Figure, make_figure
from infrepro.report.formatting import integer, points, significant
from infrepro.report.htmltable import Column, Table, frame_table, text
from infrepro.report.inputs import ReportSettings
from infrepro.report.labels import better_label, metric_label
from infrepro.report.query import ordered, select

COLOUR_MIN_PERCENT = 1.0
COLOUR_MAX_LEVELS = 8


@dataclass
class Scores:
    figures: list[Figure] = field(default_factory=list)
    summary: Table | None = None
    runs: Table | None = None


def colouring(
    tables: dict[str, pd.DataFrame], runs: pd.DataFrame, metric: str, systems: list[str]
) -> dict[str, tuple[str, list[str]]]:
    """Colour a system's runs by its dominant facet when that facet explains at least 1% of the
    variance and has at most 8 levels (so the colours tell where the spread comes from)."""
    result = {}
    for system in systems:
        top = select(tables["importance"], metric=metric, system=system, rank="1")
        if top.empty or float(top["percent"].iloc[0]) < COLOUR_MIN_PERCENT:
            continue
        facet = str(top["facet"].iloc[0])
        if facet not in runs:
            continue
        levels = ordered(sorted(set(runs.loc[runs[SYSTEM] == system, facet]) - {""}), [])
        if 2 <= len(levels) <= COLOUR_MAX_LEVELS:
            result[system] = (facet, levels)
    return result


def by_mean(runs: pd.DataFrame, systems: list[str], better: str) -> list[str]:
    """The systems best first by their mean over runs when there are more than a plot shows
    upright (:data:`~infrepro.plots.MOST_UPRIGHT`), else in the experiment's order."""
    if len(systems) <= MOST_UPRIGHT:
        return systems
    means = runs.groupby(SYSTEM)["value"].mean().to_dict()
    sign = -1.0 if better == "higher" else 1.0
    known = sorted((s for s in systems if s in means), key=lambda s: sign * means[s])
    return known + [s for s in systems if s not in means]


def build(tables: dict[str, pd.DataFrame], settings: ReportSettings) -> Scores:
    section = Scores()
    run_means = tables["run_means"]
    for metric in settings.metrics:
        runs = select(run_means, metric=metric).copy()
        if runs.empty:
            continue
        runs["value"] = runs["mean"] * 100
        label = metric_label(metric)
        svg = run_distribution(
            runs,
            by_mean(runs, settings.systems, settings.better.get(metric, "higher")),
            ylabel=(
                f"{label}, {settings.unit(metric)} "
                f"({better_label(settings.better.get(metric, 'higher'))})"
            ),
            title=f"{label}: mean score of every run",
            key=f"dist-{metric}",
            colour_by=colouring(tables, runs, metric, settings.systems),
        )
        section.figures.append(
            make_figure(
                svg,
                f"{label}: one point per run (its mean over all test segments); boxes show "
                "median and quartiles; the star marks the run selected as best.",
                f"dist-{metric}",
            )
        )
    summary = tables["run_summary"]
    if not summary.empty:
        section.summary = frame_table(
            summary,
            [
                Column("metric", "metric", metric_label, numeric=False),
                Column(SYSTEM, SYSTEM, numeric=False),
                Column("n_runs", "runs", integer),
                Column("mean", "mean", points, title="mean of the run means, points"),
                Column("sd", "SD", points, title="standard deviation of the run means, points"),
                Column("min", "min", points),
                Column("max", "max", points),
                Column("best_run", "best run", text, numeric=False),
                Column("best_mean", "best run's mean", points),
                Column("selected_by", "selected by", text, numeric=False),
            ],
            csv=settings.link("run_summary"),
        )
    if not run_means.empty:
        facets = [f for f in settings.facets if f in run_means]
        columns = [
            Column("metric", "metric", metric_label, numeric=False),
            Column(RUN, "run", text, numeric=False),
            Column(SYSTEM, SYSTEM, numeric=False),
            *[Column(f, f, text, numeric=False) for f in facets],
        ]
        if "dev_score" in run_means and run_means["dev_score"].notna().any():
            columns.append(Column("dev_score", "dev score", lambda v: significant(v, 4)))
        columns += [
            Column("mean", "mean (points)", points),
            Column("n_segments", "segments", integer),
            Column(
                "is_best", "best", lambda v: "★" if v is True or v == "True" else "", numeric=False
            ),
        ]
        section.runs = frame_table(run_means, columns, csv=settings.link("run_means"))
    return section
