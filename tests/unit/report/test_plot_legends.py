"""Legends and ticks for any name: every system in the legend whatever its name (matplotlib
drops labels that start with ``_`` when it collects them itself), each entry once, the run-score
figure's tick labels never overlapping (measured from the drawn text), the budget figure in
points with whole-run ticks."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

import infrepro.plots.distributions as distributions
import infrepro.plots.interaction as interaction
import infrepro.plots.svg as svg
from infrepro.plots import short_names, system_style
from infrepro.plots.planning import budget_curves
from infrepro.plots.reliability import dstudy_curve

UNDERSCORED = ["_v1_", "_v0_", "_", "__init__", "_child0", "plain"]


@pytest.fixture
def drawn(monkeypatch) -> list:
    """The figures the plot functions draw, drawn (with their text laid out) in their style."""
    figures = []

    def capture(fig, key, label=""):
        FigureCanvasAgg(fig)
        fig.canvas.draw()
        figures.append(fig)
        return ""

    for module in (svg, distributions, interaction):
        monkeypatch.setattr(module, "to_svg", capture)
    return figures


def legend_texts(fig) -> list[str]:
    (legend,) = fig.legends
    return [t.get_text() for t in legend.get_texts()]


def runs_of(systems: list[str], runs: int = 3, facet_levels: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    rows = []
    for s in systems:
        for r in range(runs):
            rows.append(
                {"system": s, "value": 50 + rng.normal(), "is_best": r == 0, "seed": f"{r % 2}"}
            )
    return pd.DataFrame(rows)


def test_run_distribution_legend_has_underscore_names_once(drawn) -> None:
    """Two systems coloured by the same facet: each level once; a facet and levels named
    with a leading underscore are shown."""
    systems = ["_v1_", "_v0_", "base"]
    runs = runs_of(systems).rename(columns={"seed": "_seed"})
    colour = {s: ("_seed", ["0", "1"]) for s in systems[:2]}
    distributions.run_distribution(runs, systems, ylabel="y", title="t", key="k", colour_by=colour)
    (fig,) = drawn
    texts = legend_texts(fig)
    assert texts == ["_seed = 0", "_seed = 1", "best run"]
    ticks = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert ticks == systems


def _overlaps(boxes) -> list[tuple[int, int]]:
    return [
        (i, j)
        for (i, a), (j, b) in itertools.combinations(enumerate(boxes), 2)
        if a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1
    ]


@pytest.mark.parametrize(
    "systems",
    [
        ["a", "b"],
        ["baseline", "competitor"],
        [f"system-{k}" for k in range(5)],
        [f"transformer-big-{k}" for k in range(3)],
        ["W" * 32, "M" * 32],
        [f"S{k} " + "x" * 40 for k in range(8)],
        [f"{k}" for k in range(8)],
        ["日本語システム", "نموذج", "_v1_", "emoji 😀"],
        [f"sys{k:02d}" for k in range(12)],
    ],
)
def test_run_distribution_tick_labels_never_overlap(drawn, systems: list[str]) -> None:
    """Measured on the drawn figure: no two tick labels' boxes intersect, and every label
    stays inside the figure."""
    distributions.run_distribution(runs_of(systems), systems, ylabel="y", title="t", key="k")
    (fig,) = drawn
    ax = fig.axes[0]
    renderer = fig.canvas.get_renderer()
    shown = []
    for axis, labels in ((0, ax.get_xticklabels()), (1, ax.get_yticklabels())):
        low, high = sorted((ax.get_xlim(), ax.get_ylim())[axis])
        labels = [t for t in labels if t.get_text() and low <= t.get_position()[axis] <= high]
        boxes = [t.get_window_extent(renderer) for t in labels]
        assert _overlaps(boxes) == [], [t.get_text() for t in labels]
        for t, box in zip(labels, boxes, strict=True):
            assert box.x0 >= 0 and box.x1 <= fig.bbox.width, t.get_text()
        shown += [t.get_text() for t in labels]
    assert set(short_names(systems)) <= set(shown)


def budget_frame(systems: list[str]) -> pd.DataFrame:
    rows = []
    for k, s in enumerate(systems):
        for b in range(1, 5):
            best = 0.5 + 0.01 * k + 0.02 * np.log(b)
            rows.append(
                {
                    "system": s,
                    "budget": b,
                    "expected_best": best,
                    "percentile_low": best - 0.01,
                    "percentile_high": best + 0.01,
                }
            )
    return pd.DataFrame(rows)


def test_budget_legend_and_whole_run_ticks(drawn) -> None:
    systems = UNDERSCORED
    styles = {s: system_style(k) for k, s in enumerate(systems)}
    budget_curves(budget_frame(systems), styles, crossing=2, title="t", ylabel="y", key="b")
    (fig,) = drawn
    assert legend_texts(fig) == systems
    ticks = [t for t in fig.axes[0].get_xticks() if 1 <= t <= 4]
    assert ticks and all(float(t).is_integer() for t in ticks)


def test_budget_figure_is_in_points() -> None:
    """The report's budget figure: test scores in points (x 100) like every other figure."""
    from infrepro.report.inputs import ReportSettings
    from infrepro.report.sections import planning

    frame = budget_frame(["base", "c1", "c2"]).assign(metric="ter", source="test_mean")
    seen = {}

    def spy(curves, styles, **kwargs):
        seen["curves"], seen["ylabel"] = curves, kwargs["ylabel"]
        return "<svg></svg>"

    settings = ReportSettings("x", "base", ["base", "c1", "c2"], ["ter"], {"ter": "lower"})
    original = planning.budget_curves
    planning.budget_curves = spy
    try:
        planning._budget_figures(frame, settings, {})
    finally:
        planning.budget_curves = original
    assert np.allclose(seen["curves"]["expected_best"], frame["expected_best"] * 100)
    assert "points" in seen["ylabel"]


def test_interaction_and_reliability_legends_show_underscore_names(drawn) -> None:
    groups = UNDERSCORED[:4]
    styles = {g: system_style(k) for k, g in enumerate(groups)}
    lines = pd.DataFrame(
        [
            {"group": g, "x": x, "estimate": x + k, "lower": x + k - 1, "upper": x + k + 1}
            for k, g in enumerate(groups)
            for x in (0.0, 1.0)
        ]
    )
    text = interaction.PlotText("x", "y", "t", "k", legend_title="_facet")
    interaction.numeric_interaction(lines, lines.iloc[:0], styles, text)
    cells = lines.rename(columns={"x": "bin"}).assign(bin=lambda f: f["bin"].map(str))
    interaction.categorical_interaction(cells, ["0.0", "1.0"], styles, text)
    curves = pd.DataFrame(
        [{"system": g, "n_per_facet": n, "phi": 0.5 + 0.1 * n} for g in groups for n in (1, 2)]
    )
    dstudy_curve(curves, styles, title="t", key="r")
    assert [legend_texts(fig) for fig in drawn] == [groups] * 3
    assert drawn[0].legends[0].get_title().get_text() == "_facet"
