"""The readings the decision record decides itself (docs/method.md §4c.5, §4c.11): every surface
renders the record's word and none decides it again."""

from __future__ import annotations

import math

import pytest
from decision_records import record

from infrepro.analyses.decision.summary import few_runs_note
from infrepro.core.decisions import GENERALISES, JUDGED_DF, NOT_JUDGED, NOT_SHOWN_BEYOND


@pytest.mark.parametrize(
    ("changes", "reading"),
    [
        ({"facet_aware_p": ""}, ""),
        ({"facet_aware_p": "0.01", "generalises": True, "facet_aware_df": 2.0}, GENERALISES),
        ({"facet_aware_p": "0.4", "facet_aware_df": JUDGED_DF - 0.01}, NOT_JUDGED),
        ({"facet_aware_p": "0.4", "facet_aware_df": math.nan}, NOT_JUDGED),
        ({"facet_aware_p": "0.4", "facet_aware_df": JUDGED_DF}, NOT_SHOWN_BEYOND),
    ],
)
def test_the_generalisation_reading_is_the_records(changes, reading) -> None:
    assert record(**changes).generalisation == reading


def test_the_few_runs_note_is_decided_by_the_analysis() -> None:
    """10 vs 2 runs cannot hold the level of a test on each system's own runs; 10 vs 4 can, and
    a single run is not this rule's (its comparisons are of outputs)."""
    assert "4 runs of comp would hold it" in few_runs_note("bl", 10, "comp", 2, 0.05)
    assert few_runs_note("bl", 10, "comp", 4, 0.05) == ""
    assert few_runs_note("bl", 10, "comp", 1, 0.05) == ""
