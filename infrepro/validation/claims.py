"""What the report claims in simulated experiments (docs/method.md §4b.6, §4c.11): each
experiment's decision record of B against A (``calibration.decision_result``, made by the
``summary`` analysis' own functions) is what the table, the badge and the sentence say, so the
rates below are those of the words a reader sees. The experiments have no dev scores: no
survival is stated, and the badge does not depend on best vs best.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from infrepro.core.decisions import BETTER, JUDGED_DF, WORSE
from infrepro.validation.calibration import ALPHA


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


def claims_of(results: dict[str, object], alpha: float = ALPHA) -> Claims:
    """The report's claims for one experiment's ``comparison_experiment`` results (its
    ``decision`` entry)."""
    decision = results.get("decision")
    if decision is None:
        return Claims(0, 0, False, False)
    verdict = str(decision["verdict"])  # type: ignore[index]
    badge = {BETTER: 1, WORSE: -1}.get(verdict, 0)
    general = badge if decision["generalises"] else 0  # type: ignore[index]
    df = float(decision["facet_df"])  # type: ignore[index, arg-type]
    facet_p = float(decision["facet_log10_p"])  # type: ignore[index, arg-type]
    judged = math.isnan(facet_p) or facet_p < math.log10(alpha) or df >= JUDGED_DF
    return Claims(badge, general, not judged, True)
