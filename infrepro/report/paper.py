"""Paste-ready decision tables: ``results/paper/<metric>.tex`` (booktabs) and ``.md``.

Pure functions of one metric's rows of ``summary.csv`` and its decision records against the
baseline (``decisions.csv``, docs/method.md §4c.11): the same numbers and verdicts as the
report's table. Scores in points (x 100); the best value of each score column in bold; a
verdict column (a double dagger when the verdict is about single outputs, §4c.4); the caption
names the model, the df method, the family, the interval and α.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from infrepro.core.decisions import (
    BONFERRONI,
    FAMILY_BASELINE,
    MAX_T,
    NOT_SHOWN,
    OUTPUTS,
    VS_OUTPUT,
    PairDecision,
)
from infrepro.core.vocabulary import SYSTEM, file_stem
from infrepro.report.decisions import family_text, p_name, plan_text
from infrepro.report.escape import latex_comment, latex_header, markdown_cell, markdown_text
from infrepro.report.escape import latex_text as latex_escape
from infrepro.report.formatting import is_missing, points
from infrepro.report.labels import metric_label

DOUBLE_DAGGER = "\u2021"
SECTION = "\u00a7"
MARK_TEXT = {
    SECTION: "the difference also holds once the shared facets' levels are treated as draws "
    "(generalises beyond these meta-parameter settings)",
    DOUBLE_DAGGER: "the verdict is about single outputs (a system with one run: how it varies "
    "with retraining is unknown)",
}


@dataclass(frozen=True)
class PaperRow:
    """One system's cells, as text; ``best`` names the score columns where it is best."""

    rank: str
    system: str
    runs: str
    run_mean: str
    model_mean: tuple[str, str]  # (estimate, "[lower, upper]")
    best_run: str
    improvement: tuple[str, str]
    p: str
    verdict: str
    group: str
    ranks: str
    best: frozenset[str]


def header(records: list[PairDecision]) -> list[tuple[str, ...]]:
    """The column titles, as lines; the improvement names its interval, p its family."""
    first = records[0] if records else None
    p_title: tuple[str, ...] = ("p",)
    if first is not None and first.family_size > 1:  # "p / (max-t, / 2 vs baseline)"
        method = {MAX_T: "max-t", BONFERRONI: "Bonferroni"}.get(first.family_adjust, "Holm")
        scope = "vs baseline" if first.family == FAMILY_BASELINE else "pairs"
        p_title = ("p", f"({method},", f"{first.family_size} {scope})")
    kind = first.interval.replace(" 95 %", "") if first is not None else ""
    return [
        ("Rank", "(95 %)"),
        ("System",),
        ("Runs",),
        ("Runs:", "mean ± SD"),
        ("Model mean", "[95 % CI]"),
        ("Best", "run"),
        ("Improvement", "[95 % CI,", f"{kind}]") if kind else ("Improvement", "[95 % CI]"),
        p_title,
        ("Verdict",),
        ("Group",),
    ]


# the score columns whose best value is bold: cell -> column of summary.csv
SCORES = {"run_mean": "run_mean", "model_mean": "model_mean", "best_run": "best_run_score"}


def _mean(row: pd.Series) -> tuple[str, str]:
    if is_missing(row["model_lower"]):
        return points(row["model_mean"]), "(one output)"
    return points(
        row["model_mean"]
    ), f"[{points(row['model_lower'])}, {points(row['model_upper'])}]"


def _improvement(record: PairDecision | None) -> tuple[str, str]:
    if record is None:
        return "(baseline)", ""
    return points(
        record.improvement, sign=True
    ), f"[{points(record.lower)}, {points(record.upper)}]"


def verdict_cell(record: PairDecision | None) -> str:
    """The verdict word; a double dagger when it is about single outputs, a section sign when
    it generalises."""
    if record is None:
        return ""
    if not record.directional:
        return "–" if record.verdict == NOT_SHOWN else record.verdict
    mark = DOUBLE_DAGGER if record.comparison in (OUTPUTS, VS_OUTPUT) else ""
    mark += SECTION if record.generalises else ""
    return record.verdict + mark


