"""The groups diagram's layout (docs/method.md §4c.9): labels on both sides in rows that never
cross, bars on levels that never overlap, letters read back from the table's display."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from infrepro.core.vocabulary import SYSTEM
from infrepro.plots.groups import (
    axis_limits,
    bar_levels,
    groups_diagram,
    label_rows,
    letter_members,
)
from infrepro.report.inputs import ReportSettings
from infrepro.report.sections.decision import groups_figure


@pytest.mark.parametrize("n", [2, 3, 7, 30])
def test_label_rows_split_the_systems_and_no_elbow_line_crosses_another(n: int) -> None:
    positions = list(np.random.default_rng(n).normal(50, 3, n).round(1))  # ties included
    placed = label_rows(positions)
    left = [i for i, p in enumerate(placed) if p.side == "left"]
    right = [i for i, p in enumerate(placed) if p.side == "right"]
    assert len(left) == n // 2 and len(right) == n - n // 2
    assert max(positions[i] for i in left) <= min(positions[i] for i in right)
    for side in (left, right):
        assert sorted(placed[i].row for i in side) == list(range(len(side)))  # a row each
    # a line turns at its row and runs outwards: it crosses another side's vertical only if
    # that vertical lies further out and goes deeper; rows deepen towards the middle
    for a in left:
        for b in left:
            if positions[a] < positions[b]:
                assert placed[a].row < placed[b].row
    for a in right:
        for b in right:
            if positions[a] > positions[b]:
                assert placed[a].row < placed[b].row


def test_bar_levels_keep_a_gap_and_reuse_free_levels() -> None:
    spans = [(0.0, 2.0), (1.0, 3.0), (2.05, 4.0), (2.5, 5.0), (4.5, 6.0)]
    levels = bar_levels(spans, gap=0.1)
    assert levels == [0, 1, 2, 0, 1]
    for level in set(levels):
        on = sorted(s for s, v in zip(spans, levels, strict=True) if v == level)
        assert all(a[1] + 0.1 < b[0] for a, b in zip(on, on[1:], strict=False))
    assert bar_levels(spans, gap=0.0)[2] == 0 and bar_levels([], gap=0.1) == []


def test_letter_members_read_the_display_back() -> None:
    assert letter_members(["a", "ab", "b", "c"]) == {"a": [0, 1], "b": [1, 2], "c": [3]}
    assert letter_members(["Z.a", ".a..b"]) == {"Z": [0], ".a": [0, 1], "..b": [1]}


def _diagram(lower: bool) -> str:
    names = [f"S{i:02d} " + "long-name-" * 19 for i in range(30)]
    means = list(np.random.default_rng(3).normal(50, 3, 30))
    order = [int(i) for i in np.argsort(means)]
    letters = {chr(97 + k): order[3 * k : 3 * k + 6] for k in range(9)}
    return groups_diagram(
        names, means, letters, lower_is_better=lower, xlabel="x", title="t", key="g"
    )


def test_groups_diagram_is_deterministic_and_direction_aware() -> None:
    higher, lower = _diagram(False), _diagram(True)
    assert higher == _diagram(False)
    assert higher != lower
    assert higher.startswith("<svg") and 'aria-label="t"' in higher


def test_better_is_to_the_right() -> None:
    assert axis_limits([1.0, 3.0], lower_is_better=False) == pytest.approx((0.88, 3.12))
    assert axis_limits([1.0, 3.0], lower_is_better=True) == pytest.approx((3.12, 0.88))
    assert axis_limits([2.0, 2.0], lower_is_better=False) == (1.0, 3.0)


def test_the_figure_follows_the_table_and_its_caption_names_model_and_pairs() -> None:
    """Three systems, two single-run ones: solid bars for the systems' letters, dashed ones for
    the outputs' (upper case), and a caption that says which is which."""
    rows = pd.DataFrame(
        {
            SYSTEM: ["Marking", "PostEdit", "Baseline", "Other"],
            "model_mean": [0.578371, 0.581093, 0.590713, 0.60],
            "group": ["a", "a", "", ""],
            "output_group": ["", "", "A", "A"],
            "runs": [3, 3, 1, 1],
            "df_method": ["Kenward-Roger"] * 4,
        }
    )
    settings = ReportSettings("k", "Baseline", list(rows[SYSTEM]), ["ter"], {"ter": "lower"})
    (figure,) = groups_figure(rows, "ter", "TER", settings)
    assert figure.key == "groups-ter" and str(figure.svg).startswith("<svg")
    for part in ("model M (REML)", "over all 6 pairs", "Dashed bars (upper-case letters)"):
        assert part in figure.caption
    assert "stroke-dasharray" in str(figure.svg)  # the output group's bar
    systems_only = rows.assign(output_group="")
    (plain,) = groups_figure(systems_only, "ter", "TER", settings)
    assert "stroke-dasharray" not in str(plain.svg) and "Dashed" not in plain.caption
    assert groups_figure(rows.iloc[:1], "ter", "TER", settings) == []


def test_a_single_run_system_is_not_said_to_differ_from_every_other() -> None:
    """A single-output baseline is in no solid bar because its comparisons are with one output
    (§4c.6), not because it differs from every system: the caption says which systems that is,
    and the 'differs from every other' reading is kept to systems over retraining."""
    rows = pd.DataFrame(
        {
            SYSTEM: ["NA", "1", "comp "],
            "model_mean": [0.5488, 0.5054, 0.4904],
            "group": ["a", "", "b"],
            "output_group": ["", "", ""],
            "runs": [3, 1, 3],
            "df_method": ["Kenward-Roger"] * 3,
        }
    )
    settings = ReportSettings("k", "1", list(rows[SYSTEM]), ["chrf"], {"chrf": "higher"})
    (figure,) = groups_figure(rows, "chrf", "chrF", settings)
    assert "Single-run systems (1) are in no solid bar" in figure.caption
    assert "two or more runs under no solid bar differs from every other such system" in (
        figure.caption
    )
    (multi,) = groups_figure(rows.assign(runs=[3, 2, 3]), "chrf", "chrF", settings)
    assert "Single-run" not in multi.caption
