"""The headline: per metric, what every card shares said once, then one card per competitor
rendered from its decision record against the baseline (docs/method.md §4b.6, §4c.11): the
badge and sentence of the record, best vs best as the seeds' reproduction, the facet-aware
reading, the paper's all-runs GLRT and the bootstrap check beside it (labelled, never a
verdict), and the pair's inputs line. With more than ``TOP`` competitors the cards of the ``TOP``
ranked first are shown and the rest collapsed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd

from infrepro.core.decisions import PairDecision, df_number
from infrepro.core.registry import (
    ALL_RUNS,
    BEST_VS_BEST,
    CONDITIONAL,
    EFFECT_SCALE,
    FACET_AWARE,
    HEADLINE_BOOTSTRAP,
    SUMMARY,
    interaction_only,
    run_aware,
)
from infrepro.core.vocabulary import (
    BIN_SUFFIX,
    CONVERGED,
    NOT_CONVERGED,
    SYSTEM,
    VCA_RUN_AWARE,
    bin_column,
)
from infrepro.core.vocabulary import EFFECT_SD_TEXT as EFFECT_SD
from infrepro.io.errors import plural
from infrepro.report.decisions import Book, book, decision_line, interval, p_text, sentence
from infrepro.report.formatting import fixed, flag, is_missing, is_significant, points
from infrepro.report.formatting import p_text as cell_p
from infrepro.report.htmltable import Cell, Column, Table, rows_table
from infrepro.report.inputs import ReportSettings
from infrepro.report.labels import (
    PAPER_TEST,
    better_label,
    metric_label,
    property_label,
    statistic_name,
    test_label,
)
from infrepro.report.query import first, ordered, pair, select
from infrepro.report.verdict import (
    Verdict,
    badge,
    bootstrap_note,
    generalisation,
    paper_note,
    survival_line,
)

TOP = 5  # competitors whose cards are shown open; the rest are one click away


@dataclass
class Card:
    """One metric x competitor: the record's badge and sentence, the lines beside it, the table
    of the tests shown for the pair, and its inputs line."""

    metric: str
    competitor: str
    verdict: Verdict
    sentence: str
    table: Table
    beside: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    key: str = ""  # the record's key, "metric|family|reference|system"


@dataclass
class MetricCards:
    """One metric's cards: what they share (said once), the cards shown and the collapsed."""

    metric: str
    label: str
    direction: str
    shared: list[str]
    cards: list[Card]
    more: list[Card]


def record_key(record: PairDecision) -> str:
    return "|".join(record.key)


def _number(value: object) -> float | None:
    return None if is_missing(value) else float(value)  # type: ignore[arg-type]


def _improvement(difference: object, better: str) -> float | None:
    """level1 − level2 (baseline − competitor) of contrasts.csv as the improvement."""
    value = _number(difference)
    if value is None:
        return None
    return value if better == "lower" else -value


def comparison_table(
    tables: dict[str, pd.DataFrame], settings: ReportSettings, record: PairDecision
) -> Table:
    """The tests shown for the pair, each labelled with its model and its p's family: the
    decision (the record), best vs best and the paper's all-runs GLRT (contrasts.csv, Holm over
    the pairwise GLRTs); improvements in the metric's direction (positive = better)."""
    metric, competitor = record.metric, record.system
    better = settings.better.get(metric, "higher")
    subset = pair(settings.baseline, competitor)
    headers = [
        Column("kind", "test shown", numeric=False),
        Column("test", "model and test", numeric=False, title="hover for the model formula"),
        Column(
            "improvement",
            "improvement",
            title=f"positive = better, {settings.unit(record.metric)}",
        ),
        Column("effect", "d", title=f"d = improvement / {EFFECT_SD} (one SD per metric)"),
        Column("p", "p", numeric=False, title="each row's own p, with its family"),
    ]
    scale = _effect_sd(tables, metric)
    multi = min(record.runs_reference, record.runs_system) >= 2

    def d_cell(value: float | None) -> Cell:
        if value is None or scale is None or not multi:
            return Cell("–")
        d = value / scale
        return Cell(fixed(d, 2, sign=True), d)

    rows = [
        [
            Cell("decision (verdict)"),
            Cell(
                f"model M, t, {record.df_method} df {df_number(record.df)}"
                if record.df_method
                else record.test,
                title=record.model,
            ),
            Cell(interval(record), record.improvement),
            d_cell(record.improvement),
            Cell(p_text(record).removeprefix("p = "), record.log10_p_adjusted),
        ]
    ]
    for analysis, label in (
        (BEST_VS_BEST, "best vs best (seeds' reproduction)"),
        (ALL_RUNS, "all runs, paper's model"),
    ):
        contrast = first(tables["contrasts"], metric=metric, analysis=analysis, subset=subset)
        if contrast is None:
            continue
        glrt = first(tables["glrt"], metric=metric, analysis=analysis, subset=subset)
        detail = "" if glrt is None else f"{glrt['h1']} vs {glrt['h0']}; {glrt['note']}"
        value = _improvement(contrast["estimate"], better)
        family = " (Holm over pairwise GLRTs)" if len(settings.competitors) > 1 else ""
        rows.append(
            [
                Cell(label),
                Cell(PAPER_TEST, title=detail),
                Cell(points(value, sign=True), value),
                d_cell(value),
                Cell(cell_p(contrast["p_holm"]) + family, _number(contrast["log10_p_holm"])),
            ]
        )
    return rows_table(headers, rows, csv=settings.link("decisions"))


