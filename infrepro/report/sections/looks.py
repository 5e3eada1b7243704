"""The look history under each decision table (docs/method.md §4e.10): per comparison with the
baseline whose verdict was read at declared looks, the decision in words, a small table of the
looks (runs, information fraction, improvement with its repeated or anytime-valid interval, p
against the level it had to reach) and a figure; without looks, one line on declaring them.
Rendered from ``decisions.csv`` and ``looks.csv``; nothing is tested here."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from infrepro.core.decisions import ANYTIME, RECORDED_LOOKS, PairDecision
from infrepro.core.vocabulary import LOOKS_TABLE, SYSTEM
from infrepro.plots import short_name
from infrepro.plots.looks import LookPoint, look_history
from infrepro.report.decisions import p_name, plan_text, scale_words
from infrepro.report.figure import Figure, make_figure
from infrepro.report.formatting import fixed, flag, integer, is_missing, points
from infrepro.report.formatting import p_text as cell_p
from infrepro.report.htmltable import Cell, Column, Table, rows_table
from infrepro.report.inputs import ReportSettings
from infrepro.report.query import select

FIGURES = 5  # comparisons whose look history is drawn (the table lists every one)
DECLARE = (
    "If the runs arrived in batches that the ledger did not see, declare them instead "
    "(look_column: a runs-sheet column with an integer or a date per run; in scores mode "
    "columns.look)."
)


def one_look_hint(settings: ReportSettings) -> str:
    """The line under a decision table whose verdicts were read at one look: which look it is,
    where it is recorded, and what a rerun after new runs becomes (docs/method.md §4e.12)."""
    looks = settings.looks
    if looks.get("source") != RECORDED_LOOKS:
        return (
            "One look: these verdicts hold for one analysis of all runs (the look column "
            "declares one batch). " + DECLARE
        )
    return (
        f"Look 1, recorded in {looks.get('path')}: these verdicts assume the runs are analysed "
        "once. Rerunning after new runs makes look 2 of an undeclared sequence, whose verdicts "
        "are anytime-valid however often it is rerun (a plan, analyses.sequential, spends "
        "α more efficiently; docs/method.md §4e.12). " + DECLARE
    )


@dataclass
class LookBlock:
    """One metric's look history: the decisions in words, the table and the figures."""

    lines: list[str] = field(default_factory=list)
    table: Table | None = None
    figures: list[Figure] = field(default_factory=list)


def _interval(row: pd.Series) -> str:
    if is_missing(row["improvement"]):
        return "–"
    return (
        f"{points(row['improvement'], sign=True)} [{points(row['lower'])}, {points(row['upper'])}]"
    )


def look_p_name(record: PairDecision) -> str:
    """What a look's p in the history is, apart from the record's p (§4e.10): a plan's look
    has its own test's marginal p, which the look's level to reach is for (the record's p is
    the plan's repeated p); the anytime-valid mode's is the sequence's p of this pair, before
    any family adjustment."""
    if record.sequential == ANYTIME:
        return "anytime-valid p (this pair)"
    return "look's own p"


def _level(row: pd.Series) -> str:
    if is_missing(row["nominal"]):
        return "–"
    return f"{float(row['nominal']):.3g}"


def _outcome(row: pd.Series) -> str:
    note = "" if is_missing(row["note"]) else str(row["note"])
    if flag(row["crossed"]):
        return "crossed" + (f"; {note}" if note else "")
    return note or ("not crossed" if not is_missing(row["nominal"]) else "")


def _rows(looks: pd.DataFrame, record: PairDecision) -> pd.DataFrame:
    rows = select(
        looks,
        metric=record.metric,
        family=record.family,
        reference=record.reference,
        system=record.system,
    )
    return rows.sort_values("look", kind="stable") if not rows.empty else rows


