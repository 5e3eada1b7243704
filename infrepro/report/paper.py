"""Paste-ready decision tables: ``results/paper/<metric>.tex`` (booktabs) and ``.md``.

Pure functions of one metric's rows of ``summary.csv`` (docs/method.md §4c). Scores in points
(x 100) as in the report; the best value of each score column in bold; a dagger marks a
significant improvement over the baseline (a double dagger when the comparison is of one run's
outputs, §4c.4); the caption names the model, the df method, the family and α.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from infrepro.vocabulary import SYSTEM, file_stem

from .escape import latex_comment, latex_header, markdown_cell, markdown_text
from .escape import latex_text as latex_escape
from .formatting import is_missing, points

RUN_AWARE = "run-aware"  # summary.RUN_AWARE (the report does not import the analyses)
DAGGER = "\u2020"
DOUBLE_DAGGER = "\u2021"
SECTION = "\u00a7"
MARKS = {"better": DAGGER, "better, generalises": SECTION, "outputs better": DOUBLE_DAGGER}
MARK_TEXT = {
    DAGGER: "significant improvement over the baseline (run-aware, these meta-parameter settings)",
    SECTION: "significant improvement that also holds once the shared facets' levels are "
    "treated as draws (generalises beyond these settings)",
    DOUBLE_DAGGER: "significant improvement of one run's outputs (single-run comparison: how it "
    "varies with retraining is unknown)",
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
    mark: str  # "" or one of MARKS
    p: str
    group: str
    ranks: str
    best: frozenset[str]


def header(table: pd.DataFrame) -> list[tuple[str, ...]]:
    """The column titles, as lines; the p column names its family and adjustment."""
    family = next((f for f in table["family"] if not is_missing(f)), "")
    p_title: tuple[str, ...] = ("p",)
    if family:  # "Holm over 2, vs baseline" -> p / (Holm over 2, / vs baseline)
        count, scope = family.split(", ")
        p_title = ("p", f"({count},", f"{scope})")
    return [
        ("Rank", "(95 %)"),
        ("System",),
        ("Runs",),
        ("Runs:", "mean ± SD"),
        ("Model mean", "[95 % CI]"),
        ("Best", "run"),
        ("Improvement", "[95 % CI]"),
        p_title,
        ("Group",),
    ]


# the score columns whose best value is bold: cell -> column of summary.csv
SCORES = {"run_mean": "run_mean", "model_mean": "model_mean", "best_run": "best_run_score"}


def _interval(value: object, lower: object, upper: object) -> tuple[str, str]:
    if is_missing(value):
        return "(baseline)", ""
    return points(value), f"[{points(lower)}, {points(upper)}]"


def _mark(row: pd.Series, alpha: float) -> str:
    """The mark of a significant improvement, by the table's verdict (docs/method.md §4c.5):
    dagger (run-aware), section sign (for these meta-parameter settings only), double dagger
    (one run's outputs)."""
    return MARKS.get(str(row["verdict"]), "")


def _rank_range(low: int, high: int) -> str:
    return str(low) if low == high else f"{low}–{high}"


def paper_rows(table: pd.DataFrame, better: str, alpha: float) -> list[PaperRow]:
    """The cells of one metric's decision table, in its order (best first)."""
    pick = max if better == "higher" else min
    best = {c: pick(table[SCORES[c]].dropna()) for c in SCORES if table[SCORES[c]].notna().any()}
    rows = []
    for _, row in table.iterrows():
        sd = "" if is_missing(row["run_sd"]) else f" ± {points(row['run_sd'])}"
        rows.append(
            PaperRow(
                rank=str(int(row["rank"])),
                system=str(row[SYSTEM]),
                runs=str(int(row["runs"])),
                run_mean=points(row["run_mean"]) + sd,
                model_mean=_interval(row["model_mean"], row["model_lower"], row["model_upper"]),
                best_run=points(row["best_run_score"]),
                improvement=_interval(
                    row["improvement"], row["improvement_lower"], row["improvement_upper"]
                ),
                mark=_mark(row, alpha),
                p="" if is_missing(row["p_adjusted"]) else str(row["p_adjusted"]),
                group=str(row["group"]),
                ranks=_rank_range(int(row["rank_lower"]), int(row["rank_upper"])),
                best=frozenset(c for c in best if row[SCORES[c]] == best[c]),
            )
        )
    return rows


def caption(table: pd.DataFrame, metric: str, better: str, alpha: float) -> str:
    """What the table shows and how: model, df method, family, α, the marks."""
    k = len(table)
    family = next((f for f in table["family"] if not is_missing(f)), "")
    family = f"{family}, " if family else ""
    used = {MARKS.get(str(v), "") for v in table["verdict"]}
    return (
        f"{metric} in points ({better} is better), systems ranked by the model mean. "
        "Model means with 95 % CI from one REML fit of score ~ system + (1|segment) + a run "
        f"intercept per system with two or more runs, t with {table['df_method'].iloc[0]} df. "
        "Improvement over the baseline: positive = better. "
        f"p: {family}α = {alpha:g}. Group: systems sharing a letter are not separated by any "
        f"significant pairwise difference (Holm over all {k * (k - 1) // 2} pairs). "
        "Rank (95 %): the rank by model mean and the ranks of 95 % of parametric draws from the "
        "fit." + "".join(f" {m} {MARK_TEXT[m]}." for m in MARKS.values() if m in used)
    )


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
    cells += [esc(row.improvement[0] + row.mark), esc(row.p), esc(row.group)]
    for name, index in (("run_mean", 3), ("model_mean", 4), ("best_run", 5)):
        if name in row.best and cells[index]:
            cells[index] = markup.bold(cells[index])
    below = [""] * len(cells)
    below[4], below[6] = esc(row.model_mean[1]), esc(row.improvement[1])
    return cells, below


LATEX = Markup(latex_escape, lambda c: r"\textbf{" + c + "}")
MARKDOWN = Markup(markdown_cell, lambda c: f"**{c}**")


def latex_table(table: pd.DataFrame, *, metric: str, better: str, alpha: float) -> str:
    """A booktabs ``table*`` environment of one metric's decision table, after comment lines
    naming the engine and preamble it needs (escape.latex_header); one line per system and its
    intervals on the line below; the best value of each score column bold, daggers as in the
    caption; labelled ``tab:<the metric's file stem>`` (unique, as the file names are)."""
    rows = paper_rows(table, better, alpha)
    titles = [r"\shortstack[l]{" + r"\\{}".join(map(latex_escape, h)) + "}" for h in header(table)]
    lines = [
        r"\begin{table*}[t]",
        r"\centering",
        r"\footnotesize",
        r"\setlength{\tabcolsep}{3pt}",
        r"\begin{tabular}{llrlllllc}",
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
        r"\caption{" + latex_escape(caption(table, metric, better, alpha)) + "}",
        r"\label{tab:" + file_stem(metric) + "}",
        r"\end{table*}",
    ]
    return latex_header("\n".join(lines)) + "\n".join(lines) + "\n"


def markdown_table(table: pd.DataFrame, *, metric: str, better: str, alpha: float) -> str:
    """The same table as GitHub Markdown, the caption below it."""
    rows = paper_rows(table, better, alpha)
    titles = [markdown_cell(" ".join(h)) for h in header(table)]
    lines = ["| " + " | ".join(titles) + " |", "|" + "---|" * len(titles)]
    for row in rows:
        cells, below = _cells(row, MARKDOWN)
        merged = [f"{c} {b}".strip() for c, b in zip(cells, below, strict=True)]
        lines.append("| " + " | ".join(merged) + " |")
    return "\n".join(lines) + "\n\n" + markdown_text(caption(table, metric, better, alpha)) + "\n"


def paper_files(summary: pd.DataFrame, metric: str, better: str, alpha: float) -> tuple[str, str]:
    """``<metric>.tex`` and ``<metric>.md`` from ``summary.csv`` (read by report.inputs):
    the metric's rows, or a line saying there is no table (see the diagnostics)."""
    rows = summary[summary["metric"] == metric] if not summary.empty else summary
    if rows.empty:
        text = f"No decision table for {metric}: see results/tables/diagnostics.csv."
        return f"% {latex_comment(text)}\n", f"{markdown_text(text)}\n"
    rows = rows.sort_values("rank", kind="stable").reset_index(drop=True)
    return (
        latex_table(rows, metric=metric, better=better, alpha=alpha),
        markdown_table(rows, metric=metric, better=better, alpha=alpha),
    )
