"""The headline verdict: does the competitor's advantage survive retraining with this recipe?

Each comparison is reduced to the competitor's *advantage* (positive when the competitor is
better, whatever the metric's direction) and its p-value. The badge comes from the run-aware
headline test only (``tests.csv``, analysis ``all_runs_per_system``: a run variance per system,
t with Kenward-Roger df) and states what it answers: retraining with this recipe, at these
meta-parameter settings (docs/method.md §4b.6). Best vs best is read against it only when its
runs were selected by dev score; selected by test mean it is no evidence of an improvement and
the badge never presupposes one. Generalising to other levels of shared facets is a separate
line from the facet-aware model (``generalisation``), never a downgrade of the badge. The
paper's all-runs GLRT is shown beside it and never decides it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from infrepro.runcounts import holds_level, too_few_runs
from infrepro.vocabulary import NOT_CONVERGED

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
    converged: bool = True  # False: its fit did not converge, no claim is read (§4.6.1)

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
    direction: int = 0  # +1 / -1: the badge claims the competitor / the baseline is better


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


ESTIMAND = "retrained with this recipe, at these meta-parameter settings"
UNTRUSTED_BEST = (
    "Best vs best is not used: its runs were selected by their test mean (no dev scores), so it "
    "shows an improvement in most simulated experiments without one (56-90 %, "
    "docs/method.md §4b.6)."
)
NO_CONCLUSION = (
    "The run-aware comparison's fit did not converge (see the diagnostics), so no conclusion is "
    "drawn from it (docs/method.md §4.6.1)."
)
JUDGED_DF = 4.0  # below: a facet-aware non-significance cannot tell (docs/method.md §4b.6)
NOT_JUDGED = "not judged: too few runs"


def _runs_hold(runs: tuple[int, int] | None, alpha: float) -> bool:
    """Whether (baseline runs, competitor runs) can carry a directional claim (§4b.6)."""
    return runs is None or holds_level(runs[0], runs[1], alpha)


def classify(
    best: Outcome | None,
    headline: Outcome | None,
    alpha: float,
    competitor: str = "the competitor",
    baseline: str = "the baseline",
    best_trusted: bool = True,
    runs: tuple[int, int] | None = None,
) -> Verdict:
    """The badge from the run-aware ``headline`` test (per-system run variance), stating its
    estimand; read against best vs best only when that is ``best_trusted`` (dev-selected).
    ``runs``: (baseline runs, competitor runs); where they cannot hold the level
    (``runcounts.holds_level``) a significant test names no winner: "not judged"."""
    if headline is None:
        return Verdict(
            "not tested",
            "neutral",
            "The run-aware comparison could not be fitted, so no conclusion is drawn.",
        )
    if not headline.converged:
        return Verdict(NOT_CONVERGED, "warn", NO_CONCLUSION)
    caveat = f" Caution: {headline.note}." if headline.borrows else ""
    test = f"(run-aware test with a run variance per system, p {{}} {alpha:g})"
    direction = _direction(headline, alpha)
    improved = best_trusted and _improved(best, alpha)
    after = "" if best_trusted else " " + UNTRUSTED_BEST
    if direction and not _runs_hold(runs, alpha):
        assert runs is not None
        why = too_few_runs(baseline, runs[0], competitor, runs[1], alpha)
        winner = competitor if direction > 0 else baseline
        return Verdict(
            NOT_JUDGED,
            "warn",
            f"The run-aware test points to {winner} (p = {headline.p} {test.format('<')}), "
            f"but {why}, so no direction is claimed.{caveat}{after}",
        )
    if direction:
        winner = competitor if direction > 0 else baseline
        claim = f"{ESTIMAND}, {winner} is better {test.format('<')}.{caveat}"
        if improved and direction > 0:
            return Verdict(
                "survives retraining", "good", f"The improvement survives: {claim}", direction
            )
        if improved:
            return Verdict(
                "does not survive", "bad", f"The improvement does not survive: {claim}", direction
            )
        if best_trusted and direction > 0:
            after = " Best vs best showed no significant improvement."
        tone = "good" if direction > 0 else "bad"
        return Verdict(f"{winner} better", tone, claim[0].upper() + claim[1:] + after, direction)
    none = f"No significant difference when {ESTIMAND} {test.format('≥')}.{caveat}"
    if improved:
        return Verdict(
            "not shown to survive",
            "warn",
            "The best-vs-best improvement is not shown to survive: " + none[0].lower() + none[1:],
        )
    if best_trusted and best is not None:
        after = " Best vs best showed no significant improvement either."
    return Verdict("no significant difference", "neutral", none + after)


def generalisation_direction(facet_aware: Outcome | None, alpha: float) -> int:
    """+1 / -1 when the generalisation line names a winner (the facet-aware test significant
    that way, whether or not the badge agrees), 0 otherwise."""
    return _direction(facet_aware, alpha)


def not_judged(facet_aware: Outcome | None, alpha: float) -> bool:
    """True when the facet-aware test cannot tell: not significant with fewer than
    ``JUDGED_DF`` df (or none)."""
    if facet_aware is None or generalisation_direction(facet_aware, alpha):
        return False
    return not (math.isfinite(facet_aware.df) and facet_aware.df >= JUDGED_DF)


def generalisation(
    headline: Outcome | None,
    facet_aware: Outcome | None,
    alpha: float,
    baseline: str = "the baseline",
    competitor: str = "the competitor",
    levels: str = "",
) -> str:
    """The separate line on generalising to other levels of the shared facets (facet-aware
    model): generalises / not shown to / not judged (few df), never a downgrade of the badge.
    ``levels``: which facets the runs share, with their numbers of levels."""
    if facet_aware is None:
        return ""
    df = f"df {facet_aware.df:.2g}" if math.isfinite(facet_aware.df) else "few df"
    where = "other levels of the shared facets"
    model = f"facet-aware model, {df}, p = {facet_aware.p}"
    head = f"Generalising to {where}"
    direction, own = _direction(headline, alpha), generalisation_direction(facet_aware, alpha)
    if own and own == direction:
        winner = competitor if own > 0 else baseline
        return f"{head}: {winner} better beyond the settings that were run ({model})."
    if own:
        winner = competitor if own > 0 else baseline
        return f"{head}: {winner} better by the facet-aware model alone ({model})."
    if not_judged(facet_aware, alpha):
        count = f"{levels}; " if levels else ""
        return (
            f"{head}: not judged ({count}{model}); with so few levels almost no difference "
            "is detectable, which says nothing about the facets' effect."
        )
    return f"{head}: not shown ({model})."


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


def paper_note(paper: Outcome | None, baseline: str, competitor: str) -> str:
    """The paper's all-runs GLRT, labelled, with its measured level under the null."""
    if paper is None:
        return ""
    return (
        f"All runs, {PAPER_LABEL} ({paper.model.removeprefix(PAPER_PREFIX)}): "
        f"{who_is_better(paper, baseline, competitor)}, p = {paper.p}; this test "
        f"{PAPER_GLRT_LEVEL}, so it does not decide the verdict."
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
