"""Next experiment: runs needed for the headline test, where to spend them, and whether the
best-vs-best gap is a budget effect (docs/method.md §4d.1, §4d.2)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from infrepro.core.decisions import FIRST_LOOK, SPENDING_WORDS, PairDecision
from infrepro.core.registry import BUDGET, PLANNING
from infrepro.core.schema import with_defaults
from infrepro.plots import system_style
from infrepro.plots.planning import budget_curves, power_curve
from infrepro.report.decisions import book, family_text
from infrepro.report.figure import Figure, make_figure
from infrepro.report.formatting import POINTS, fixed, integer, is_missing
from infrepro.report.htmltable import Column, Table, frame_table, text
from infrepro.report.inputs import ReportSettings
from infrepro.report.labels import metric_label
from infrepro.report.query import select
from infrepro.report.sections.headline import TOP, ranked_competitors
from infrepro.report.sections.properties import MOST_LINES, plotted_systems

BUDGET_SCORES = ("expected_best", "percentile_low", "percentile_high")  # budget.csv's scores


@dataclass
class NextBox:
    """One metric and pair's 'next experiment' box: plain sentences with the numbers."""

    title: str
    lines: list[str] = field(default_factory=list)


@dataclass
class Planning:
    # no smallest effect of interest declared: the section says once how to declare it
    unset: bool = False
    boxes: list[NextBox] = field(default_factory=list)
    more: list[NextBox] = field(default_factory=list)  # beyond the TOP competitors, collapsed
    assumptions: str = ""
    power: list[Figure] = field(default_factory=list)
    budget: list[Figure] = field(default_factory=list)
    answers: Table | None = None
    power_note: str = ""  # which pairs' power curves are drawn (more than MOST_LINES systems)


def _runs(row: pd.Series) -> str:
    return f"{integer(row['runs_baseline'])} + {integer(row['runs_competitor'])}"


def _record_line(record: PairDecision) -> str:
    """The decision's power at the smallest effect of interest, from its record (§4c.11); ''
    when none is declared (the section says so once, ``Planning.unset``)."""
    runs = f"{record.runs_reference} + {record.runs_system}"
    if math.isnan(record.min_effect):
        return ""
    if math.isnan(record.power):
        return f"The decision's power at the smallest effect of interest is unknown ({runs} runs)."
    enough = "enough" if record.power >= 0.8 else "not enough"
    return (
        f"At the smallest effect of interest (an improvement of {fixed(record.min_effect, 2)} "
        f"points), the current {runs} runs give the decision's test ({record.test} in model M, "
        f"{family_text(record)}) a power of {fixed(record.power, 2)} to show it: "
        f"{enough} for 80 %."
    )


def _needed_lines(rows: pd.DataFrame) -> list[str]:
    """Runs per system needed for 80 % and 90 % power at the smallest effect of interest, and
    the cheapest allocation (planning.csv, docs/method.md §4d.1)."""
    pick = rows[rows["effect_source"] == "min_effect"]
    if pick.empty:
        return []
    lines = []
    for target in (0.8, 0.9):
        need = pick[(pick["design"] == "needed") & (pick["target"] == target)].iloc[0]
        cheap = pick[(pick["design"] == "cheapest") & (pick["target"] == target)].iloc[0]
        if math.isnan(need["power"]):
            most = integer(pick[pick["design"] == "equal"]["runs_baseline"].max())
            lines.append(f"{target:.0%} power: not reached with {most} runs per system.")
            continue
        lines.append(
            f"{target:.0%} power: {integer(need['runs_baseline'])} runs per system "
            f"(power {fixed(need['power'], 2)}); cheapest: {_runs(cheap)} runs (baseline + "
            f"competitor, power {fixed(cheap['power'], 2)}); simulated for the decision's test "
            f"at its level {pick['alpha'].iloc[0]:.3g}."
        )
    return lines


def _sequential_line(rows: pd.DataFrame, spending: str) -> str:
    """The sequential design proposed at the smallest effect of interest for 80 % power
    (planning.csv design ``sequential``, docs/method.md §4e.8), beside the fixed design."""
    pick = rows[(rows["effect_source"] == "min_effect") & (rows["design"] == "sequential")]
    pick = pick[pick["target"] == 0.8]
    if pick.empty:
        return ""
    row = pick.iloc[0]
    if is_missing(row["runs_baseline"]):
        return ""
    top = integer(row["runs_baseline"])
    return (
        f"Sequential design (looks after every run from {FIRST_LOOK} runs per system, "
        f"{SPENDING_WORDS.get(spending, spending)} spending, at level {row['alpha']:.3g}): at "
        f"most {top} runs per system for 80 % power at the smallest effect of interest; about "
        f"{fixed(row['expected_runs_effect'], 1)} runs per system expected when the effect is "
        f"there, {fixed(row['expected_runs_null'], 1)} when there is no difference (the fixed "
        f"design: {integer(row['fixed_runs'])}; z approximation). Declare it before adding "
        "runs (look_column, analyses.sequential) to stop early without losing the level."
    )


