"""The within-bin table's note says which pairs it compares (docs/method.md §4.2.3), read off
contrasts.csv: the decision family's pairs with the baseline, or every pair."""

from __future__ import annotations

import itertools

import pandas as pd
import pytest

from infrepro.core.registry import CONDITIONAL, METAPARAM, run_aware
from infrepro.report.sections.properties import within_pairs_text


def contrasts(pairs: list[tuple[str, str]], analysis: str = CONDITIONAL) -> pd.DataFrame:
    rows = [
        {"analysis": name, "level1": a, "level2": b}
        for name in (analysis, run_aware(analysis))
        for a, b in pairs
    ]
    return pd.DataFrame(rows)


@pytest.mark.parametrize(
    ("pairs", "text"),
    [
        ([("A", "B"), ("A", "C"), ("A", "D")], "each system against the baseline"),
        (list(itertools.combinations("ABCD", 2)), "every pair of systems"),
        ([("A", "B")], ""),  # one pair: nothing to tell apart
    ],
)
def test_the_note_names_the_pairs_the_table_holds(pairs, text: str) -> None:
    said = within_pairs_text(contrasts(pairs), "A")
    assert said.startswith(text) if text else said == ""


def test_other_analyses_rows_do_not_count() -> None:
    table = pd.concat(
        [
            contrasts([("A", "B"), ("A", "C")]),
            contrasts(list(itertools.combinations("xyz", 2)), METAPARAM),
        ]
    )
    assert within_pairs_text(table, "A").startswith("each system against the baseline")