def _rank_range(low: int, high: int) -> str:
    return str(low) if low == high else f"{low}–{high}"


def paper_rows(table: pd.DataFrame, records: list[PairDecision], better: str) -> list[PaperRow]:
    """The cells of one metric's decision table, in its order (best first)."""
    pick = max if better == "higher" else min
    best = {c: pick(table[SCORES[c]].dropna()) for c in SCORES if table[SCORES[c]].notna().any()}
    against = {r.system: r for r in records}
    rows = []
    for _, row in table.iterrows():
        sd = "" if is_missing(row["run_sd"]) else f" ± {points(row['run_sd'])}"
        record = against.get(str(row[SYSTEM]))
        group = "".join(str(row[c]) for c in ("group", "output_group") if not is_missing(row[c]))
        rows.append(
            PaperRow(
                rank=str(int(row["rank"])),
                system=str(row[SYSTEM]),
                runs=str(int(row["runs"])),
                run_mean=points(row["run_mean"]) + sd,
                model_mean=_mean(row),
                best_run=points(row["best_run_score"]),
                improvement=_improvement(record),
                p="" if record is None else record.p_adjusted,
                verdict=verdict_cell(record),
                group=group,
                ranks=_rank_range(int(row["rank_lower"]), int(row["rank_upper"])),
                best=frozenset(c for c in best if row[SCORES[c]] == best[c]),
            )
        )
    return rows


def pairs_text(k: int) -> str:
    """``over all 3 pairs`` / ``one pair``."""
    return "one pair" if k == 2 else f"over all {k * (k - 1) // 2} pairs"


def caption(
    table: pd.DataFrame,
    records: list[PairDecision],
    label: str,
    better: str,
    alpha: float,
    unit: str = "points",
) -> str:
    """What the table shows and how: model, df method, family, interval, α, the marks."""
    k = len(table)
    first = records[0] if records else None
    family = f"{family_text(first)}, " if first is not None and first.family_size > 1 else ""
    kind = f"{first.interval} intervals" if first is not None else "intervals"
    marks = {m for r in records for m in verdict_cell(r) if m in MARK_TEXT}
    outputs = any(not is_missing(v) for v in table["output_group"])
    text = (
        f"{label} {'in points' if unit == 'points' else 'as given'} ({better} is better), "
        "systems ranked by the model mean. "
        "Model means with 95 % CI from one REML fit of score ~ system + (1|segment) + a run "
        f"intercept per system with two or more runs, t with {table['df_method'].iloc[0]} df; "
        "a system with one run shows its output's mean. "
        f"Improvement over the baseline (positive = better) with {kind}. "
        f"p: {family}α = {alpha:g}. Group: systems sharing a letter are not separated by any "
        f"directional verdict ({pairs_text(k)})"
    )
    text += "; upper-case letters group single-run systems by their outputs. " if outputs else ". "
    text += (
        "Rank (95 %): the rank by model mean and the ranks of 95 % of parametric draws from the "
        "fit (per system)."
    )
    if first is not None and first.sequential:
        text += (
            f" Verdicts read at declared looks ({plan_text(first)}): p is the {p_name(first)}, "
            f"the interval the {first.interval} interval of the look the verdict was read at."
        )
    return text + "".join(f" {m} {MARK_TEXT[m]}." for m in MARK_TEXT if m in marks)


@dataclass(frozen=True)
class Markup:
    """How a format escapes text and makes it bold."""

    escape: Callable[[str], str]
    bold: Callable[[str], str]


