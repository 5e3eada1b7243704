"""The headline verdict: does the competitor's best-vs-best advantage survive retraining?

Each comparison is reduced to the competitor's *advantage* (positive when the competitor is
better, whatever the metric's direction) and its p-value. Best vs best is the starting point;
the verdict itself comes from the run-aware headline test only (``tests.csv``, analysis
``all_runs_per_system``: a run variance per system, t with Kenward-Roger or Satterthwaite df).
A directional claim needs that test significant at ``alpha`` in that direction and, where the
runs share facet levels, the facet-aware sensitivity model significant in the same direction
(otherwise the claim holds only for these meta-parameter values, and the verdict says so: this
keeps false directional claims at the level in experiments with shared facets, docs/method.md
§4b.6). The paper's all-runs GLRT is shown beside it and never decides it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .formatting import is_significant, points

# The paper's all-runs GLRT's measured level (README, "Calibration and statistical validity").
PAPER_GLRT_LEVEL = (
    "rejects identical systems in 41-54 % of simulated A-vs-A experiments (README, Calibration)"
)
PAPER_LABEL = "paper's model, conditional on these trained runs"
PAPER_PREFIX = "paper's model, "
BORROWS = "borrows"  # the headline note's word for a comparison without its own run variance


@dataclass(frozen=True)
class Outcome:
    """One comparison: baseline - competitor (stored scale), its p as text and log10, and the
    model that gave it (``model``: a short label such as ``run-aware, KR df 18.9``)."""

    difference: float
    p: str
    log10_p: float
    better: str  # the metric's direction: "lower" or "higher"
    model: str = ""
    df: float = math.nan
    note: str = ""

    @property
    def advantage(self) -> float:
        """Competitor minus baseline, signed so that positive means the competitor is better."""
        return -self.difference if self.better == "higher" else self.difference

    def significant(self, alpha: float) -> bool:
        return is_significant(self.log10_p, alpha)

    @property
    def borrows(self) -> bool:
        """True when the test had no run variance of its own for one system."""
        return BORROWS in self.note


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


def _improved(best: Outcome | None, alpha: float) -> bool:
    return best is not None and best.advantage > 0 and best.significant(alpha)


def _direction(outcome: Outcome | None, alpha: float) -> int:
    """+1 / -1 when significant for / against the competitor, 0 otherwise."""
    if outcome is None or not outcome.significant(alpha) or outcome.advantage == 0:
        return 0
    return 1 if outcome.advantage > 0 else -1


def classify(
    best: Outcome | None,
    headline: Outcome | None,
    alpha: float,
    competitor: str = "the competitor",
    baseline: str = "the baseline",
    facet_aware: Outcome | None = None,
) -> Verdict:
    """The verdict from the run-aware ``headline`` test, read against best vs best; with a
    facet-aware model, a directional claim needs it to agree."""
    if headline is None:
        return Verdict(
            "not tested",
            "neutral",
            "The run-aware comparison could not be fitted, so no conclusion is drawn.",
        )
    caveat = f" Caution: {headline.note}." if headline.borrows else ""
    improved = _improved(best, alpha)
    direction = _direction(headline, alpha)
    if facet_aware is not None and direction and _direction(facet_aware, alpha) != direction:
        winner = competitor if direction > 0 else baseline
        only = (
            f"Over all runs, {winner} is better only for these meta-parameter values: "
            f"significant with a run variance per system (p < {alpha:g}), not once the levels "
            f"of the shared facets are treated as draws (facet-aware model, p = "
            f"{facet_aware.p}); no general claim.{caveat}"
        )
        if improved and direction < 0:
            return Verdict("does not survive", "bad", "The improvement does not survive. " + only)
        if improved:
            return Verdict("survives for these settings", "warn", only)
        return Verdict(f"{winner} better for these settings", "warn", only)
    if headline.significant(alpha) and headline.advantage > 0:
        if improved:
            return Verdict(
                "survives",
                "good",
                f"The improvement survives retraining: over all runs, {competitor} is better "
                f"(run-aware test, p < {alpha:g}).{caveat}",
            )
        return Verdict(
            f"{competitor} better",
            "good",
            f"Over all runs, {competitor} is better (run-aware test, p < {alpha:g}), although "
            f"best vs best showed no significant improvement.{caveat}",
        )
    if headline.significant(alpha) and headline.advantage < 0:
        if improved:
            return Verdict(
                "does not survive",
                "bad",
                f"The improvement does not survive: over all runs, {baseline} is better "
                f"(run-aware test, p < {alpha:g}).{caveat}",
            )
        return Verdict(
            f"{baseline} better",
            "bad",
            f"Over all runs, {baseline} is better (run-aware test, p < {alpha:g}).{caveat}",
        )
    if improved:
        return Verdict(
            "not shown to survive",
            "warn",
            "The improvement is not shown to survive: no significant difference once runs are "
            f"retrained (run-aware test, p ≥ {alpha:g}).{caveat}",
        )
    return Verdict(
        "no significant difference",
        "neutral",
        f"No significant difference once runs are retrained (run-aware test, p ≥ {alpha:g}); "
        f"best vs best showed no significant improvement either.{caveat}",
    )


def _part(name: str, outcome: Outcome, baseline: str, competitor: str) -> str:
    return (
        f"{name} ({outcome.model}): {who_is_better(outcome, baseline, competitor)}, p = {outcome.p}"
    )


def sentence(best: Outcome | None, headline: Outcome | None, baseline: str, competitor: str) -> str:
    """``Best vs best (paper's model, ML GLRT): comp better by 3.17 points, p = ...; all runs
    (run-aware, KR df 18.9): comp better by 3.84 points, p = 0.022.``"""
    parts = []
    if best is not None:
        parts.append(_part("Best vs best", best, baseline, competitor))
    if headline is not None:
        parts.append(_part("all runs", headline, baseline, competitor))
    return "; ".join(parts) + "." if parts else ""


def sensitivity(
    headline: Outcome | None,
    facet_aware: Outcome | None,
    alpha: float,
    baseline: str = "the baseline",
    competitor: str = "the competitor",
    shared: str = "",
) -> str:
    """The facet-aware result beside the headline and, when the two readings disagree, which
    reading applies to which question."""
    if facet_aware is None:
        return ""
    model = facet_aware.model.removeprefix("facet-aware, ")
    text = (
        f"Facet-aware sensitivity model ({model}"
        + (f"; {shared}" if shared else "")
        + f"): {who_is_better(facet_aware, baseline, competitor)}, p = {facet_aware.p}."
    )
    if headline is None or headline.significant(alpha) == facet_aware.significant(alpha):
        return text + " It agrees with the run-aware verdict."
    df = f"{facet_aware.df:.3g}" if math.isfinite(facet_aware.df) else "few"
    return text + (
        " The two readings disagree. The per-system model treats runs as "
        "exchangeable draws of training: it answers whether the result holds when the runs are "
        "trained again with the same recipe. The facet-aware model treats the levels of the "
        "shared facets as draws from their population: read it if you want to generalise to "
        f"other values of those meta-parameters; with few levels it has few df (here {df})."
    )


def paper_note(paper: Outcome | None, baseline: str, competitor: str) -> str:
    """The paper's all-runs GLRT, labelled, with its measured level under the null."""
    if paper is None:
        return ""
    return (
        f"All runs, {PAPER_LABEL} ({paper.model.removeprefix(PAPER_PREFIX)}): "
        f"{who_is_better(paper, baseline, competitor)}, p = {paper.p}; this test "
        f"{PAPER_GLRT_LEVEL}, so it does not decide the verdict."
    )