def _effect_sd(tables: dict[str, pd.DataFrame], metric: str) -> float | None:
    """The metric's one effect-size scale (contrasts.csv ``effect_sd``)."""
    rows = select(tables["contrasts"], metric=metric)
    values = [float(v) for v in rows.get("effect_sd", []) if not is_missing(v)]
    return values[0] if values and values[0] > 0 else None


def effect_note(tables: dict[str, pd.DataFrame], metric: str) -> str:
    """``d = improvement / 1.20 points: the SD of a run's mean score, from <model> (REML)``."""
    scale = _effect_sd(tables, metric)
    if scale is None:
        return ""
    fit = first(tables["diagnostics"], metric=metric, analysis=EFFECT_SCALE)
    model = f", components from {fit['model']} (REML)" if fit is not None else ""
    return (
        f"Effect sizes: d = improvement / {EFFECT_SD} = improvement / {points(scale)} "
        f"points{model}: the SD that decides the run-aware tests, so Cohen's labels are in units "
        "of retraining noise; the same denominator for every d of this metric; no d where a "
        "system has one run."
    )


def bootstrap_row(tables: dict[str, pd.DataFrame], metric: str, subset: str) -> dict | None:
    """The headline's parametric-bootstrap LRT row of tests.csv, when requested."""
    row = first(tables["tests"], metric=metric, analysis=HEADLINE_BOOTSTRAP, subset=subset)
    return None if row is None else dict(row)


def facet_groups(tables: dict[str, pd.DataFrame], metric: str, subset: str) -> str:
    """The shared facets of the facet-aware model, from its note."""
    test = first(tables["tests"], metric=metric, analysis=FACET_AWARE, subset=subset)
    if test is None:
        return ""
    note = str(test["note"])
    inside = note[note.find("(") + 1 : note.rfind(")")] if "(" in note else ""
    if not inside:
        return ""
    parts = [p.split(": ", 1) for p in inside.split("; ")]
    return "; ".join(
        f"{who[0]}'s runs share levels of {who[1]}" if len(who) == 2 else who[0] for who in parts
    )


def _others(label: str, values: list[float], where: str, digits: int = 2, unit: str = "") -> str:
    """``; the other 195 systems 0.62-0.80 (each under Reliability)``: what the note does not
    list system by system (the systems whose cards are collapsed), as a range."""
    if not values:
        return ""
    low, high = fixed(min(values), digits), fixed(max(values), digits)
    span = low if low == high else f"{low}–{high}"
    return f"; {label} of the other {plural(len(values), SYSTEM)} {span}{unit} (each {where})"


