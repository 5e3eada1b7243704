"""Paste-ready decision tables: ``results/paper/<metric>.tex`` (booktabs) and ``.md``.

Pure functions of one metric's rows of ``summary.csv`` and its decision records against the
baseline (``decisions.csv``, docs/method.md §4c.11): the same numbers and verdicts as the
report's table. Scores in points (x 100); the best value of each score column in bold; a
verdict column (a double dagger when the verdict is about single outputs, §4c.4); the caption
names the model, the df method, the family, the interval and α.
"""

from __future__ import annotations

import functools
import math
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from importlib.resources import files

import pandas as pd

from infrepro.core.decisions import (
    ANYTIME,
    FAMILY_BASELINE,
    MEANS_LEVEL,
    NOT_SHOWN,
    OUTPUTS,
    PLAN,
    RECORDED_LOOKS,
    STEP_DOWN,
    VS_OUTPUT,
    PairDecision,
    interval_parts,
    level_text,
    look_phrase,
    method_name,
    runs_phrase,
)
from infrepro.core.vocabulary import SYSTEM, file_stem
from infrepro.report.decisions import (
    PILCROW,
    alternatives,
    family_text,
    interval_kinds,
    p_name,
    plan_text,
)
from infrepro.report.escape import (
    latex_comment,
    latex_header,
    latex_name,
    markdown_cell,
    markdown_text,
)
from infrepro.report.escape import latex_text as latex_escape
from infrepro.report.formatting import is_missing, points
from infrepro.report.labels import metric_label

