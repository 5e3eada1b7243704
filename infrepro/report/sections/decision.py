"""Decision tables at the top of the report: one per metric, every system ranked by model M,
each pair with the baseline rendered from its decision record (improvement, interval, p,
verdict), group letters, the forest and groups diagrams, the sentences to quote and the
paste-ready LaTeX (docs/method.md §4c; summary.csv, decisions.csv)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from infrepro.core.decisions import MEANS_LEVEL, PairDecision, level_text
from infrepro.core.registry import SUMMARY
from infrepro.core.vocabulary import SYSTEM
from infrepro.plots import short_name
from infrepro.plots.forest import improvement_forest
from infrepro.plots.groups import groups_diagram, letter_members
from infrepro.report.decisions import (
    Book,
    book,
    few_df_note,
    interval,
    interval_heading,
    p_heading,
    scale_words,
    sentence,
    verdict_text,
)
from infrepro.report.figure import Figure, make_figure
from infrepro.report.formatting import integer, is_missing, points
from infrepro.report.formatting import p_text as cell_text
from infrepro.report.htmltable import Cell, Column, Table, rows_table
from infrepro.report.inputs import ReportSettings
from infrepro.report.labels import metric_label
from infrepro.report.paper import caption, pairs_text, paper_files
from infrepro.report.query import select
from infrepro.report.sections.looks import LookBlock, look_block, one_look_hint


@dataclass
class DecisionTable:
    """One metric's decision table, its caption and its LaTeX."""

    metric: str
    label: str
    table: Table
    caption: str
    latex: str
    notes: list[str]
    sentences: list[str]
    forest: list[Figure]
    orders: str
    groups: list[Figure]
    looks: LookBlock | None = None  # the look history of sequential verdicts (§4e.10)
    looks_hint: str = ""  # without looks: how to declare them


def _mean_cell(row: pd.Series) -> Cell:
    """Model mean with its interval; a single-run system's output mean, marked (§4c.2)."""
    if is_missing(row["model_lower"]):
        return Cell(f"{points(row['model_mean'])} (one output)", float(row["model_mean"]))
    return Cell(
        f"{points(row['model_mean'])} [{points(row['model_lower'])}, {points(row['model_upper'])}]",
        float(row["model_mean"]),
    )


def _best_cell(row: pd.Series) -> Cell:
    how = str(row["best_run_selected_by"])
    title = f"best run {row['best_run']}, selected by {how}" if how else "its one run"
    return Cell(points(row["best_run_score"]), float(row["best_run_score"]), title=title)


def _rank_range(row: pd.Series) -> str:
    low, high = integer(row["rank_lower"]), integer(row["rank_upper"])
    return low if low == high else f"{low}–{high}"


def decision_rows(
    rows: pd.DataFrame, decisions: Book, metric: str, baseline: str
) -> list[tuple[pd.Series, PairDecision | None]]:
    """Each system's row of summary.csv with its record against the baseline (None for the
    baseline), in table order."""
    return [
        (row, None if row[SYSTEM] == baseline else decisions.pair(metric, baseline, row[SYSTEM]))
        for _, row in rows.iterrows()
    ]