def reliability_note(
    tables: dict[str, pd.DataFrame], metric: str, systems: list[str], others: Sequence[str] = ()
) -> str:
    """``Reliability φ of one run's scores: baseline 0.77 (good), ...; the mean of n runs per
    facet level reaches 0.8 ...``, each of ``systems``; of ``others``, the range of φ."""
    phis = []
    for system in others:
        row = first(tables["reliability"], metric=metric, system=system, vca=VCA_RUN_AWARE)
        if row is not None and flag(row.get(CONVERGED)) is not False:
            phis.append(float(row["phi"]))
    parts, needs = [], []
    for system in systems:
        row = first(tables["reliability"], metric=metric, system=system, vca=VCA_RUN_AWARE)
        if row is None:
            continue
        retrain, setting = row.get("retrain_sd_points"), row.get("metaparam_sd_points")
        sd = (
            ""
            if is_missing(retrain)
            else f"; mean score SD across retraining with the same recipe {fixed(retrain)} "
            f"points, across meta-parameter settings {fixed(setting)}"
        )
        if flag(row.get(CONVERGED)) is False:  # docs/method.md §4.6.1: no φ from such a fit
            parts.append(f"{system} not estimated (VCA fit {NOT_CONVERGED}{sd})")
            continue
        parts.append(f"{system} {fixed(row['phi'])} ({row['label']}{sd})")
        if not is_missing(row["n_per_facet_for_phi_08"]):
            needs.append(
                f"{int(row['n_per_facet_for_phi_08'])} per facet level "
                f"({plural(int(row['runs_for_phi_08']), 'run')}) for {system}"
            )
    if not parts:
        return ""
    text = "Reliability φ of a single run's segment scores: " + ", ".join(parts)
    text += _others("φ", phis, "under Reliability")
    if needs:
        text += "; averaging over runs, φ ≥ 0.8 needs " + ", ".join(needs)
    return text + " (the D-study under Reliability)."


def metaparameter_note(
    tables: dict[str, pd.DataFrame], metric: str, systems: list[str], others: Sequence[str] = ()
) -> str:
    """``Meta-parameters: lambda explains 16.1% of competitor's score variance (...)``, each of
    ``systems``; of ``others``, the range of the first meta-parameter's share."""
    shares = []
    for system in others:
        ranked = select(tables["importance"], metric=metric, system=system)
        if not ranked.empty:
            shares.append(float(ranked.sort_values("rank").iloc[0]["percent"]))
    parts = []
    for system in reversed(systems):
        ranked = select(tables["importance"], metric=metric, system=system)
        vca = select(tables["variance_components"], metric=metric, system=system)
        if ranked.empty and CONVERGED in vca and not vca[CONVERGED].astype(bool).all():
            parts.append(f"no shares for {system} (VCA fit {NOT_CONVERGED})")
            continue
        if ranked.empty:
            continue
        ranked = ranked.sort_values("rank")
        top = ranked.iloc[0]
        rest = ", ".join(f"{r.facet} {fixed(r.percent, 1)}%" for r in ranked.iloc[1:].itertuples())
        parts.append(
            f"{top['facet']} explains {fixed(top['percent'], 1)}% of {system}'s score variance"
            + (f" ({rest})" if rest else "")
        )
    if not parts:
        return ""
    share = _others("the first meta-parameter's share", shares, "under Meta-parameters", 1, "%")
    return "Meta-parameters: " + "; ".join(parts) + share + "."


def input_note(
    tables: dict[str, pd.DataFrame],
    settings: ReportSettings,
    record: PairDecision,
    bins: dict[str, list[str]],
) -> str:
    """The property with the strongest run-aware system x property interaction (Holm p over
    the metric's property tests) and the run-aware gap per bin."""
    metric, competitor = record.metric, record.system
    tests = select(
        tables["tests"], metric=metric, analysis=interaction_only(run_aware(CONDITIONAL))
    )
    tests = tests[~tests["property"].str.endswith(BIN_SUFFIX)] if not tests.empty else tests
    if tests.empty:
        return ""
    strongest = tests.sort_values(["log10_p_holm", "property"]).iloc[0]
    prop = str(strongest["property"])
    label = property_label(prop)
    model = test_label(
        "run-aware", statistic_name(strongest["numdf"]), strongest["method"], strongest["dendf"]
    )
    if not is_significant(strongest["log10_p_holm"], settings.alpha):
        return (
            f"Inputs: no data property changes the difference significantly (smallest "
            f"interaction p = {strongest['p_holm']}, {label}; {model}, Holm over the "
            f"{len(tests)} property tests)."
        )
    if record.few_runs:
        return (
            f"Inputs: not judged: the strongest interaction ({label}, p = "
            f"{strongest['p_holm']}; {model}) rests on runs' own slopes, and {record.few_runs}."
        )
    head = (
        f"Inputs: the difference depends most on {label} (interaction p = "
        f"{strongest['p_holm']}; {model}, Holm over the {len(tests)} property tests)"
    )
    cells = select(
        tables["contrasts"],
        metric=metric,
        analysis=run_aware(CONDITIONAL),
        level1=settings.baseline,
        level2=competitor,
    )
    cells = cells[cells["property"] == bin_column(prop)] if not cells.empty else cells
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
            f"{head}: {winner} is ahead in every {label} bin (run-aware cell means), most on "
            f"{largest} ({points(abs(gaps[largest]))} points), least on {smallest} "
            f"({points(abs(gaps[smallest]))})."
        )
    pieces = [f"{winners[b]} ahead on {b} ({points(abs(gaps[b]))})" for b in order]
    return f"{head}: " + "; ".join(pieces) + " points (run-aware cell means)."