DAGGER = "\u2020"  # an improvement read at an earlier look than the Runs column (§4e.3)
DOUBLE_DAGGER = "\u2021"
SECTION = "\u00a7"
NO_DIFFERENCE = "–"  # the verdict cell of "no difference shown"
MARK_TEXT = {
    SECTION: "the difference also holds once the shared facets' levels are treated as draws "
    "(generalises beyond these meta-parameter settings)",
    DOUBLE_DAGGER: "a comparison with a single output: a system of the pair has one run (see the "
    "Runs column), so the verdict is about that one output, and how that system varies with "
    "retraining is unknown",
    PILCROW: "the verdict assumes the two systems' run-mean SDs within the calibrated test's "
    "band (analyses.run_variance.band); Berger and Boos' test, valid at any ratio of run SDs, "
    "does not reach α",
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
    # "repeated p" for a plan's verdicts; every kind named when they differ (§4e.12)
    p = alternatives(p_name(r) for r in records) or "p"
    p_title: tuple[str, ...] = (p,)
    adjusted = [r for r in records if r.family_size > 1]
    if first is not None and adjusted:  # "p / (max-t, / 2 vs baseline)"
        method = alternatives(method_name(r.family_adjust) for r in adjusted)
        sizes = alternatives(str(r.family_size) for r in adjusted)
        scope = "vs baseline" if first.family == FAMILY_BASELINE else "pairs"
        p_title = (p, f"({method},", f"{sizes} {scope})")
    means = level_text(MEANS_LEVEL)
    improvement: tuple[str, ...] = ("Improvement",)
    if first is not None:  # the level the records' intervals were computed at (1 − α)
        level = interval_parts(first.interval)[1]
        improvement = ("Improvement", f"[{level} CI,", f"{interval_kinds(records)}]")
    return [
        ("Rank", f"({means})"),
        ("System",),
        ("Runs",),
        ("Runs:", "mean ± SD"),
        ("Model mean", f"[{means} CI]"),
        ("Best", "run"),
        improvement,
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


def earlier_look(record: PairDecision | None) -> bool:
    """Whether a plan's verdict was read at a look with fewer runs than the row's (a crossing
    before the latest look, or runs beyond the plan's maximum, §4e.3): its improvement,
    interval and p are that look's, while the row's means use all runs."""
    return (
        record is not None
        and record.sequential == PLAN
        and (record.look_runs_reference, record.look_runs_system)
        != (record.runs_reference, record.runs_system)
    )


def _improvement(record: PairDecision | None) -> tuple[str, str]:
    if record is None:
        return "(baseline)", ""
    mark = DAGGER if earlier_look(record) or record.one_look else ""
    return points(
        record.improvement, sign=True
    ) + mark, f"[{points(record.lower)}, {points(record.upper)}]"


def verdict_cell(record: PairDecision | None) -> str:
    """The verdict word; a double dagger when it is about single outputs, a section sign when
    it generalises, a pilcrow when it rests on the band of run-SD ratios."""
    if record is None:
        return ""
    if not record.directional:
        return NO_DIFFERENCE if record.verdict == NOT_SHOWN else record.verdict
    mark = DOUBLE_DAGGER if record.comparison in (OUTPUTS, VS_OUTPUT) else ""
    mark += SECTION if record.generalises else ""
    mark += PILCROW if record.assumption else ""
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


def letters_text(table: pd.DataFrame, records: list[PairDecision]) -> str:
    """What the group letters say (§4c.6) and what they cannot: systems of two or more runs and
    single-run systems have letters apart, never shared (a comparison with one output
    separates no group), so a pair without a common letter need not differ; a system alone of
    its kind has no letter."""
    runs = dict(zip(map(str, table[SYSTEM]), (int(float(v)) for v in table["runs"]), strict=True))
    multi = [s for s, n in runs.items() if n >= 2]
    single = [s for s, n in runs.items() if n < 2]
    text = (
        "Group: systems sharing a letter are not separated by any directional verdict "
        f"({pairs_text(len(runs))})"
    )
    if not multi or not single:
        outputs = "; upper-case letters group single-run systems by their outputs" if single else ""
        return f"{text}{outputs}. "
    text += (
        "; lower-case letters group the systems of two or more runs, upper-case ones the "
        "single-run systems by their outputs. A system and a single output never share a "
        "letter, whatever their verdict (a comparison with one output separates no group, "
        "docs/method.md §4c.6), so two rows without a common letter need not differ."
    )
    baseline = {r.reference for r in records if r.family == FAMILY_BASELINE}
    for kind, members in (("system of two or more runs", multi), ("single-run system", single)):
        if len(members) == 1:
            which = " (the baseline)" if members[0] in baseline else ""
            text += f" The one {kind}{which} has no letter: none of its kind to group it with."
    return text + " "


MEASURED_LEVELS = "stepdown_levels.csv"  # benchmarks/stepdown.py writes it (§4c.10)


@functools.cache
def _measured_levels() -> pd.DataFrame:
    return pd.read_csv(str(files("infrepro") / "assets" / MEASURED_LEVELS))


def looks_mode(record: PairDecision) -> str:
    """The sequential mode of a table's verdicts, for its caption: the plan, or the anytime-valid
    sequences with the α of each comparison (not one row's look: the rows differ in it)."""
    if record.sequential != ANYTIME:
        return plan_text(record)
    where = (
        "looks recorded in the ledger"
        if record.look_source == RECORDED_LOOKS
        else "no maximum declared"
    )
    return (
        f"anytime-valid confidence sequences ({where}), α = {record.plan_alpha:.3g} for each "
        "comparison"
    )


def kinds_text(records: list[PairDecision]) -> str:
    """``step-down 95 % intervals``; when the comparisons decided at looks sit beside
    fixed-sample ones (one look of their runs, a single output: §4e.12), each kind with the
    rows it is (those of one look carry †, those of a single-run system have 1 in the Runs
    column; names stay out of the caption)."""
    if not records:
        return "intervals"
    labels = list(dict.fromkeys(r.interval for r in records))
    if len(labels) == 1:
        return f"{labels[0]} intervals"
    looked = [r for r in records if r.sequential]
    fixed = [r for r in records if not r.sequential]
    kinds = [interval_kinds(looked), interval_kinds(fixed)]
    rows = [
        what
        for what, holds in (
            (f"those marked {DAGGER} (one look of their runs)", any(r.one_look for r in fixed)),
            ("single-run systems' (1 in the Runs column)", any(not r.one_look for r in fixed)),
        )
        if holds
    ]
    level = interval_parts(labels[0])[1]
    return (
        f"{level} intervals, {kinds[0]} for the comparisons decided at looks, "
        f"{kinds[1]} for {' and '.join(rows)}"
    )


def spent_text(records: list[PairDecision], alpha: float) -> str:
    """What the step-down's intervals are and how much of α it was measured to spend on the
    null design nearest the family's (its systems, one run or several), at the measured α
    nearest ``alpha`` (named): '' for another procedure or a family of one (§4c.10)."""
    first = records[0] if records else None
    if first is None or first.family_size < 2 or first.family_adjust != STEP_DOWN:
        return ""
    size = first.family_size
    systems = size + 1 if first.family == FAMILY_BASELINE else (1 + math.isqrt(1 + 8 * size)) // 2
    runs = 3 if any(max(r.runs_reference, r.runs_system) >= 2 for r in records) else 1
    rows = _measured_levels()
    rows = rows[(rows["family"] == first.family) & (rows["runs"] == runs)]
    text = (
        "Step-down intervals: each at the level of the step that decided its pair, so it "
        "excludes 0 exactly when p < α; they are not simultaneous. "
    )
    if rows.empty:
        return text
    nearest = min(set(rows["systems"]), key=lambda k: (abs(math.log(k / systems)), k))
    level = min(set(rows["alpha"]), key=lambda a: (abs(math.log(a / alpha)), a))
    rows = rows[(rows["systems"] == nearest) & (rows["alpha"] == level)]
    ratios = sorted(set(rows["ratio"]))
    design = "one run each" if runs == 1 else "3-5 runs each"
    if len(ratios) > 1:
        design += f", run-SD ratios {ratios[0]:g}-{ratios[-1]:g}"
    return text + (
        f"The step-down's family-wise false claims at α = {level:g} on {nearest} identical "
        f"systems ({design}, "
        f"{rows['experiments'].min()} experiments a design): at most "
        f"{rows['false_claims'].max():.3f} (95 % upper bound {rows['upper'].max():.3f}; "
        "benchmarks/results/stepdown.md). "
    )


def caption(
    table: pd.DataFrame,
    records: list[PairDecision],
    label: str,
    better: str,
    alpha: float,
    unit: str = "points",
) -> str:
    """What the table shows and how: model, df method, family, interval, α, the marks."""
    families = list(dict.fromkeys(family_text(r) for r in records if r.family_size > 1))
    family = "".join(f"{f}, " for f in families)
    kind = kinds_text(records)
    marks = {m for r in records for m in verdict_cell(r) if m in MARK_TEXT}
    text = (
        f"{label} {'in points' if unit == 'points' else 'as given'} ({better} is better), "
        "systems ranked by the model mean. "
        f"Model means with {level_text(MEANS_LEVEL)} CI from one REML fit of score ~ system + "
        "(1|segment) + a run "
        f"intercept per system with two or more runs, t with {table['df_method'].iloc[0]} df; "
        "a system with one run shows its output's mean. "
        f"Improvement over the baseline (positive = better) with {kind}. "
        f"p: {family}α = {alpha:g}. "
    )
    text += spent_text(records, alpha)
    if any(verdict_cell(r) == NO_DIFFERENCE for r in records):
        text += f"{NO_DIFFERENCE} in the Verdict column: no difference shown (p not below α). "
    text += letters_text(table, records)
    text += (
        f"Rank ({level_text(MEANS_LEVEL)}): the rank by model mean and the ranks of "
        f"{level_text(MEANS_LEVEL)} of parametric draws from the fit (per system)."
    )
    read = next((r for r in records if r.sequential), None)
    if read is not None:
        text += (
            f" Verdicts read at {'recorded' if read.look_source == RECORDED_LOOKS else 'declared'}"
            f" looks ({looks_mode(read)}): p is the {p_name(read)}, "
            f"the interval the {read.interval} interval of the look the verdict was read at."
        )
    held = [r for r in records if r.one_look]
    if held:
        looks = sorted({r.look for r in held})
        at = ", ".join(look_phrase(k, held[0].look_source) for k in looks)
        text += (
            f" {DAGGER} one look of its runs (neither system has gained runs since): the "
            f"fixed-sample verdict, its improvement, interval and p as read at that look ({at}; "
            "that look's fit and family), the means from all runs."
        )
    looks = sorted(
        {(r.look, r.look_runs_reference, r.look_runs_system) for r in records if earlier_look(r)}
    )
    if looks:
        where = ", ".join(f"look {k} ({runs_phrase(a, b)})" for k, a, b in looks)
        text += (
            f" {DAGGER} improvement, interval and p as read at the look that decided the verdict, "
            f"{where}, with fewer runs than the Runs column: the means use all runs."
        )
    return text + "".join(f" {m} {MARK_TEXT[m]}." for m in MARK_TEXT if m in marks)


@dataclass(frozen=True)
class Markup:
    """How a format escapes the workflow's text and a user's name, and makes text bold."""

    escape: Callable[[str], str]
    bold: Callable[[str], str]
    name: Callable[[str], str]


def _cells(row: PaperRow, markup: Markup) -> tuple[list[str], list[str]]:
    """A row's cells in header order, escaped, the best score cells bold; and the cells of
    its intervals (empty elsewhere), for a line below or to append."""
    esc = markup.escape
    cells = [esc(f"{row.rank} ({row.ranks})"), markup.name(row.system), esc(row.runs)]
    cells += [esc(row.run_mean), esc(row.model_mean[0]), esc(row.best_run)]
    cells += [esc(row.improvement[0]), esc(row.p), esc(row.verdict), esc(row.group)]
    for name, index in (("run_mean", 3), ("model_mean", 4), ("best_run", 5)):
        if name in row.best and cells[index]:
            cells[index] = markup.bold(cells[index])
    below = [""] * len(cells)
    below[4], below[6] = esc(row.model_mean[1]), esc(row.improvement[1])
    return cells, below


LATEX = Markup(latex_escape, lambda c: r"\textbf{" + c + "}", latex_name)
MARKDOWN = Markup(markdown_cell, lambda c: f"**{c}**", markdown_cell)


def latex_caption(text: str, label: str) -> str:
    """A caption (:func:`caption`, which starts with the metric's label) as LaTeX: the label a
    name (its characters as they are), the rest the workflow's text."""
    assert text.startswith(label)
    return latex_name(label) + latex_escape(text[len(label) :])


# A name wider than NAME_COLUMN (in half-ems: about one Latin letter, half a CJK character)
# wraps in a column of NAME_SPEC, as wide as the Kreutzer table leaves in a 5.5 in text width
NAME_COLUMN = 10
NAME_SPEC = r"p{4.25em}"
_BREAK_AFTER = frozenset("-_/.:,;+=|)]}")  # a name may break after these, as at a space
CHUNK = 4  # and a run of letters without them every CHUNK half-ems, at a cost (\penalty)


def _width(text: str) -> int:
    """Display width in half-ems: 2 for a wide (East Asian) character, else 1."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _space(char: str) -> bool:
    """A space TeX may break at (escape.py sets control characters as spaces; a no-break
    space is none)."""
    return char == " " or unicodedata.category(char) in ("Cc", "Zl", "Zp")


def wrapped_name(name: str) -> str:
    """A name as LaTeX for a ``p{}`` column: ragged right, free to break after punctuation and,
    at a cost, every CHUNK half-ems of a word longer than the column (TeX breaks a line only at
    spaces otherwise). A name with a right-to-left run breaks at its spaces only: its runs are
    set whole (escape.py), and a word's pieces on two lines would read in the wrong order."""
    if any(unicodedata.bidirectional(c) in ("R", "AL") for c in name):  # not at its hyphens
        return r"\raggedright\exhyphenpenalty=10000 " + latex_name(name)
    cuts: dict[int, str] = {}  # a break after name[i]
    start = 0
    for end in [*(i for i, c in enumerate(name) if _space(c)), len(name)]:
        if _width(name[start:end]) > NAME_COLUMN - 2:  # a word wider than the column
            width = 0
            for j in range(start, end - 1):
                width += _width(name[j])
                if width >= CHUNK:
                    cuts[j], width = r"\penalty300{}", 0
        start = end + 1
    for i, char in enumerate(name[:-1]):
        if char in _BREAK_AFTER and not _space(name[i + 1]):
            cuts[i] = r"\allowbreak{}"
    pieces, at = [], 0
    for i in sorted(cuts):
        pieces.append(latex_name(name[at : i + 1]) + cuts[i])
        at = i + 1
    return r"\raggedright " + "".join(pieces) + latex_name(name[at:])


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
    said = latex_caption(caption(table, records, label, better, alpha, unit), label)
    wrap = max((_width(r.system) for r in rows), default=0) > NAME_COLUMN
    lines = [
        r"\begin{table*}[t]",
        r"\centering",
        r"\footnotesize",
        r"\setlength{\tabcolsep}{2pt}",
        r"\begin{tabular}{l" + (NAME_SPEC if wrap else "l") + "rllllllc}",
        r"\toprule",
        " & ".join(titles) + r" \\",
        r"\midrule",
    ]
    for row in rows:
        cells, below = _cells(row, LATEX)
        if wrap:
            cells[1] = wrapped_name(row.system)
        lines.append(" & ".join(cells) + r" \\")
        lines.append(" & ".join(below) + r" \\[2pt]")
    lines += [
        r"\bottomrule",
        r"\end{tabular}",
        r"\caption{" + said + "}",
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
