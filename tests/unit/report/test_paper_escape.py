"""Paste-ready files for any name (infrepro/report/escape.py, paper.py): the Markdown table
parses back to exactly its cells with GitHub's own GFM parser (cmark-gfm, through cmarkgfm),
for adversarial names and for random text; the LaTeX table compiles with the engine and the
preamble its first lines state (pdflatex for Latin names, lualatex for other scripts), every
glyph set (no missing character) and the names in the PDF's text; labels are unique."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import unicodedata
from html.parser import HTMLParser
from pathlib import Path

import cmarkgfm
import pandas as pd
import pytest
from cmarkgfm.cmark import Options
from hypothesis import given, settings
from hypothesis import strategies as st
from optional_tools import LatexTools, stated
from workflow_helpers import kreutzer_ter

from infrepro.analyses.common.fitlog import FitLog
from infrepro.analyses.decision.summary import Settings, decide
from infrepro.core.decisions import FAMILY_BASELINE, PairDecision
from infrepro.core.vocabulary import file_stem
from infrepro.report import escape
from infrepro.report.paper import header, latex_table, markdown_table, paper_files

# Names the issue listed, and more of the same kind
HOSTILE = (
    "line\nbreak",
    "\\|",
    "a\\|b",
    "back\\\\slash\\",
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "&amp; &lt; &#124;",
    "  edge spaces  ",
    "\ttab\t",
    "pipe | in | cell",
    "**bold** _em_ `code` ~~strike~~ [link](x) ![img](y) $x$",
    "# heading",
    "- item",
    "1. first",
    "> quote",
    "www.example.com http://a.b/c?d=1 a@b.co",
    "_v1_",
    "نموذج عربي",
    "日本語システム",
    "中文模型",
    "हिन्दी प्रणाली",
    "emoji 😀🎉",
    "a\r\nb",
    "\u00a0nbsp\u00a0",
    "trailing backslash\\",
)
NON_LATIN = (
    "نموذج عربي 12",
    "mBART-عربي-v2",
    "עברית חדשה",
    "日本語システム",
    "한국어 모델",
    "中文模型",
    "हिन्दी प्रणाली",
    "Ελληνικά",
    "Русский",
    "emoji 😀🎉",
)


class _Cells(HTMLParser):
    """The text of every table cell of an HTML page, row by row (header row first)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[list[str]] = []
        self.paragraphs: list[str] = []
        self._text: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th", "p"):
            self._text = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._text is not None:
            self.rows[-1].append("".join(self._text))
            self._text = None
        elif tag == "p" and self._text is not None:
            self.paragraphs.append("".join(self._text))
            self._text = None

    def handle_data(self, data: str) -> None:
        if self._text is not None:
            self._text.append(data)


def gfm(markdown: str, *, unsafe: bool = False) -> _Cells:
    """``markdown`` through GitHub's GFM parser (tables, autolinks, strikethrough, tag filter),
    its cells and paragraphs as text."""
    html = cmarkgfm.github_flavored_markdown_to_html(
        markdown, options=Options.CMARK_OPT_UNSAFE if unsafe else 0
    )
    parsed = _Cells()
    parsed.feed(html)
    parsed.close()
    return parsed


View = tuple[pd.DataFrame, list[PairDecision]]


@pytest.fixture(scope="module")
def kreutzer_table() -> View:
    """Kreutzer's decision: its summary rows and its records against the baseline."""
    data = kreutzer_ter(with_properties=False)
    result = decide(data, FitLog(data.metric), Settings(seed=1))
    return result.summary, [r for r in result.records if r.family == FAMILY_BASELINE]


def renamed(view: View, names: tuple[str, ...], metric: str = "TER") -> View:
    """The view with its systems called ``names`` (three at a time, in its order)."""
    table, records = view
    mapping = dict(zip(table["system"], names, strict=True))
    table = table.assign(system=list(names), metric=metric)
    records = [
        dataclasses.replace(
            r, metric=metric, reference=mapping[r.reference], system=mapping[r.system]
        )
        for r in records
    ]
    return table, records


def md(view: View, metric: str) -> str:
    return markdown_table(*view, label=metric, better="lower", alpha=0.05)