def table_of(
    paired: list[tuple[pd.Series, PairDecision | None]], settings: ReportSettings, metric: str
) -> Table:
    """The decision table: the per-system columns and the baseline pair's record."""
    decided = [r for _, r in paired if r is not None]
    interval_kind = interval_heading(decided)  # every kind of the column's intervals, §4e.12
    means = level_text(MEANS_LEVEL)  # the means' and ranks' level; the improvement's: its record's
    family = p_heading(decided)  # a sequential verdict's p is the repeated p, §4e.10
    outputs = any(not is_missing(row["output_group"]) for row, _ in paired)
    headers = [
        Column(
            "rank", f"rank ({means})", title="the rank by model mean and its interval (per system)"
        ),
        Column(SYSTEM, SYSTEM, numeric=False),
        Column("runs", "runs"),
        Column("mean_sd", "mean ± SD over runs", title="the runs' mean scores"),
        Column("model", f"model mean [{means} CI]", title="model M, t with the named df"),
        Column("best", "best run", title="hover: which run, and how it was selected"),
        Column("gain", f"improvement [{interval_kind}]", title="positive = better"),
        Column("p", family, title="adjusted over the family the header names"),
        Column("verdict", "verdict", numeric=False),
        Column("group", "group", numeric=False, title="systems: all pairs, §4c.6"),
    ]
    if outputs:
        headers.append(
            Column(
                "output_group", "output group", numeric=False, title="single-run systems' outputs"
            )
        )
    body = []
    for row, record in paired:
        sd = "" if is_missing(row["run_sd"]) else f" ± {points(row['run_sd'])}"
        cells = [
            Cell(f"{integer(row['rank'])} ({_rank_range(row)})", float(row["rank"])),
            Cell(short_name(str(row[SYSTEM]), 60), css="name", title=str(row[SYSTEM])),
            Cell(integer(row["runs"]), float(row["runs"])),
            Cell(points(row["run_mean"]) + sd, float(row["run_mean"])),
            _mean_cell(row),
            _best_cell(row),
        ]
        if record is None:
            cells += [Cell("–"), Cell(""), Cell("baseline"), Cell(str(row["group"]))]
        else:
            cells += [
                Cell(interval(record), record.improvement),
                Cell(cell_text(record.p_adjusted), record.log10_p_adjusted),
                Cell(verdict_text(record), css=f"verdict-{record.verdict.replace(' ', '-')}"),
                Cell(str(row["group"])),
            ]
        if outputs:
            cells.append(Cell(str(row["output_group"])))
        body.append(cells)
    return rows_table(headers, body, csv=settings.link(SUMMARY))


def _notes(paired: list[tuple[pd.Series, PairDecision | None]]) -> list[str]:
    """The per-system notes and the records' notes, each said once: "Every system: ..." when
    all share it, else the systems that have it, then the note."""
    by_note: dict[str, list[str]] = {}
    for row, record in paired:
        own = (
            str(row["note"]),
            record.note if record else "",
            few_df_note(record) if record else "",
        )
        text = "; ".join(n for n in own if not is_missing(n))
        if text:
            by_note.setdefault(text, []).append(short_name(str(row[SYSTEM]), 40))
    if len(paired) > 1 and len(by_note) == 1 and len(next(iter(by_note.values()))) == len(paired):
        return [f"Every system: {next(iter(by_note))}"]
    return [f"{', '.join(systems)}: {note}" for note, systems in by_note.items()]


def _forest(
    records: list[PairDecision], metric: str, label: str, settings: ReportSettings
) -> list[Figure]:
    """The records' improvements with their intervals, in points, in table order; filled where
    the verdict is directional."""
    if not records:
        return []
    key = f"forest-{metric}"
    kind = interval_heading(records).removesuffix(" CI")
    baseline = f" over {settings.baseline}" if len(settings.baseline) <= 16 else ""
    description = "; ".join(
        f"{r.system}: {interval(r)}, {verdict_text(r, spelled=True)}" for r in records
    )
    svg = improvement_forest(
        [r.system for r in records],
        [100 * r.improvement for r in records],
        [(100 * r.lower, 100 * r.upper) for r in records],
        [r.directional for r in records],
        xlabel=f"improvement{baseline}, {label} {scale_words(settings.unit(metric))} "
        "(positive = better)",
        title=f"{label}: improvement over {settings.baseline if baseline else 'the baseline'}",
        key=key,
        description=description,
    )
    text = (
        f"Improvements with their {kind} intervals (the decision records); filled: a "
        "directional verdict; hollow: no difference shown."
    )
    return [make_figure(svg, text, key)]


