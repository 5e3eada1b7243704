"""The headline card's badge and lines, worded from a decision record (docs/method.md §4b.6).

The badge is the record's verdict (``infrepro.core.decisions``), with the estimand it is about; the
lines beside it are the record's facet-aware reading, best vs best as the seeds' reproduction,
the paper's all-runs GLRT and the bootstrap check, each labelled with its model and never called
a verdict. Nothing here tests or decides.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from infrepro.core.decisions import (
    BETTER,
    GENERALISES,
    NOT_JUDGED,
    NOT_SHOWN,
    NOT_SHOWN_BEYOND,
    OUTPUTS,
    REVERSED,
    SURVIVES,
    VS_OUTPUT,
    PairDecision,
    df_number,
)
from infrepro.core.vocabulary import NOT_CONVERGED
from infrepro.report.formatting import points

# The paper's all-runs GLRT's measured level (README, "Calibration and statistical validity").
PAPER_GLRT_LEVEL = (
    "rejects identical systems in 41-54 % of simulated A-vs-A experiments (README, Calibration)"
)
PAPER_LABEL = "paper's model, conditional on these trained runs"
PAPER_PREFIX = "paper's model, "
OPTIMISTIC_BEST = (
    "its runs were selected by their test score (no dev scores), so it shows an improvement in "
    "most simulated experiments without one: it is no evidence either way"
)


@dataclass(frozen=True)
class Verdict:
    """Badge text, its tone (good / warn / bad / neutral) and the concluding sentence."""

    badge: str
    tone: str
    conclusion: str
    direction: int = 0  # +1 / -1: the badge claims the system / the reference is better


def badge(record: PairDecision, conclusion: str) -> Verdict:
    """The card's badge from the record: who is better (qualified by the estimand and the
    assumption it rests on), no difference shown, not judged or not converged;
    ``conclusion``: the record's sentence."""
    if record.verdict == NOT_CONVERGED:
        return Verdict(NOT_CONVERGED, "warn", conclusion)
    if record.verdict == NOT_SHOWN:
        return Verdict(NOT_SHOWN, "neutral", conclusion)
    direction = 1 if record.verdict == BETTER else -1
    winner = record.winner
    if record.comparison == OUTPUTS:
        text = f"{winner}'s output better"
    elif record.comparison == VS_OUTPUT:
        single = record.reference if record.runs_reference < 2 else record.system
        text = (
            f"{winner} better (vs {single}'s single output)"
            if winner != single
            else (f"{winner}'s single output better")
        )
    else:
        text = f"{winner} better"
    if record.assumption:
        text += f", assuming {record.assumption}"
    return Verdict(text, "good" if direction > 0 else "bad", conclusion, direction)


def survival_line(record: PairDecision, label: str) -> str:
    """Best vs best, the seeds' reproduction: its direction and, with dev-selected runs,
    whether it survives retraining (§4b.6); with test-selected runs, why it is no evidence."""
    if math.isnan(record.best_vs_best) or max(record.runs_reference, record.runs_system) < 2:
        return ""
    if record.best_vs_best == 0:
        ahead = "the best runs tie"
    else:
        leader = record.system if record.best_vs_best > 0 else record.reference
        ahead = f"{leader}'s best run ahead by {points(abs(record.best_vs_best))} {label} points"
    if not record.survival:
        return f"Best vs best: {ahead}; {OPTIMISTIC_BEST}."
    said = {
        SURVIVES: "the same order survives retraining",
        REVERSED: "over retraining the order is reversed",
    }.get(record.survival, "over retraining no difference is shown")
    return f"Best vs best (dev-selected runs): {ahead}; {said} (the verdict above)."


def generalisation(record: PairDecision, levels: str = "") -> str:
    """The line on generalising to other levels of the shared facets, from the record's
    facet-aware reading (§4c.5): generalises / not shown / not judged (few df), never a
    downgrade of the badge."""
    reading = record.generalisation
    if not reading:
        return ""
    df = record.facet_aware_df
    df_text = f"df {df_number(df, 2)}" if math.isfinite(df) else "few df"
    model = f"facet-aware model, {df_text}, p = {record.facet_aware_p}"
    head = "Generalising to other levels of the shared facets"
    if reading == GENERALISES:
        return f"{head}: {record.winner} better beyond the settings that were run ({model})."
    if reading == NOT_JUDGED:
        count = f"{levels}; " if levels else ""
        return (
            f"{head}: {NOT_JUDGED} ({count}{model}); with so few levels almost no difference "
            "is detectable, which says nothing about the facets' effect."
        )
    return f"{head}: {NOT_SHOWN_BEYOND} ({model})."


def paper_note(difference: float, p: str, model: str, better: str, names: tuple[str, str]) -> str:
    """The paper's all-runs GLRT (``difference`` = level1 − level2 of contrasts.csv, stored
    scale), labelled, with its measured level under the null, as an improvement."""
    reference, system = names
    improvement = difference if better == "lower" else -difference
    if improvement == 0:
        said = "no difference"
    else:
        winner = system if improvement > 0 else reference
        said = f"{winner} ahead by {points(abs(improvement))} points"
    return (
        f"All runs, {PAPER_LABEL} ({model.removeprefix(PAPER_PREFIX)}): {said}, p = {p}; this "
        f"test {PAPER_GLRT_LEVEL}, so it does not decide the verdict."
    )


def bootstrap_note(row: dict[str, object] | None) -> str:
    """The parametric-bootstrap LRT of the headline model, when requested, with its failures."""
    if row is None:
        return ""
    return (
        f"Parametric-bootstrap LRT of the same comparison ({row['method']}, "
        f"{row['model']}): p = {row['p_value']}; it checks the chi-square reference of the ML "
        "likelihood ratio and does not decide the verdict."
    )
