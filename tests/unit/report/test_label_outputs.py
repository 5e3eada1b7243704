"""Metamorphic experiments (tests/label_experiments.py) whose systems carry names that trip the
places that show them (DISPLAY_NAMES: line breaks, pipes, backslashes, HTML, entities, edge
spaces, Arabic, CJK, Devanagari, emoji, names starting with ``_``), run through the workflow's
rule scripts in-process; their outputs: the paste-ready Markdown parses back to exactly the
names (GitHub's GFM parser), the LaTeX compiles with the engine it states, and every figure
legend that names systems names all of them, each once."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from optional_tools import LatexTools
from test_paper_escape import compile_stated, gfm

import infrepro.plots as plots
from infrepro.io.results import read_result_table
from infrepro.plots import short_names
from infrepro.report import ReportSettings, render_report
from infrepro.report.decisions import records_of
from infrepro.report.inputs import table_paths
from infrepro.report.paper import paper_files

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from label_experiments import display_renaming, generate, rename, run_in_process  # noqa: E402

ANALYSES = ["summary", "budget", "variance", "conditional"]
DESIGNS = range(6)


def experiments(design: int):
    """The design as generated, its display renaming and the renamed experiment."""
    experiment = generate(300 + design)
    renaming = display_renaming(experiment, design)
    return experiment, renaming, rename(experiment, renaming)


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[int, tuple]:
    """Each design's (experiment, renaming, renamed experiment) and the results folders of
    both runs (tables in results/tables)."""
    out = {}
    for design in DESIGNS:
        base, renaming, renamed = experiments(design)
        folders = []
        for name, experiment in (("base", base), ("renamed", renamed)):
            workdir = tmp_path_factory.mktemp(f"design{design}{name}")
            run_in_process(experiment, workdir, ANALYSES)
            folders.append(workdir / "results")
        out[design] = (base, renaming, renamed, *folders)
    return out


def summary_of(results: Path) -> pd.DataFrame:
    text = (results / "tables" / "summary.csv").read_text(encoding="utf-8")
    return pd.read_csv(io.StringIO(text), dtype={"system": str}, keep_default_na=False)


def paper_of(results: Path, experiment) -> tuple[str, str]:
    """The paste-ready files of the run, from its summary rows and decision records."""
    tables = results / "tables"
    summary = read_result_table("summary", tables / "summary.csv")
    records = [
        r
        for r in records_of(read_result_table("decisions", tables / "decisions.csv"))
        if r.family == "baseline" and r.reference == experiment.baseline
    ]
    return paper_files(summary, records, experiment.metric, "higher", 0.05)


@pytest.mark.parametrize("design", DESIGNS)
def test_markdown_parses_back_to_the_systems(runs, design: int) -> None:
    _, _, experiment, _, results = runs[design]
    summary = summary_of(results)
    assert set(summary["system"]) == set(experiment.systems)
    md = paper_of(results, experiment)[1]
    rows = gfm(md).rows
    assert [len(r) for r in rows] == [len(rows[0])] * len(rows)
    assert [r[1] for r in rows[1:]] == list(summary.sort_values("rank")["system"])


@pytest.mark.parametrize("design", DESIGNS[:2])
def test_latex_compiles_with_the_stated_engine(
    runs, design: int, tmp_path, latex: LatexTools
) -> None:
    _, _, experiment, _, results = runs[design]
    compile_stated(paper_of(results, experiment)[0], tmp_path, latex)


def legends_of(experiment, results: Path, monkeypatch) -> tuple[list[list[str]], str]:
    """The whole report rendered from the tables: the texts of every figure legend drawn, in
    order, and the page."""
    legends: list[list[str]] = []

    def capture(original):
        def to_svg(fig, key, label=""):
            FigureCanvasAgg(fig)
            fig.canvas.draw()
            legends.extend([t.get_text() for t in legend.get_texts()] for legend in fig.legends)
            return original(fig, key, label)

        return to_svg

    with monkeypatch.context() as patch:
        for module in vars(plots).values():
            if hasattr(module, "to_svg") and module.__name__.startswith("infrepro.plots."):
                patch.setattr(module, "to_svg", capture(module.to_svg))
        settings = ReportSettings(
            "labels",
            experiment.baseline,
            list(experiment.systems),
            [experiment.metric],
            {experiment.metric: experiment.better},
            properties=experiment.properties,
            facets=experiment.facets,
        )
        html = render_report(table_paths(results / "tables"), settings)
    return legends, html


@pytest.mark.parametrize("design", DESIGNS)
def test_every_legend_maps_back_to_the_base_runs(runs, design: int, monkeypatch) -> None:
    """Every figure legend of the renamed run is the base run's with each system's name
    renamed: no system lost (``_v1_`` included), none twice."""
    base, renaming, renamed, base_results, renamed_results = runs[design]
    expected, _ = legends_of(base, base_results, monkeypatch)
    legends, html = legends_of(renamed, renamed_results, monkeypatch)
    assert "<script>alert" not in html
    shown = dict(zip(base.systems, short_names(renamed.systems), strict=True))
    assert legends == [[shown.get(t, t) for t in texts] for texts in expected]
    named = {t for texts in legends for t in texts} & set(shown.values())
    assert any(name.startswith("_") for name in named)  # a system called _v1_ in a legend
    assert all(len(texts) == len(set(texts)) for texts in legends)
