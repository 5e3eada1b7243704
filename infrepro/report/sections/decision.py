"""Decision tables at the top of the report: one per metric, every system ranked by the
run-aware model, with intervals, the improvement over the baseline, group letters and the
paste-ready LaTeX (docs/method.md §4c; summary.csv)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from infrepro.plots import short_name
from infrepro.plots.forest import improvement_forest
from infrepro.plots.groups import groups_diagram, letter_members
from infrepro.registry import SUMMARY
from infrepro.runcounts import NOT_JUDGED
from infrepro.vocabulary import NOT_CONVERGED, SYSTEM

from ..figure import Figure, make_figure
from ..formatting import integer, is_missing, points, significant
from ..htmltable import Column, Table, frame_table, text
from ..inputs import ReportSettings
from ..labels import metric_label
from ..paper import RUN_AWARE, caption, paper_files
from ..query import select


@dataclass
class Decision:
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


def _interval(value: object, lower: object, upper: object, sign: bool = False) -> str:
    if is_missing(value):
        return "–"
    return f"{points(value, sign=sign)} [{points(lower)}, {points(upper)}]"


def _rows(rows: pd.DataFrame) -> list[tuple[object, ...]]:
    return list(rows.itertuples(index=False))


def _cells(rows: pd.DataFrame) -> pd.DataFrame:
    """The text cells the table shows: estimates with their intervals, mean ± SD, ranks."""
    out = rows.copy()
    records = _rows(rows)
    out["mean_sd"] = [
        points(r.run_mean) + ("" if is_missing(r.run_sd) else f" ± {points(r.run_sd)}")
        for r in records
    ]
    out["model"] = [_interval(r.model_mean, r.model_lower, r.model_upper) for r in records]
    out["gain"] = [
        _interval(r.improvement, r.improvement_lower, r.improvement_upper, sign=True)
        for r in records
    ]
    out["rank_range"] = [
        f"{integer(r.rank_lower)}–{integer(r.rank_upper)}"
        if r.rank_lower != r.rank_upper
        else integer(r.rank_lower)
        for r in records
    ]
    return out


def _columns(family: str) -> list[Column]:
    return [
        Column("rank", "rank", integer),
        Column(SYSTEM, SYSTEM, lambda v: short_name(str(v), 60), numeric=False),
        Column("runs", "runs", integer),
        Column("mean_sd", "mean ± SD over runs", text, "run_mean"),
        Column("model", "model mean [95 % CI]", text, "model_mean", title="t with the named df"),
        Column("best_run_score", "best run", points),
        Column("gain", "improvement [95 % CI]", text, "improvement"),
        Column("p_adjusted", f"p ({family})" if family else "p", text, "log10_p_adjusted"),
        Column("verdict", "verdict", text, numeric=False),
        Column("group", "group", text, numeric=False, title="Holm over all pairs"),
        Column("rank_range", "rank interval", text, "rank_lower"),
        Column("best_run_rank", "best-run rank", integer, title="rank by the best run's score"),
    ]


def _notes(rows: pd.DataFrame) -> list[str]:
    """The per-system notes (one run; the borrowed-variance sensitivity line); a note every
    system shares (every system with one run) is said once."""
    notes = [(r.system, r.note) for r in _rows(rows) if not is_missing(r.note)]
    if len(rows) > 1 and len(notes) == len(rows) and len({n for _, n in notes}) == 1:
        return [f"Every system: {notes[0][1]}"]
    return [f"{system}: {note}" for system, note in notes]


def _claimed(verdict: object) -> bool:
    """Whether a verdict mark claims a direction (for the table's adjusted p)."""
    return str(verdict) not in ("", "baseline", "not shown", NOT_JUDGED, NOT_CONVERGED)


def sentence(r: Any, label: str, baseline: str) -> str:
    """A sentence to quote for one comparison with the baseline (``r``: a row of summary.csv),
    naming the model, the df and the one p (adjusted, with its family)."""
    t = float(r.improvement) / float(r.improvement_se)
    df = float(r.improvement_df)
    test = f"t({df:.0f}) = {significant(t)}" if df >= 100 else f"t({df:.1f}) = {significant(t)}"
    p = f"p = {r.p_adjusted} ({r.family})"
    interval = f"[{points(r.improvement_lower)}, {points(r.improvement_upper)}]"
    worse = float(r.improvement) < 0  # "worse by 3.51 [2.67, 4.34]": the CI of the size
    flipped = f"[{points(-float(r.improvement_upper))}, {points(-float(r.improvement_lower))}]"
    size = f"{points(abs(float(r.improvement)))} {label} points {flipped if worse else interval}"
    signed = f"{points(float(r.improvement))} {label} points {interval}"  # sign as its CI
    subject, other = r.system, baseline
    if r.comparison == RUN_AWARE:
        model = f"run-aware model (REML, {r.df_method} df), {test}, {p}"
    else:
        subject, other = f"{r.system}'s outputs", f"{baseline}'s"
        model = f"segment-level comparison of these outputs, {test}, {p}; one run: how it varies "
        model += "with retraining is unknown"
    if not is_missing(r.facet_aware_p):
        model += f"; treating the shared facets' levels as draws: p = {r.facet_aware_p}"
    if str(r.verdict) == NOT_JUDGED:
        verdict = "not judged (too few runs)"
        return f"{subject} against {other}: {verdict}, improvement {signed}, {model}."
    if _claimed(r.verdict):
        word = "better" if float(r.improvement) > 0 else "worse"
        general = "generalises" in str(r.verdict)
        shared = not is_missing(r.facet_aware_p)
        scope = " for these meta-parameter settings" if shared and not general else ""
        return f"{subject} {word} than {other}{scope} by {size}, {model}."
    return f"No difference shown between {subject} and {baseline} (improvement {signed}), {model}."


def _forest(rows: pd.DataFrame, metric: str, label: str, settings: ReportSettings) -> list[Figure]:
    """The improvements over the baseline with their 95 % CIs, in points, best first."""
    shown = rows[[not is_missing(v) for v in rows["improvement"]]]
    if shown.empty:
        return []
    key = f"forest-{metric}"
    baseline = f" over {settings.baseline}" if len(settings.baseline) <= 16 else ""
    svg = improvement_forest(
        [str(s) for s in shown[SYSTEM]],
        [100 * float(v) for v in shown["improvement"]],
        [
            (100 * float(r.improvement_lower), 100 * float(r.improvement_upper))
            for r in _rows(shown)
        ],
        [_claimed(v) for v in shown["verdict"]],
        xlabel=f"improvement{baseline}, {label} points (positive = better)",
        title=f"{label}: improvement over {settings.baseline if baseline else 'the baseline'}",
        key=key,
    )
    text = (
        "95 % CIs (t with the named df); filled: significant after the table's Holm "
        "adjustment; dashed: no difference."
    )
    return [make_figure(svg, text, key)]


def _single(rows: pd.DataFrame) -> bool:
    """Whether every system has one run (the model then has no run variance)."""
    return all(float(n) <= 1 for n in rows["runs"])


def _model(single: bool) -> str:
    """The model the decision table's means and pairs come from."""
    return "the segment-level model of these outputs" if single else "the run-aware model"


def groups_figure(
    rows: pd.DataFrame, metric: str, label: str, settings: ReportSettings
) -> list[Figure]:
    """The groups diagram (§4c.9): model means on the score axis, better to the right, a bar
    per group letter; caption naming the model, the df and the family of the letters."""
    shown = rows[[not is_missing(v) for v in rows["model_mean"]]]
    if len(shown) < 2:
        return []
    key = f"groups-{metric}"
    better = settings.better.get(metric, "higher")
    title = f"{label}: groups of systems"
    svg = groups_diagram(
        [str(s) for s in shown[SYSTEM]],
        [100 * float(v) for v in shown["model_mean"]],
        letter_members(["" if is_missing(v) else str(v) for v in shown["group"]]),
        lower_is_better=better == "lower",
        xlabel=f"model mean, {label} points ({better} is better: better to the right)",
        title=title,
        key=key,
    )
    k = len(rows)
    single = _single(rows)
    methods = sorted({str(v) for v in shown["df_method"] if not is_missing(v)})
    text = (
        f"Model means of {_model(single)} (REML). A bar joins the systems of one group letter: no "
        f"significant pairwise difference separates them (Holm over all {k * (k - 1) // 2} "
        f"pairs, t with {' / '.join(methods) or 'the named'} df, α = {settings.alpha:g}); ticks "
        "mark the members, and a system under no bar differs from every other."
    )
    if not single and any(float(n) <= 1 for n in shown["runs"]):
        text += " A pair with a one-run system compares outputs (see the notes)."
    return [make_figure(svg, text, key)]


def best_run_orders(rows: pd.DataFrame, alpha: float) -> str:
    """How many of the best-run ranking's pairwise orders the model confirms: the run-aware
    model, or with one run per system the segment-level model of these outputs (it has no run
    variance then, and says so)."""
    wins = int(sum(float(v) for v in rows["best_run_wins"]))
    confirmed = int(sum(float(v) for v in rows["best_run_wins_confirmed"]))
    k = len(rows)
    model = _model(_single(rows))
    return (
        f"{model[0].upper() + model[1:]} confirms {confirmed} of the {wins} pairwise orders of the "
        f"best-run ranking (significant in the same direction, Holm over all "
        f"{k * (k - 1) // 2} pairs, α = {alpha:g})."
    )


def _sentences(rows: pd.DataFrame, label: str, baseline: str) -> list[str]:
    return [
        sentence(r, label, baseline)
        for r in _rows(rows)
        if not is_missing(r.improvement) and not is_missing(r.improvement_se)
    ]


def build(tables: dict[str, pd.DataFrame], settings: ReportSettings) -> list[Decision]:
    """The decision table of every metric that has one."""
    summary = tables.get(SUMMARY, pd.DataFrame())
    out = []
    for metric in settings.metrics:
        rows = select(summary, metric=metric)
        if rows.empty:
            continue
        rows = rows.sort_values("rank", kind="stable").reset_index(drop=True)
        better = settings.better.get(metric, "higher")
        family = next((f for f in rows["family"] if not is_missing(f)), "")
        label = metric_label(metric)
        table = frame_table(_cells(rows), _columns(family), csv=settings.link(SUMMARY))
        latex = paper_files(rows, metric, better, settings.alpha)[0]
        out.append(
            Decision(
                metric,
                label,
                table,
                caption(rows, label, better, settings.alpha),
                latex,
                _notes(rows),
                _sentences(rows, label, settings.baseline),
                _forest(rows, metric, label, settings),
                best_run_orders(rows, settings.alpha),
                groups_figure(rows, metric, label, settings),
            )
        )
    return out
