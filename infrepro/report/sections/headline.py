"""The headline: per metric and competitor, best-vs-best against all runs, reliability, drivers."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from ..formatting import fixed, is_missing, p_text, points
from ..htmltable import Cell, Column, Table, rows_table
from ..inputs import ReportSettings
from ..labels import better_label, metric_label, property_label
from ..query import first, ordered, pair, select
from ..verdict import Outcome, Verdict, classify, sentence

COMPARISONS = (
    ("best_vs_best", "best vs best"),
    ("all_runs", "all runs, paper model"),
    ("all_runs_run_aware", "all runs, run-aware"),
)


@dataclass
class Card:
    """One metric x competitor: the verdict, its table and the short reading of the drivers."""

    metric: str
    label: str
    direction: str
    competitor: str
    verdict: Verdict
    sentence: str
    table: Table
    notes: list[str] = field(default_factory=list)


def outcome(
    tables: dict[str, pd.DataFrame], metric: str, analysis: str, subset: str, better: str
) -> Outcome | None:
    """The contrast and GLRT of one comparison as an :class:`Outcome` (None if not fitted)."""
    contrast = first(tables["contrasts"], metric=metric, analysis=analysis, subset=subset)
    if contrast is None or is_missing(contrast["estimate"]):
        return None
    return Outcome(
        float(contrast["estimate"]),
        p_text(contrast["p_holm"]),
        float(contrast["log10_p_holm"]),
        better,
    )


def _model_mean(
    tables: dict[str, pd.DataFrame], metric: str, analysis: str, subset: str, system: str
) -> object:
    means = tables["means"]
    for where in (subset, "all systems"):
        row = first(
            means, metric=metric, analysis=analysis, subset=where, group=system, kind="model"
        )
        if row is not None:
            return row["estimate"]
    return None


def comparison_table(
    tables: dict[str, pd.DataFrame], settings: ReportSettings, metric: str, competitor: str
) -> Table:
    """best vs best, all runs (paper) and all runs (run-aware): means, difference, d, p."""
    subset = pair(settings.baseline, competitor)
    headers = [
        Column("comparison", "comparison", numeric=False),
        Column("baseline", f"{settings.baseline}", title="model mean, points"),
        Column("competitor", f"{competitor}", title="model mean, points"),
        Column("difference", "Δ", title=f"{settings.baseline} − {competitor}, points"),
        Column("effect", "effect size", title="Δ / residual SD of the H1 fit"),
        Column("p", "p", title="GLRT p-value (Holm-adjusted over pairwise comparisons)"),
    ]
    rows = []
    for analysis, label in COMPARISONS:
        contrast = first(tables["contrasts"], metric=metric, analysis=analysis, subset=subset)
        glrt = first(tables["glrt"], metric=metric, analysis=analysis, subset=subset)
        if contrast is None:
            continue
        base = _model_mean(tables, metric, analysis, subset, settings.baseline)
        other = _model_mean(tables, metric, analysis, subset, competitor)
        detail = ""
        if glrt is not None:
            detail = f"{glrt['note']}; {int(glrt['n_runs'])} runs, {int(glrt['n_obs'])} rows"
        rows.append(
            [
                Cell(label, title=detail),
                Cell(points(base), _number(base)),
                Cell(points(other), _number(other)),
                Cell(points(contrast["estimate"], sign=True), _number(contrast["estimate"])),
                Cell(
                    f"{fixed(contrast['effect_size'], sign=True)} {contrast['effect_label']}",
                    _number(contrast["effect_size"]),
                ),
                Cell(
                    p_text(contrast["p_holm"]),
                    _number(contrast["log10_p_holm"]),
                    css="p-sig"
                    if float(contrast["log10_p_holm"]) < math.log10(settings.alpha)
                    else "p-ns",
                ),
            ]
        )
    return rows_table(headers, rows, csv=settings.link("contrasts"))


def _number(value: object) -> float | None:
    return None if is_missing(value) else float(value)  # type: ignore[arg-type]


def reliability_note(tables: dict[str, pd.DataFrame], metric: str, systems: list[str]) -> str:
    """``Reliability φ: baseline 0.77 (good), competitor 0.65 (moderate); φ ≥ 0.8 needs ...``"""
    parts, needs = [], []
    for system in systems:
        row = first(tables["reliability"], metric=metric, system=system)
        if row is None:
            continue
        parts.append(f"{system} {fixed(row['phi'])} ({row['label']})")
        if not is_missing(row["n_per_facet_for_phi_08"]):
            needs.append(
                f"{int(row['n_per_facet_for_phi_08'])} per facet level "
                f"({int(row['runs_for_phi_08'])} runs) for {system}"
            )
    if not parts:
        return ""
    text = "Reliability φ: " + ", ".join(parts)
    return text + ("; φ ≥ 0.8 needs " + ", ".join(needs) if needs else "") + "."


def metaparameter_note(tables: dict[str, pd.DataFrame], metric: str, systems: list[str]) -> str:
    """``Meta-parameters: lambda explains 16.1% of competitor's score variance (...)``."""
    parts = []
    for system in reversed(systems):
        ranked = select(tables["importance"], metric=metric, system=system)
        if ranked.empty:
            continue
        ranked = ranked.sort_values("rank")
        top = ranked.iloc[0]
        rest = ", ".join(f"{r.facet} {fixed(r.percent, 1)}%" for r in ranked.iloc[1:].itertuples())
        parts.append(
            f"{top['facet']} explains {fixed(top['percent'], 1)}% of {system}'s score variance"
            + (f" ({rest})" if rest else "")
        )
    return "Meta-parameters: " + "; ".join(parts) + "." if parts else ""