def tex_of(view: View, metric: str) -> str:
    return latex_table(*view, label=metric, stem=file_stem(metric), better="lower", alpha=0.05)


def name_triples(names: tuple[str, ...]) -> list[tuple[str, ...]]:
    padded = list(names) + list(names[: -len(names) % 3])
    return [tuple(padded[i : i + 3]) for i in range(0, len(padded), 3)]


@pytest.mark.parametrize("names", name_triples(HOSTILE))
@pytest.mark.parametrize("unsafe", [False, True])
def test_markdown_table_parses_back_to_exactly_its_cells(
    kreutzer_table: pd.DataFrame, names: tuple[str, ...], unsafe: bool
) -> None:
    """Every row has the header's number of cells, the system cells are the names exactly,
    the header the titles, and no HTML comes through (with raw HTML allowed or not)."""
    view = renamed(kreutzer_table, names)
    text = md(view, "TER")
    parsed = gfm(text, unsafe=unsafe)
    titles = [" ".join(h) for h in header(view[1])]
    assert parsed.rows[0] == titles
    assert [len(r) for r in parsed.rows] == [len(titles)] * (1 + len(names))
    assert [r[1] for r in parsed.rows[1:]] == list(names)
    html = cmarkgfm.github_flavored_markdown_to_html(text, options=Options.CMARK_OPT_UNSAFE)
    assert "<script" not in html and "<img" not in html and "raw HTML" not in html


@pytest.mark.parametrize("metric", HOSTILE)
def test_markdown_caption_and_missing_table_line_parse_back(
    kreutzer_table: pd.DataFrame, metric: str
) -> None:
    view = renamed(kreutzer_table, ("A", "B", "C"), metric)
    (caption,) = gfm(md(view, metric)).paragraphs
    assert caption.startswith(metric + " in points (lower is better)")
    assert "score ~ system + (1|segment)" in caption
    empty = paper_files(view[0].iloc[:0], [], metric, "lower", 0.05)[1]
    assert gfm(empty).paragraphs == [f"No decision table for {metric}: see {_DIAG}."]
    tex_line = paper_files(view[0].iloc[:0], [], metric, "lower", 0.05)[0]
    assert tex_line.count("\n") == 1 and tex_line.startswith("% No decision table")


_DIAG = "results/tables/diagnostics.csv"
# every kind of character, and those that mean something to GFM many times over
ANY_TEXT = st.text(
    alphabet=st.one_of(
        st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
        st.sampled_from(list("\\|`*_[]<>&#;!~$()+-=.:\n\r\t 1aé日م")),
    ),
    max_size=40,
)


@settings(max_examples=400, derandomize=True, deadline=None)
@given(ANY_TEXT)
def test_any_text_round_trips_as_a_cell_and_as_a_paragraph(text: str) -> None:
    row = gfm(f"| h | k |\n|---|---|\n| {escape.markdown_cell(text)} | x |\n")
    assert row.rows == [["h", "k"], [text, "x"]]
    if text:
        assert gfm(escape.markdown_text(text) + "\n").paragraphs == [text]


def test_plain_names_stay_readable() -> None:
    """Escaping touches only what GFM would read as markup."""
    for name in ("transformer-big v2.1", "comet-22", "mBART (50 langs), 3 seeds", "日本語"):
        assert escape.markdown_cell(name) == name
    assert escape.markdown_cell("_v1_ a|b") == "\\_v1\\_ a\\|b"