def history_table(
    looks: pd.DataFrame, records: list[PairDecision], settings: ReportSettings
) -> Table:
    """Every look of every sequential comparison with the baseline, in the records' order."""
    several = len(records) > 1
    first = records[0]
    headers = [Column(SYSTEM, SYSTEM, numeric=False)] if several else []
    headers += [
        Column("look", "look"),
        Column("runs", f"runs ({settings.baseline} + system)", numeric=False),
        Column("fraction", "information fraction", title="of the plan's maximum (§4e.3)"),
        Column(
            "gain",
            f"improvement [{first.interval} CI]",
            title="positive = better; the interval of each look",
        ),
        Column(
            "p",
            look_p_name(first),
            title="the look's own p (anytime-valid: of the sequence), against the level to "
            f"reach; the verdict's p is the {p_name(first)}",
        ),
        Column("level", "level to reach", title="the nominal level of the look's boundary"),
        Column("outcome", "", numeric=False),
    ]
    body = []
    for record in records:
        for _, row in _rows(looks, record).iterrows():
            cells = [Cell(short_name(record.system, 40), title=record.system)] if several else []
            cells += [
                Cell(integer(row["look"]), float(row["look"])),
                Cell(f"{integer(row['runs_reference'])} + {integer(row['runs_system'])}"),
                Cell(fixed(row["fraction"], 2), _number(row["fraction"])),
                Cell(_interval(row), _number(row["improvement"])),
                Cell(cell_p(row["p_value"]) if row["p_value"] else "–", _number(row["log10_p"])),
                Cell(_level(row), _number(row["nominal"])),
                Cell(_outcome(row)),
            ]
            body.append(cells)
    return rows_table(headers, body, csv=settings.link(LOOKS_TABLE))


def _number(value: object) -> float | None:
    return None if is_missing(value) else float(value)  # type: ignore[arg-type]


def history_figure(
    looks: pd.DataFrame, record: PairDecision, label: str, settings: ReportSettings
) -> Figure | None:
    """The look history of one comparison: improvement with its interval per look, p against
    the level it had to reach."""
    rows = _rows(looks, record)
    if rows.empty:
        return None
    points_ = [
        LookPoint(
            f"{integer(row['look'])}\n{integer(row['runs_reference'])}+"
            f"{integer(row['runs_system'])}",
            100 * _float(row["improvement"]),
            100 * _float(row["lower"]),
            100 * _float(row["upper"]),
            10 ** _float(row["log10_p"]),
            _float(row["nominal"]),
            bool(flag(row["crossed"])),
        )
        for _, row in rows.iterrows()
    ]
    key = f"looks-{record.metric}-{record.system}"
    title = f"{label}: {short_name(record.system, 24)} vs {short_name(record.reference, 24)}"
    look_p = look_p_name(record)  # a plan's repeated p is the record's, not a look's
    description = "; ".join(
        f"look {integer(row['look'])}: {_interval(row)}, {look_p} "
        f"{row['p_value'] or '–'}, level {_level(row)}, {_outcome(row)}"
        for _, row in rows.iterrows()
    )
    svg = look_history(
        points_,
        ylabel=f"improvement, {label} {scale_words(settings.unit(record.metric))}",
        xlabel="look (runs: reference + system)",
        title=title,
        key=key,
        description=description,
    )
    text = (
        f"{title}: {record.decision}. Left: the improvement at each look with its "
        f"{record.interval} interval (filled: the look crossed; an arrow: the interval goes on); "
        "right: the look's p against the level it had to reach (the boundary's nominal level)."
    )
    return make_figure(svg, text, key)


def _float(value: object) -> float:
    return math.nan if is_missing(value) else float(value)  # type: ignore[arg-type]


def look_block(
    tables: dict[str, pd.DataFrame],
    records: list[PairDecision],
    metric: str,
    label: str,
    settings: ReportSettings,
) -> LookBlock | None:
    """The metric's look history, None when no record was read at looks."""
    sequential = [r for r in records if r.sequential]
    if not sequential:
        return None
    looks = tables.get(LOOKS_TABLE, pd.DataFrame())
    block = LookBlock(lines=[f"{r.system}: {r.decision} ({plan_text(r)})." for r in sequential])
    block.table = history_table(looks, sequential, settings)
    for record in sequential[:FIGURES]:
        figure = history_figure(looks, record, label, settings)
        if figure is not None:
            block.figures.append(figure)
    return block
