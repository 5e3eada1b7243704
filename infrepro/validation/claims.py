"""What the report claims in simulated experiments (docs/method.md §4b.6, issue 23): each
experiment's headline and facet-aware test results (``comparison_experiment``) go through the
report's own wording rules (``verdict.classify``, ``verdict.generalisation_direction``), so the
rates below are those of the words a reader sees. Best vs best is not simulated here: the
experiments have no dev scores, so the report does not read it (``best_trusted=False``); the
badge's direction does not depend on it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from infrepro.report.verdict import Outcome, classify, generalisation_direction, not_judged

from .calibration import ALPHA, BASE, COMP


def outcome_of(result: object) -> Outcome | None:
    """A test result of ``comparison_experiment`` (estimate = A - B, higher is better) as the
    report's :class:`Outcome`; None when the test was not fitted."""
    if result is None or result["log10_p"] is None:  # type: ignore[index]
        return None
    log10_p = float(result["log10_p"])  # type: ignore[index]
    return Outcome(
        float(result["estimate"]),  # type: ignore[index]
        f"{10**log10_p:.4g}",
        log10_p,
        "higher",
        df=float(result.get("df", math.nan)),  # type: ignore[union-attr]
    )


@dataclass(frozen=True)
class Claims:
    """What one experiment's report says: the badge's direction (+1: B better, -1: A better,
    0: none), the generalisation line's direction, and whether that line says 'not judged'."""

    badge: int
    general: int
    not_judged: bool
    fitted: bool

    def names(self, winner: int) -> bool:
        """Does some wording (the badge or the generalisation line) name ``winner`` (+1: B,
        -1: A) as better?"""
        return winner in (self.badge, self.general)


def claims_of(results: dict[str, object], runs: tuple[int, int], alpha: float = ALPHA) -> Claims:
    """The report's claims for one experiment's ``comparison_experiment`` results, with
    ``runs`` = (baseline runs, competitor runs) of its design (the run-count rule)."""
    headline = outcome_of(results.get("headline"))
    facet = outcome_of(results.get("facet_aware"))
    verdict = classify(None, headline, alpha, COMP, BASE, best_trusted=False, runs=runs)
    general = generalisation_direction(facet, alpha)
    return Claims(verdict.direction, general, not_judged(facet, alpha), headline is not None)
