"""Figures kept from the previous render (infrepro/plots/cache.py): a render through the store
is byte-identical to one without it, and only figures whose data changed are drawn again."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pandas as pd
import pytest
from kept_stores import UNUSABLE, unusable_store
from test_report_render import FIGURE_SETTINGS as SETTINGS
from test_report_render import TEMPLATES, figure_tables

from infrepro.plots.cache import FigureStore, cached_figure, figures_from, finish_figures
from infrepro.plots.planning import power_curve
from infrepro.plumbing.atomic import write_csv
from infrepro.report import render_report, table_paths


def _render(folder: Path, store: FigureStore | None) -> str:
    if store is None:
        return render_report(table_paths(folder), SETTINGS, TEMPLATES)
    with figures_from(store):
        return render_report(table_paths(folder), SETTINGS, TEMPLATES)


def test_a_render_through_the_store_equals_one_without(tmp_path: Path) -> None:
    for name, frame in figure_tables().items():
        if not frame.empty:
            write_csv(frame, tmp_path / f"{name}.csv")
    path = tmp_path / "figures.json"
    plain = _render(tmp_path, None)
    first = FigureStore.open(path)
    assert _render(tmp_path, first) == plain
    assert first.reused == 0 and len(first.current) == 4
    first.save()
    second = FigureStore.open(path)
    assert _render(tmp_path, second) == plain
    assert second.reused == 4


CURVES = pd.DataFrame(
    {
        "effect_source": ["observed"] * 3,
        "improvement_points": [1.0] * 3,
        "runs_baseline": [2, 3, 4],
        "power": [0.2, 0.4, 0.6],
        "mc_se": [0.01] * 3,
    }
)


def test_changed_data_is_drawn_again(tmp_path: Path) -> None:
    store = FigureStore.open(tmp_path / "figures.json")
    with figures_from(store):
        first = power_curve(CURVES, title="t", key="k")
        again = power_curve(CURVES.copy(), title="t", key="k")
        changed = power_curve(CURVES.assign(power=[0.2, 0.4, 0.7]), title="t", key="k")
        retitled = power_curve(CURVES, title="other", key="k")
    # the same rows under other labels (rows filtered from a longer table keep theirs)
    relabelled = power_curve(CURVES.set_axis([7, 8, 9]), title="t", key="k")
    assert first == again == relabelled == power_curve(CURVES, title="t", key="k")
    assert store.reused == 0  # within one render, a figure drawn once is looked up
    assert changed != first and retitled != first
    assert changed == power_curve(CURVES.assign(power=[0.2, 0.4, 0.7]), title="t", key="k")
    assert len(store.current) == 3


@pytest.mark.parametrize("content", UNUSABLE)
def test_an_unreadable_or_foreign_store_is_ignored(tmp_path: Path, content: str | None) -> None:
    path = tmp_path / "figures.json"

    def save() -> None:
        store = FigureStore.open(path)
        with figures_from(store):
            power_curve(CURVES, title="t", key="k")
        store.save()

    unusable_store(path, content, save)
    store = FigureStore.open(path)
    assert store.previous == {}
    with figures_from(store):
        assert power_curve(CURVES, title="t", key="k") == power_curve(CURVES, title="t", key="k")
    assert store.reused == 0


def test_a_render_in_two_processes_equals_one_in_one(tmp_path: Path) -> None:
    for name, frame in figure_tables().items():
        if not frame.empty:
            write_csv(frame, tmp_path / f"{name}.csv")
    plain = _render(tmp_path, None)
    store = FigureStore.open(tmp_path / "figures.json")
    with figures_from(store, processes=2):
        assert render_report(table_paths(tmp_path), SETTINGS, TEMPLATES) == plain
    assert len(store.current) == 4 and not store.pending and store.processes == 1


@cached_figure
def _drawn_by(label: str) -> str:
    return f"<svg>{label} {os.getpid()}</svg>"


def test_deferred_figures_are_drawn_in_other_processes_and_put_in_place(tmp_path: Path) -> None:
    store = FigureStore.open(tmp_path / "figures.json")
    with figures_from(store, processes=2):
        first, second = _drawn_by("a"), _drawn_by("b")
        assert first.startswith("<!--infrepro-figure:") and first != second
        assert _drawn_by("a") == first  # asked twice, drawn once
        page = finish_figures(f"<p>{first}</p><p>{second}</p><p>{first}</p>")
    drawn = re.findall(r"<svg>(\w) (\d+)</svg>", page)
    assert [label for label, _ in drawn] == ["a", "b", "a"]
    assert all(int(pid) != os.getpid() for _, pid in drawn)
    assert set(store.current.values()) == {f"<svg>{a} {p}</svg>" for a, p in drawn}
    with figures_from(store):  # one process: drawn at once, here
        assert _drawn_by("c") == f"<svg>c {os.getpid()}</svg>"


def test_without_a_safe_fork_the_figures_are_drawn_in_the_renders_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("infrepro.plots.cache.FORKS", False)  # macOS, Windows
    store = FigureStore.open(tmp_path / "figures.json")
    with figures_from(store, processes=4):
        assert store.processes == 1
        assert _drawn_by("d") == f"<svg>d {os.getpid()}</svg>"