# -- LaTeX ---------------------------------------------------------------------------------------
def compile_stated(tex: str, tmp_path: Path, latex: LatexTools) -> tuple[str, str]:
    """Compile ``tex`` as its comments say, missing glyphs an error; (log, the PDF's text)."""
    engine, preamble = stated(tex)
    document = "\n".join(
        [
            r"\documentclass{article}",
            *preamble,
            r"\setlength{\textwidth}{6.5in}",
            r"\tracinglostchars=3",  # a glyph no font has is an error, not a log line
            # scalable T1 fonts whose PDF text can be read back (test only)
            r"\usepackage{lmodern}" if engine == "pdflatex" else "",
            r"\begin{document}",
            tex,
            r"\end{document}",
            "",
        ]
    )
    # the first run's font database: a minute or two on a fresh machine (timeout 600 s)
    log = latex.compile(document, tmp_path, engine)
    assert "Missing character" not in log, log[-3000:]
    text = subprocess.run(
        [latex.path("pdftotext"), "-enc", "UTF-8", "table.pdf", "-"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    return log, text


def _plain(text: str) -> str:
    """PDF text as comparable text: presentation forms as letters, no bidi marks, one space."""
    text = unicodedata.normalize("NFKC", text).replace("\u2019", "'")
    text = "".join(c for c in text if unicodedata.category(c) != "Cf")
    return re.sub(r"\s+", " ", text)


def test_latin_names_stay_pdflatex_and_compile(
    kreutzer_table: pd.DataFrame, tmp_path, latex: LatexTools
) -> None:
    """Every character pdflatex is said to set, in the names: pdflatex with the stated
    preamble sets them all."""
    chars = sorted(escape.PDFLATEX_CHARS - {"\n"})
    third = -(-len(chars) // 3)
    names = tuple("".join(chars[i : i + third]) for i in range(0, len(chars), third))
    tex = tex_of(renamed(kreutzer_table, names), "TER")
    assert stated(tex) == ("pdflatex", list(escape.PDFLATEX_PREAMBLE))
    compile_stated(tex, tmp_path, latex)


@pytest.mark.parametrize("names", name_triples(NON_LATIN + HOSTILE))
def test_any_names_compile_with_the_stated_engine(
    kreutzer_table: pd.DataFrame, names: tuple[str, ...], tmp_path, latex: LatexTools
) -> None:
    """Names in any script, and hostile ones: the file states lualatex (or pdflatex where it
    can), which compiles it with every glyph; left-to-right names are in the PDF's text, and
    right-to-left ones too (in logical order: their runs are set right to left)."""
    metric = names[0]
    tex = tex_of(renamed(kreutzer_table, names, metric), metric)
    engine, _ = stated(tex)
    assert engine == escape.latex_engine(tex)
    _, text = compile_stated(tex, tmp_path, latex)
    pdf = _plain(text)
    for name in names:
        words = _plain(name).split()
        if any(unicodedata.bidirectional(c) in ("R", "AL") for c in name):
            # pdftotext reorders what it takes for right-to-left: each word, in some order
            assert all(w in pdf for w in words), (name, pdf)
        else:  # pdftotext may drop a narrow space between a cell's words: compare without
            assert "".join(words) in pdf.replace(" ", ""), (name, pdf)


def test_labels_are_the_metrics_file_stems(kreutzer_table: pd.DataFrame) -> None:
    """comet-22 and comet_22 were both tab:comet-22; a label is the metric's file stem, unique
    as the file names are (and TeX-safe: letters, digits, - _ . only)."""
    labels = {}
    for metric in ("comet-22", "comet_22", "COMET 22", "a/../b", "日本語", "x" * 200):
        tex = tex_of(renamed(kreutzer_table, ("A", "B", "C"), metric), metric)
        (label,) = re.findall(r"\\label\{tab:([^}]*)\}", tex)
        assert label == file_stem(metric) and re.fullmatch(r"[A-Za-z0-9_.-]+", label)
        labels[metric] = label
    assert len(set(labels.values())) == len(labels)


def test_right_to_left_runs_and_their_numbers() -> None:
    """An Arabic run inside a Latin name is set right to left, its digits left to right; text
    without right-to-left characters is untouched."""
    assert escape.latex_text("mBART-عربي-v2") == r"mBART-{\textdir TRT عربي}-v2"
    assert escape.latex_text("نموذج 12 عربي") == (r"{\textdir TRT نموذج {\textdir TLT 12} عربي}")
    assert escape.latex_text("عربي 1.5") == r"{\textdir TRT عربي {\textdir TLT 1.5}}"
    assert escape.latex_text("עברית x") == r"{\textdir TRT עברית} x"
    assert escape.latex_text("a_b 95 % x\ny") == r"a\_b 95~\% x y"
    assert escape.latex_engine(r"caf\'e café") == "pdflatex"
    assert escape.latex_engine("日本") == "lualatex"