def _budget_line(budget: pd.DataFrame, competitor: str) -> tuple[str, int | None]:
    """The crossing budget of the pool the best run is chosen on (dev scores if present)."""
    pool = "dev_score" if "dev_score" in set(budget["source"]) else "test_mean"
    rows = select(budget, system=competitor, source=pool)
    if rows.empty:
        return "", None
    crossing = str(rows["crossing_budget"].iloc[0])
    what = "dev scores" if pool == "dev_score" else "mean test scores (selection on the test set)"
    if crossing in ("", "none"):
        return (
            f"Budget ({what}): at every common budget the same system has the better expected "
            "best run, so the best-vs-best order is not a budget effect.",
            None,
        )
    return (
        f"Budget ({what}): the expected best run changes sides at B = {crossing} runs; a "
        "best-vs-best comparison of systems with different numbers of runs partly measures "
        "the tuning budget.",
        int(crossing),
    )


ASSUMPTIONS = (
    "Assumptions: the fitted variance components are taken as true (their own uncertainty is "
    "not propagated; a moderated test's prior is taken as centred on them), runs are "
    "exchangeable retrainings, every run is scored on the same test "
    "segments; the budget intervals are bootstrap intervals at a maximum, which the thesis "
    "(§3.3.2) warns are inconsistent, and the runs stand for the meta-parameter space only if "
    "they were drawn from it at random."
)


def build(tables: dict[str, pd.DataFrame], settings: ReportSettings) -> Planning:
    section = Planning()
    plan = tables.get(PLANNING, pd.DataFrame())
    budget = tables.get(BUDGET, pd.DataFrame())
    decisions = book(tables, settings)
    styles = {s: system_style(i) for i, s in enumerate(settings.systems)}
    options = with_defaults("analyses", settings.config.get("analyses"))
    spending = str(options["sequential"]["spending"])
    cards: list[tuple[str, str, NextBox, bool]] = []  # metric, pair, box, among the TOP
    planned_any, declared = False, _declares_min_effect(plan)
    for metric in settings.metrics:
        planned = set(select(plan, metric=metric)["subset"]) if not plan.empty else set()
        eligible = {c for c in settings.competitors if f"{settings.baseline} vs {c}" in planned}
        drawn = plotted_systems(tables, settings, metric, eligible)
        boxes = []
        for competitor in ranked_competitors(tables, settings, metric):
            subset = f"{settings.baseline} vs {competitor}"
            rows = select(plan, metric=metric, subset=subset)
            box = NextBox(f"{metric_label(metric)}: {subset}")
            record = decisions.pair(metric, settings.baseline, competitor)
            planned_any = planned_any or record is not None or not rows.empty
            declared = declared or (record is not None and not math.isnan(record.min_effect))
            line = _record_line(record) if record is not None else ""
            if line:
                box.lines.append(line)
            if not rows.empty:
                box.lines += _needed_lines(rows)
                line = _sequential_line(rows, spending)
                if line:
                    box.lines.append(line)
            mine = select(budget, metric=metric)
            line = _budget_line(mine, competitor)[0] if not mine.empty else ""
            if line:
                box.lines.append(line)
            if box.lines:
                boxes.append((subset, box))
            figure = _power_figure(rows, metric, subset) if competitor in drawn else None
            if figure is not None:
                section.power.append(figure)
        cards += [(metric, pair, b, i < TOP) for i, (pair, b) in enumerate(boxes)]
    for box, top in _merged(cards):
        (section.boxes if top else section.more).append(box)
    section.unset = planned_any and not declared
    if section.boxes:
        section.assumptions = ASSUMPTIONS
    if len(settings.systems) > MOST_LINES:
        section.power_note = (
            f"Power curves are drawn for the {MOST_LINES - 1} systems ranked first in each "
            "metric's decision table among those planned; every pair's answers are in the cards "
            "above and in planning.csv."
        )
    if not budget.empty:
        section.budget = _budget_figures(budget, settings, styles)
    section.answers = _answers(plan)
    return section


def _declares_min_effect(plan: pd.DataFrame) -> bool:
    """Whether planning.csv has rows at a declared smallest effect of interest."""
    return not plan.empty and bool((plan["effect_source"] == "min_effect").any())