def input_note(
    tables: dict[str, pd.DataFrame],
    settings: ReportSettings,
    metric: str,
    competitor: str,
    bins: dict[str, list[str]],
) -> str:
    """The property with the strongest system x property interaction and the gap per bin."""
    tests = select(tables["glrt"], metric=metric, analysis="conditional_interaction")
    tests = tests[~tests["property"].str.endswith("_bin")] if not tests.empty else tests
    if tests.empty:
        return ""
    strongest = tests.sort_values(["log10_p", "property"]).iloc[0]
    prop = str(strongest["property"])
    label = property_label(prop)
    if float(strongest["log10_p"]) >= math.log10(settings.alpha):
        return (
            f"Inputs: no data property changes the difference significantly (smallest "
            f"interaction p = {strongest['p_value']}, {label})."
        )
    head = (
        f"Inputs: the difference depends most on {label} (interaction p = {strongest['p_value']})"
    )
    cells = select(
        tables["contrasts"],
        metric=metric,
        analysis="conditional",
        level1=settings.baseline,
        level2=competitor,
    )
    cells = cells[cells["property"].isin([f"{prop}_bin", prop])] if not cells.empty else cells
    if cells.empty:
        return head + "."
    order = ordered(list(cells["bin"]), bins.get(prop, []))
    sign = -1.0 if settings.better.get(metric) == "higher" else 1.0
    gaps = {b: sign * float(cells[cells["bin"] == b]["estimate"].iloc[0]) for b in order}
    winners = {b: competitor if gap > 0 else settings.baseline for b, gap in gaps.items()}
    if len(set(winners.values())) == 1:
        winner = next(iter(winners.values()))
        largest = max(gaps, key=lambda b: abs(gaps[b]))
        smallest = min(gaps, key=lambda b: abs(gaps[b]))
        return (
            f"{head}: {winner} is better in every {label} bin, most on {largest} "
            f"({points(abs(gaps[largest]))} points), least on {smallest} "
            f"({points(abs(gaps[smallest]))})."
        )
    pieces = [f"{winners[b]} better on {b} ({points(abs(gaps[b]))})" for b in order]
    return f"{head}: " + "; ".join(pieces) + " points."


def build(
    tables: dict[str, pd.DataFrame], settings: ReportSettings, bins: dict[str, list[str]]
) -> list[Card]:
    """One card per metric and competitor."""
    cards = []
    for metric in settings.metrics:
        better = settings.better.get(metric, "higher")
        for competitor in settings.competitors:
            subset = pair(settings.baseline, competitor)
            outcomes = [outcome(tables, metric, a, subset, better) for a, _ in COMPARISONS]
            verdict = classify(
                *outcomes, alpha=settings.alpha, competitor=competitor, baseline=settings.baseline
            )
            notes = [
                reliability_note(tables, metric, settings.systems),
                metaparameter_note(tables, metric, settings.systems),
                input_note(tables, settings, metric, competitor, bins),
            ]
            cards.append(
                Card(
                    metric=metric,
                    label=metric_label(metric),
                    direction=better_label(better),
                    competitor=competitor,
                    verdict=verdict,
                    sentence=sentence(*outcomes, settings.baseline, competitor),
                    table=comparison_table(tables, settings, metric, competitor),
                    notes=[n for n in notes if n],
                )
            )
    return cards
