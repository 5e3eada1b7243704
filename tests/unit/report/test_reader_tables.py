"""What a reader of the paste-ready tables and of the group letters trips over (the fourth
adversarial pass): the verdict column's dash defined, the double dagger's note true of a
multi-run system compared with a single output, a long system name wrapped inside the page (the
LaTeX compile measures overfull boxes), and the two alphabets of the group letters explained
where the letters are."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pandas as pd
import pytest
from optional_tools import LatexTools, stated
from workflow_helpers import kreutzer_ter

from infrepro.analyses.common.fitlog import FitLog
from infrepro.analyses.decision.summary import Settings, decide
from infrepro.core.decisions import FAMILY_BASELINE, NOT_SHOWN, PairDecision
from infrepro.report import ReportSettings
from infrepro.report.paper import caption, latex_table, markdown_table
from infrepro.report.sections import decision

View = tuple[pd.DataFrame, list[PairDecision]]


@pytest.fixture(scope="module")
def kreutzer() -> View:
    """Kreutzer's TER decision: Marking and PostEdit (3 runs each) better than the single-run
    Baseline, each a comparison with its single output."""
    data = kreutzer_ter(with_properties=False)
    result = decide(data, FitLog(data.metric), Settings(seed=1))
    records = [r for r in result.records if r.family == FAMILY_BASELINE]
    return result.summary.assign(metric="TER"), records


def renamed(view: View, names: tuple[str, ...]) -> View:
    table, records = view
    mapping = dict(zip(table["system"], names, strict=True))
    records = [
        dataclasses.replace(r, reference=mapping[r.reference], system=mapping[r.system])
        for r in records
    ]
    return table.assign(system=list(names)), records


def _caption(view: View) -> str:
    return caption(*view, "TER", "lower", 0.05)


# -- the verdict column's marks ------------------------------------------------------------------
def test_the_dash_for_no_difference_shown_is_defined_in_the_caption(kreutzer: View) -> None:
    """A verdict of "no difference shown" is printed "–": the caption says so."""
    table, records = kreutzer
    shown = [dataclasses.replace(r, verdict=NOT_SHOWN) for r in records]
    text = _caption((table, shown))
    assert "– in the Verdict column: no difference shown" in text, text
    md = markdown_table(table, shown, label="TER", better="lower", alpha=0.05)
    assert "| – |" in md and "no difference shown" in md
    assert "– in the Verdict column" not in _caption(kreutzer)  # no dash, no definition


def test_double_dagger_note_does_not_say_a_six_run_system_has_one_run(kreutzer: View) -> None:
    """better‡ of a 3-run system against the single-run baseline: the note said "a system with
    one run" as if the row's own system had one; it names the single-output side."""
    text = _caption(kreutzer)
    mark = text[text.index("\u2021") :]
    assert "a system with one run: how it varies" not in mark, mark
    assert "single output" in mark and "one run" in mark
    assert "Runs column" in mark, mark


# -- long names ----------------------------------------------------------------------------------
def _overfull(tex: str, tmp_path: Path, latex: LatexTools, width: str = "5.5in") -> list[float]:
    """The overfull boxes (pt) of the table compiled with its stated engine and preamble at a
    text width of ``width`` (NeurIPS, ICLR: 5.5 in)."""
    engine, preamble = stated(tex)
    document = "\n".join(
        [
            r"\documentclass{article}",
            *preamble,
            rf"\setlength{{\textwidth}}{{{width}}}",
            r"\begin{document}",
            tex,
            r"\end{document}",
            "",
        ]
    )
    log = latex.compile(document, tmp_path, engine)
    return [float(v) for v in re.findall(r"Overfull \\hbox \(([\d.]+)pt too wide", log)]


@pytest.mark.parametrize(
    "name",
    [
        "x" * 60,
        "y" * 300,
        "transformer_big_shared_vocabulary_label_smoothing_0.1_checkpoint_averaging_v2",
        "a system name with many words in it, " * 4,
    ],
    ids=["60 characters", "300 characters", "underscores", "words"],
)
def test_a_long_system_name_wraps_inside_the_page(
    kreutzer: View, name: str, tmp_path: Path, latex: LatexTools
) -> None:
    """The table grew with the longest name (271 pt overfull at 60 characters, 1,340 pt at
    300): names wrap in a column of their own width, and the table fits 5.5 in."""
    view = renamed(kreutzer, ("Marking", name, "Baseline"))
    tex = latex_table(*view, label="TER", stem="ter", better="lower", alpha=0.05)
    assert _overfull(tex, tmp_path, latex) == []
    # only a name too long for the page wraps: short names keep their natural column
    short = latex_table(*kreutzer, label="TER", stem="ter", better="lower", alpha=0.05)
    assert r"\begin{tabular}{llrllllllc}" in short


# -- group letters -------------------------------------------------------------------------------
def test_two_alphabets_and_a_lone_single_run_system_are_explained_where_the_letters_are(
    kreutzer: View,
) -> None:
    """Systems (lower case) and single outputs (upper case) never share a letter, and the
    single-run baseline gets none: the caption under the letters (paper and page) says why, so
    that a pair without a shared letter is not read as a difference."""
    text = _caption(kreutzer)
    assert "never share a letter" in text, text
    assert "(the baseline) has no letter" in text, text
    settings = ReportSettings(
        name="k",
        baseline="Baseline",
        systems=["Baseline", "Marking", "PostEdit"],
        metrics=["TER"],
        better={"TER": "lower"},
    )
    table, records = kreutzer
    figures = decision.groups_figure(table, "TER", "TER", settings)
    assert figures and "no letter" in figures[0].caption, figures[0].caption