def _merged(cards: list[tuple[str, str, NextBox, bool]]) -> list[tuple[NextBox, bool]]:
    """One card per pair and content: cards of several metrics that say the same (without a
    smallest effect of interest, a budget on dev scores, which every metric shares) become one
    titled with every metric; it is among the first cards if one of them was."""
    merged: dict[tuple[str, tuple[str, ...]], tuple[list[str], NextBox, bool]] = {}
    for metric, pair, box, top in cards:
        key = (pair, tuple(box.lines))
        metrics, first, shown = merged.get(key, ([], box, False))
        merged[key] = ([*metrics, metric_label(metric)], first, shown or top)
    return [
        (NextBox(f"{', '.join(metrics)}: {key[0]}", box.lines), top)
        for key, (metrics, box, top) in merged.items()
    ]


def _power_figure(rows: pd.DataFrame, metric: str, subset: str) -> Figure | None:
    curve = rows[rows["design"] == "equal"] if not rows.empty else rows
    if curve.empty:
        return None
    title = f"{metric_label(metric)}: power, {subset}"
    figure_title = title if len(subset) <= 40 else f"{metric_label(metric)}: power"
    key = f"power-{metric}-{subset}".replace(" ", "-")
    return make_figure(
        power_curve(curve, title=figure_title, key=key),
        f"{title}: simulated power of the headline test for equal runs per system "
        "(band: ± 2 Monte Carlo SE); dashed: 80 % and 90 %.",
        key,
    )


def _budget_figures(
    budget: pd.DataFrame, settings: ReportSettings, styles: dict[str, dict[str, object]]
) -> list[Figure]:
    """One figure per metric on mean test scores, and one on the dev scores (shared by all
    metrics) where runs have them; the crossing line when there is a single competitor."""
    pools = [(m, "test_mean") for m in settings.metrics]
    if "dev_score" in set(budget.get("source", pd.Series(dtype=str))):
        pools.insert(0, (settings.metrics[0], "dev_score"))
    out = []
    for metric, pool in pools:
        curves = select(budget, metric=metric, source=pool)
        if curves.empty:
            continue
        crossing = None
        if len(settings.competitors) == 1:
            crossing = _budget_line(curves, settings.competitors[0])[1]
        dev = pool == "dev_score"
        title = "Dev score: best of B runs" if dev else f"{metric_label(metric)}: best of B runs"
        label = "expected best dev score" if dev else "expected best mean test score, points"
        if not dev:  # test scores in points as everywhere else; dev scores as the sheet gives them
            curves = curves.assign(**{c: curves[c] * POINTS for c in BUDGET_SCORES})
        key = f"budget-{'dev' if dev else metric}"
        svg = budget_curves(curves, styles, crossing=crossing, title=title, ylabel=label, key=key)
        caption = (
            f"{title}: exact expected best of B runs drawn without replacement; band: bootstrap "
            "95 % percentile interval (thesis Algorithm 3.1); dashed: the crossing budget."
        )
        out.append(make_figure(svg, caption, key))
    return out


def _effect_name(value: object) -> str:
    return "smallest effect of interest" if value == "min_effect" else text(value)


def _answers(plan: pd.DataFrame) -> Table | None:
    if plan.empty:
        return None
    rows = plan[plan["design"] != "equal"]
    return frame_table(
        rows,
        [
            Column("metric", "metric", metric_label, numeric=False),
            Column("subset", "pair", text, numeric=False),
            Column("effect_source", "effect", _effect_name, numeric=False),
            Column("improvement_points", "improvement (points)", lambda v: fixed(v, 2, sign=True)),
            Column("design", "design", text, numeric=False),
            Column("target", "target", lambda v: fixed(v, 1)),
            Column("runs_baseline", "runs baseline", integer),
            Column("runs_competitor", "runs competitor", integer),
            Column("power", "power (simulated)", lambda v: fixed(v, 3)),
            Column("mc_se", "MC SE", lambda v: fixed(v, 3)),
            Column(
                "power_analytic",
                "analytic",
                lambda v: fixed(v, 3),
                title="noncentral t; a sequential plan's power on the z approximation (§4e.8)",
            ),
            Column("looks", "looks", integer, title="a sequential plan's looks"),
            Column(
                "expected_runs_null",
                "expected runs, no difference",
                lambda v: fixed(v, 1),
                title="a sequential plan's expected runs per system when the systems are equal",
            ),
            Column(
                "expected_runs_effect",
                "expected runs, at the effect",
                lambda v: fixed(v, 1),
                title="a sequential plan's expected runs per system at the effect",
            ),
        ],
        csv="tables/planning.csv",
    )