def groups_figure(
    rows: pd.DataFrame, metric: str, label: str, settings: ReportSettings
) -> list[Figure]:
    """The groups diagram (§4c.9): model means on the score axis, better to the right, a solid
    bar per systems' group letter, a dashed one per output group of single-run systems."""
    shown = rows[[not is_missing(v) for v in rows["model_mean"]]]
    if len(shown) < 2:
        return []
    key = f"groups-{metric}"
    better = settings.better.get(metric, "higher")
    title = f"{label}: groups of systems"
    systems = [str(s) for s in shown[SYSTEM]]
    svg = groups_diagram(
        systems,
        [100 * float(v) for v in shown["model_mean"]],
        letter_members(["" if is_missing(v) else str(v) for v in shown["group"]]),
        outputs=letter_members(["" if is_missing(v) else str(v) for v in shown["output_group"]]),
        lower_is_better=better == "lower",
        xlabel=f"model mean, {label} {scale_words(settings.unit(metric))} ({better} is better: "
        "better to the right)",
        title=title,
        key=key,
    )
    k = len(rows)
    text = (
        f"Model means of model M (REML). A solid bar joins the systems of one group letter: no "
        f"directional verdict ({pairs_text(k)}) separates them (α = "
        f"{settings.alpha:g}); ticks mark the members, and a system of two or more runs under no "
        "solid bar differs from every other such system."
    )
    single = [s for s, n in zip(systems, shown["runs"], strict=True) if int(float(n)) == 1]
    if single:
        names = ", ".join(short_name(s) for s in single)
        text += (
            f" Single-run systems ({names}) are in no solid bar: their comparisons with systems "
            "over retraining are with one output and separate no group (docs/method.md §4c.6), "
            "so a system and a single output never share a letter, whatever their verdict."
        )
    if len(single) == 1:
        text += f" {short_name(single[0])} has no letter: no other single-run system to group with."
    if any(not is_missing(v) for v in shown["output_group"]):
        text += (
            " Dashed bars (upper-case letters) join single-run systems whose outputs no "
            "directional verdict separates: claims about these outputs, not about retraining."
        )
    return [make_figure(svg, text, key)]


def best_run_orders(rows: pd.DataFrame, alpha: float) -> str:
    """How many of the best-run ranking's pairwise orders the all-pairs records confirm."""
    wins = int(sum(float(v) for v in rows["best_run_wins"]))
    confirmed = int(sum(float(v) for v in rows["best_run_wins_confirmed"]))
    selected = {str(v) for v in rows["best_run_selected_by"] if not is_missing(v)}
    if not selected:
        return ""  # one run per system: nothing was selected
    how = (
        "best runs selected by dev score"
        if selected == {"dev_score"}
        else "best runs selected by their test score (optimistic)"
    )
    k = len(rows)
    if wins == 0:
        return f"The best runs tie ({how})."
    if wins == 1:
        top = str(rows.loc[rows["best_run_wins"].astype(float) > 0, SYSTEM].iloc[0])
        said = "confirms" if confirmed else "does not confirm"
        pairs = "" if k == 2 else f", over all {k * (k - 1) // 2} pairs"
        return (
            f"Model M {said} the best-run order ({top}'s best run ahead; {how}; a directional "
            f"verdict in the same order{pairs}, α = {alpha:g})."
        )
    return (
        f"Model M confirms {confirmed} of the {wins} pairwise orders of the best-run ranking "
        f"({how}; a directional verdict in the same order, over all {k * (k - 1) // 2} pairs, "
        f"α = {alpha:g})."
    )


def build(tables: dict[str, pd.DataFrame], settings: ReportSettings) -> list[DecisionTable]:
    """The decision table of every metric that has one."""
    summary = tables.get(SUMMARY, pd.DataFrame())
    decisions = book(tables, settings)
    out = []
    for metric in settings.metrics:
        rows = select(summary, metric=metric)
        if rows.empty:
            continue
        rows = rows.sort_values("rank", kind="stable").reset_index(drop=True)
        label = metric_label(metric)
        paired = decision_rows(rows, decisions, metric, settings.baseline)
        records = [r for _, r in paired if r is not None]
        better = settings.better.get(metric, "higher")
        unit = settings.unit(metric)
        latex = paper_files(rows, records, metric, better, settings.alpha, unit)[0]
        out.append(
            DecisionTable(
                metric,
                label,
                table_of(paired, settings, metric),
                caption(rows, records, label, better, settings.alpha, unit),
                latex,
                _notes(paired),
                [sentence(r, label, unit) for r in records],
                _forest(records, metric, label, settings),
                best_run_orders(rows, settings.alpha),
                groups_figure(rows, metric, label, settings),
                look_block(tables, records, metric, label, settings),
                "" if any(r.sequential for r in records) else one_look_hint(settings),
            )
        )
    return out
