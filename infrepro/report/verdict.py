"""The headline verdict: does the competitor's best-vs-best advantage survive all runs?

Each comparison is reduced to the competitor's *advantage* (positive when the competitor is
better, whatever the metric's direction) and its p-value; the verdict compares best-vs-best with
the all-runs models (the paper's and the run-aware one) at level ``alpha``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .formatting import points


@dataclass(frozen=True)
class Outcome:
    """One comparison: baseline - competitor (stored scale), its p as text and log10."""

    difference: float
    p: str
    log10_p: float
    better: str  # the metric's direction: "lower" or "higher"

    @property
    def advantage(self) -> float:
        """Competitor minus baseline, signed so that positive means the competitor is better."""
        return -self.difference if self.better == "higher" else self.difference

    def significant(self, alpha: float) -> bool:
        return math.isfinite(self.log10_p) and self.log10_p < math.log10(alpha)


@dataclass(frozen=True)
class Verdict:
    """Badge text, its tone (good / warn / bad / neutral) and the concluding sentence."""

    badge: str
    tone: str
    conclusion: str


def who_is_better(outcome: Outcome, baseline: str, competitor: str) -> str:
    """``competitor better by 3.17 points`` (or the baseline, or no difference)."""
    if outcome.advantage == 0:
        return "no difference"
    winner = competitor if outcome.advantage > 0 else baseline
    return f"{winner} better by {points(abs(outcome.advantage))} points"


def classify(
    best: Outcome | None,
    paper: Outcome | None,
    run_aware: Outcome | None,
    alpha: float,
    competitor: str = "the competitor",
    baseline: str = "the baseline",
) -> Verdict:
    """Whether the best-vs-best improvement of ``competitor`` holds up across all runs."""
    if best is None:
        return Verdict("not tested", "neutral", "No best-vs-best comparison could be fitted.")
    if best.advantage <= 0:
        return Verdict(
            "no improvement",
            "neutral",
            f"Even best vs best, {competitor} is not better than {baseline}.",
        )
    if not best.significant(alpha):
        return Verdict(
            "no significant improvement",
            "neutral",
            f"Even best vs best, the advantage of {competitor} is not significant "
            f"at α = {alpha:g}.",
        )
    if paper is None:
        return Verdict("not tested", "neutral", "The all-runs comparison could not be fitted.")
    if paper.advantage > 0 and paper.significant(alpha):
        if run_aware is None:
            return Verdict(
                "survives",
                "good",
                "The improvement survives meta-parameter variation (paper model; the run-aware "
                "model could not be fitted).",
            )
        if run_aware.significant(alpha):
            return Verdict(
                "survives",
                "good",
                "The improvement survives meta-parameter variation, also when run-to-run "
                "variance is taken into account.",
            )
        return Verdict(
            "fragile",
            "warn",
            "The improvement holds on average over all runs, but not once run-to-run variance "
            "is taken into account.",
        )
    if paper.advantage < 0 and paper.significant(alpha):
        return Verdict(
            "does not survive",
            "bad",
            f"The improvement does not survive: over all runs, {baseline} is better.",
        )
    return Verdict(
        "does not survive",
        "bad",
        f"The improvement does not survive: over all runs, {competitor} is not significantly "
        "better.",
    )


def sentence(
    best: Outcome | None,
    paper: Outcome | None,
    run_aware: Outcome | None,
    baseline: str,
    competitor: str,
) -> str:
    """``Best vs best: competitor better by X points (p = ...); all runs: baseline better by Y
    points (paper p = ..., run-aware p = ...).``"""
    parts = []
    if best is not None:
        parts.append(f"Best vs best: {who_is_better(best, baseline, competitor)} (p = {best.p})")
    if paper is not None:
        ps = [f"paper p = {paper.p}"]
        if run_aware is not None:
            ps.append(f"run-aware p = {run_aware.p}")
        parts.append(f"all runs: {who_is_better(paper, baseline, competitor)} ({', '.join(ps)})")
    return "; ".join(parts) + "." if parts else ""