def _paper_line(
    tables: dict[str, pd.DataFrame], settings: ReportSettings, record: PairDecision
) -> str:
    subset = pair(settings.baseline, record.system)
    contrast = first(tables["contrasts"], metric=record.metric, analysis=ALL_RUNS, subset=subset)
    if contrast is None or is_missing(contrast["estimate"]):
        return ""
    return paper_note(
        float(contrast["estimate"]),
        cell_p(contrast["p_holm"]),
        PAPER_TEST,
        settings.better.get(record.metric, "higher"),
        (settings.baseline, record.system),
    )


def card(
    tables: dict[str, pd.DataFrame],
    settings: ReportSettings,
    record: PairDecision,
    bins: dict[str, list[str]],
) -> Card:
    """One competitor's card, from its record against the baseline."""
    label = metric_label(record.metric)
    subset = pair(settings.baseline, record.system)
    said = sentence(record, label, settings.unit(record.metric))
    beside = [
        decision_line(record),
        survival_line(record, label),
        generalisation(record, facet_groups(tables, record.metric, subset)),
        bootstrap_note(bootstrap_row(tables, record.metric, subset)),
        _paper_line(tables, settings, record),
    ]
    notes = [record.note, input_note(tables, settings, record, bins)]
    return Card(
        metric=record.metric,
        competitor=record.system,
        verdict=badge(record, said),
        sentence=said,
        table=comparison_table(tables, settings, record),
        beside=[b for b in beside if b],
        notes=[n for n in notes if n],
        key=record_key(record),
    )


def ranked_competitors(
    tables: dict[str, pd.DataFrame], settings: ReportSettings, metric: str
) -> list[str]:
    """The competitors in the decision table's order (best first), then any it lacks."""
    rows = select(tables.get(SUMMARY, pd.DataFrame()), metric=metric)
    ranked = [] if rows.empty else list(rows.sort_values("rank", kind="stable")[SYSTEM])
    order = [s for s in ranked if s != settings.baseline]
    return order + [c for c in settings.competitors if c not in order]


def build(
    tables: dict[str, pd.DataFrame], settings: ReportSettings, bins: dict[str, list[str]]
) -> list[MetricCards]:
    """Per metric: what every card shares, said once; a card per competitor with a record."""
    decisions: Book = book(tables, settings)
    out = []
    for metric in settings.metrics:
        cards = []
        for competitor in ranked_competitors(tables, settings, metric):
            record = decisions.pair(metric, settings.baseline, competitor)
            if record is not None:
                cards.append(card(tables, settings, record, bins))
        if not cards:
            continue
        # the systems of the cards shown are named, the others' values given as a range
        named = {settings.baseline, *(c.competitor for c in cards[:TOP])}
        listed = [s for s in settings.systems if s in named]
        others = [s for s in settings.systems if s not in named]
        shared = [
            effect_note(tables, metric),
            reliability_note(tables, metric, listed, others),
            metaparameter_note(tables, metric, listed, others),
        ]
        out.append(
            MetricCards(
                metric=metric,
                label=metric_label(metric),
                direction=better_label(settings.better.get(metric, "higher")),
                shared=[s for s in shared if s],
                cards=cards[:TOP],
                more=cards[TOP:],
            )
        )
    return out