def _cells(row: PaperRow, markup: Markup) -> tuple[list[str], list[str]]:
    """A row's cells in header order, escaped, the best score cells bold; and the cells of
    its intervals (empty elsewhere), for a line below or to append."""
    esc = markup.escape
    cells = [esc(f"{row.rank} ({row.ranks})"), esc(row.system), esc(row.runs)]
    cells += [esc(row.run_mean), esc(row.model_mean[0]), esc(row.best_run)]
    cells += [esc(row.improvement[0]), esc(row.p), esc(row.verdict), esc(row.group)]
    for name, index in (("run_mean", 3), ("model_mean", 4), ("best_run", 5)):
        if name in row.best and cells[index]:
            cells[index] = markup.bold(cells[index])
    below = [""] * len(cells)
    below[4], below[6] = esc(row.model_mean[1]), esc(row.improvement[1])
    return cells, below


LATEX = Markup(latex_escape, lambda c: r"\textbf{" + c + "}")
MARKDOWN = Markup(markdown_cell, lambda c: f"**{c}**")


def latex_table(
    table: pd.DataFrame,
    records: list[PairDecision],
    *,
    label: str,
    stem: str,
    better: str,
    alpha: float,
    unit: str = "points",
) -> str:
    """A booktabs ``table*`` environment of one metric's decision table, after comment lines
    naming the engine and preamble it needs (escape.latex_header); one line per system and its
    intervals on the line below; the best value of each score column bold; labelled
    ``tab:<the metric's file stem>`` (unique, as the file names are)."""
    rows = paper_rows(table, records, better)
    titles = [
        r"\shortstack[l]{" + r"\\{}".join(map(latex_escape, h)) + "}" for h in header(records)
    ]
    lines = [
        r"\begin{table*}[t]",
        r"\centering",
        r"\footnotesize",
        r"\setlength{\tabcolsep}{2pt}",
        r"\begin{tabular}{llrllllllc}",
        r"\toprule",
        " & ".join(titles) + r" \\",
        r"\midrule",
    ]
    for row in rows:
        cells, below = _cells(row, LATEX)
        lines.append(" & ".join(cells) + r" \\")
        lines.append(" & ".join(below) + r" \\[2pt]")
    lines += [
        r"\bottomrule",
        r"\end{tabular}",
        r"\caption{" + latex_escape(caption(table, records, label, better, alpha, unit)) + "}",
        r"\label{tab:" + stem + "}",
        r"\end{table*}",
    ]
    return latex_header("\n".join(lines)) + "\n".join(lines) + "\n"


def markdown_table(
    table: pd.DataFrame,
    records: list[PairDecision],
    *,
    label: str,
    better: str,
    alpha: float,
    unit: str = "points",
) -> str:
    """The same table as GitHub Markdown, the caption below it."""
    rows = paper_rows(table, records, better)
    titles = [markdown_cell(" ".join(h)) for h in header(records)]
    lines = ["| " + " | ".join(titles) + " |", "|" + "---|" * len(titles)]
    for row in rows:
        cells, below = _cells(row, MARKDOWN)
        merged = [f"{c} {b}".strip() for c, b in zip(cells, below, strict=True)]
        lines.append("| " + " | ".join(merged) + " |")
    return (
        "\n".join(lines)
        + "\n\n"
        + markdown_text(caption(table, records, label, better, alpha, unit))
        + "\n"
    )


def paper_files(
    summary: pd.DataFrame,
    records: list[PairDecision],
    metric: str,
    better: str,
    alpha: float,
    unit: str = "points",
) -> tuple[str, str]:
    """``<metric>.tex`` and ``<metric>.md`` from ``summary.csv``'s rows of the metric and its
    records against the baseline in the named family, or a line saying there is no table."""
    rows = summary[summary["metric"] == metric] if not summary.empty else summary
    if rows.empty:
        text = f"No decision table for {metric}: see results/tables/diagnostics.csv."
        return f"% {latex_comment(text)}\n", f"{markdown_text(text)}\n"
    rows = rows.sort_values("rank", kind="stable").reset_index(drop=True)
    label = metric_label(metric)
    return (
        latex_table(
            rows,
            records,
            label=label,
            stem=file_stem(metric),
            better=better,
            alpha=alpha,
            unit=unit,
        ),
        markdown_table(rows, records, label=label, better=better, alpha=alpha, unit=unit),
    )
