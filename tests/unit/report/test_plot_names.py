"""Long names in figures: shortened for ticks and legends, unique, legends that fit."""

from __future__ import annotations

from infrepro.plots import short_name, short_names
from infrepro.plots.names import LIMIT
from infrepro.plots.svg import legend_columns


def test_short_names_keep_short_ones_and_cut_long_ones_to_the_limit() -> None:
    names = ["baseline", "S01 " + "x" * 196, "S02 " + "x" * 190 + "-v2"]
    shown = short_names(names)
    assert shown[0] == "baseline"
    assert all(len(s) <= LIMIT for s in shown)
    assert shown[1].startswith("S01 ") and "…" in shown[1]
    assert shown[2].endswith("-v2")  # the tail, where variants differ, is kept


def test_short_names_that_collide_are_numbered() -> None:
    names = ["A" * 100 + "same-tail", "A" * 101 + "same-tail", "B"]
    assert short_name(names[0]) == short_name(names[1])
    shown = short_names(names)
    assert len(set(shown)) == 3 and shown[2] == "B"
    assert shown[0].endswith("#1") and shown[1].endswith("#2")


def test_legend_columns_shrink_for_long_labels_only() -> None:
    assert legend_columns(["a", "b", "c", "d", "e"], 3.5, 4) == 4
    assert legend_columns(["a", "b"], 3.5, 4) == 2
    assert legend_columns(["x" * 200] * 30, 3.5, 4) == 1


def test_a_long_legend_title_is_shortened_like_the_labels() -> None:
    """A facet's 200-character name titles the meta-parameter plots' legend: it once ran past
    both edges of the figure."""
    import matplotlib.pyplot as plt

    from infrepro.plots.svg import legend_below

    facet = "checkpoint " + "of the meta-parameter sweep " * 7
    fig, ax = plt.subplots()
    (line,) = ax.plot([0, 1], [0, 1])
    legend_below(fig, [line], ["checkpoint-00"], 1, title=facet)
    assert fig.legends[0].get_title().get_text() == short_name(facet)
    assert len(short_name(facet)) <= LIMIT
    plt.close(fig)
