"""The report's header: experiment name, systems and run counts, segments, metrics, date."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from infrepro.core.decisions import RECORDED_LOOKS, look_phrase
from infrepro.core.registry import ALL_RUNS, SUMMARY
from infrepro.io.errors import plural
from infrepro.report.formatting import integer, is_missing
from infrepro.report.inputs import ReportSettings
from infrepro.report.labels import better_label, metric_label, property_label
from infrepro.report.query import select

NO_BREAK_HYPHEN = "\u2011"


LISTED = 3  # more systems than this: the header counts them instead of listing them


@dataclass
class Header:
    """Facts shown at the top of the report, as (label, text) pairs, plus warnings."""

    name: str
    date: str
    facts: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _runs_per_system(tables: dict[str, pd.DataFrame], settings: ReportSettings) -> str:
    """Each system with its number of runs; past :data:`LISTED` systems the baseline's and a
    count of systems per number of runs (the decision tables list every system)."""
    metric = settings.metrics[0] if settings.metrics else ""
    counts = {}
    for system in settings.systems:
        n = _runs(tables, metric, system)
        counts[system] = "? runs" if n is None else plural(n, "run")
    if len(settings.systems) <= LISTED:
        return "; ".join(
            f"{system}{' (baseline)' if system == settings.baseline else ''}: {count}"
            for system, count in counts.items()
        )
    others = [c for s, c in counts.items() if s != settings.baseline]
    tally = ", ".join(
        f"{others.count(c)} system{'' if others.count(c) == 1 else 's'} with {c}"
        for c in sorted(set(others), key=others.index)
    )
    baseline = counts.get(settings.baseline, "? runs")
    return f"{len(settings.systems)} systems: {settings.baseline} (baseline): {baseline}; {tally}"


def _runs(tables: dict[str, pd.DataFrame], metric: str, system: str) -> int | None:
    """A system's runs: from run_summary.csv (the classical analysis) or, when only other
    analyses ran, summary.csv (the decision's); None when neither holds the system."""
    for table, column in (("run_summary", "n_runs"), (SUMMARY, "runs")):
        row = select(tables.get(table, pd.DataFrame()), metric=metric, system=system)
        if not row.empty and not is_missing(row[column].iloc[0]):
            return int(float(row[column].iloc[0]))
    return None


def _segments(tables: dict[str, pd.DataFrame]) -> str:
    glrt = select(tables["glrt"], analysis=ALL_RUNS)
    if glrt.empty:
        glrt = tables["glrt"]
    if glrt.empty:
        return "?"
    return integer(glrt["n_segments"].max())


def _computed_on(tables: dict[str, pd.DataFrame]) -> str:
    bins = tables["property_bins"]
    if bins.empty or "computed_on" not in bins:
        return ""
    places = sorted(set(bins["computed_on"]) - {""})
    return ", ".join(places)


def _look(settings: ReportSettings) -> str:
    """From the second recorded look on: the look this run is, where the ledger records it, and
    what changed since the last look (the runs each system gained; the ledger refuses a run
    removed or changed after its look, docs/method.md §4e.12); '' at the first look (the line
    under each decision table says it) and when the runs declare their looks."""
    looks = settings.looks
    look = int(looks.get("look") or 1)
    if looks.get("source") != RECORDED_LOOKS or look < 2:
        return ""
    where = f"recorded in {looks.get('path')}"
    added = looks.get("added") or {}
    gained = "; ".join(f"{system}: +{plural(int(n), 'run')}" for system, n in added.items())
    since = f"; new since look {look - 1}: {gained}" if gained else ""
    return f"{look_phrase(look, RECORDED_LOOKS)}, {where}{since}"


def build(tables: dict[str, pd.DataFrame], settings: ReportSettings) -> Header:
    header = Header(name=settings.name, date=settings.date or "not set")
    header.facts.append(("Systems", _runs_per_system(tables, settings)))
    header.facts.append(("Test segments", _segments(tables)))
    header.facts.append(
        (
            "Metrics",
            "; ".join(
                f"{metric_label(m).replace('-', NO_BREAK_HYPHEN)} "
                f"({better_label(settings.better.get(m, 'higher'))})"
                for m in settings.metrics
            ),
        )
    )
    if settings.facets:
        header.facts.append(("Meta-parameters (facets)", ", ".join(settings.facets)))
    if settings.properties:
        where = _computed_on(tables)
        text = ", ".join(property_label(p) for p in settings.properties)
        header.facts.append(
            ("Data properties", text + (f" (computed on the {where})" if where else ""))
        )
    runs = tables["run_summary"]
    if not runs.empty:  # a system with one run has nothing to select from
        runs = runs[runs["n_runs"].astype(float) >= 2]
    selected = sorted(set(runs.get("selected_by", pd.Series(dtype=str))))
    if selected:
        header.facts.append(
            ("Best run selected by", ", ".join(s.replace("_", " ") for s in selected))
        )
        if any("optimistic" in s for s in selected):
            header.warnings.append(
                "The best runs were selected by their test-set mean (no dev scores): the "
                "best-vs-best comparison is optimistic, and no decision rests on it."
            )
    look = _look(settings)
    if look:
        header.facts.append(("This run", look))
    header.facts.append(("Significance level", f"α = {settings.alpha:g}"))
    return header
