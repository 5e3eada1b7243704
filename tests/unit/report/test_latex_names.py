"""Every name pastes as itself (issue 42, item 3): ``Γάμμα`` became ``Γάμμ$\\alpha$`` in the
paste-ready LaTeX, a math-italic α. A name's characters go into the ``.tex`` as they are (TeX's
special characters escaped), under the engine its first lines state (lualatex for Greek or CJK,
with its fallback fonts), which sets them in text fonts; a fallback font that is missing is
left out with a warning instead of stopping the compile."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from optional_tools import LatexTools
from test_paper_escape import compile_stated, kreutzer_table, renamed, stated  # noqa: F401

from infrepro.core.vocabulary import file_stem
from infrepro.report import escape
from infrepro.report.paper import latex_table

NAMES = ("Γάμμα", "名前", "Ωmega_1")
MATH_FONT = re.compile(r"math|cmmi|cmsy|cmex", re.IGNORECASE)  # Latin Modern's or CM's math


def _fonts(pdf: Path, latex: LatexTools) -> str:
    pdffonts = Path(latex.path("pdftotext")).with_name("pdffonts")
    return subprocess.run(
        [str(pdffonts), str(pdf)], capture_output=True, text=True, check=True, timeout=60
    ).stdout


def test_a_greek_name_pastes_as_itself(kreutzer_table, tmp_path: Path, latex: LatexTools) -> None:  # noqa: F811
    """The three names as systems and the first as the metric: the ``.tex`` holds their
    characters (no ``$\\alpha$``), states lualatex, and the PDF's text is the names."""
    table = latex_table(
        *renamed(kreutzer_table, NAMES, "Γάμμα"),
        label="Γάμμα",
        stem=file_stem("Γάμμα"),
        better="lower",
        alpha=0.05,
    )
    assert stated(table)[0] == "lualatex"
    assert r"Γάμμα & " in table and "名前 & " in table and r"Ωmega\_1 & " in table
    assert r"\caption{Γάμμα in points" in table
    assert r"Γάμμ$\alpha$" not in table
    _, text = compile_stated(table, tmp_path, latex)
    for name in NAMES:
        assert name in text, text


@pytest.mark.parametrize("name", NAMES)
def test_a_name_is_set_in_text_fonts(name: str, tmp_path: Path, latex: LatexTools) -> None:
    """The name alone, escaped as the tables escape names, under its stated engine: no math
    font in the PDF, and its text is the name."""
    tex = escape.latex_name(name)
    header = escape.latex_header(tex)
    _, text = compile_stated(header + tex + "\n", tmp_path, latex)
    assert name in text, text
    assert not MATH_FONT.search(_fonts(tmp_path / "table.pdf", latex))


def test_a_missing_fallback_font_is_left_out_with_a_warning(
    tmp_path: Path, latex: LatexTools
) -> None:
    """A fallback font the machine lacks (a name no font has, first in the list) stops
    nothing: the compile warns, naming it, and the next fonts set the names."""
    tex = escape.latex_name(" ".join(NAMES))
    missing = "InfreproNoSuchFont"
    preamble = escape.lualatex_preamble(((missing, "mode=node;"), *escape.FALLBACK_FONTS))
    document = "\n".join(
        [
            "% Engine: lualatex",
            "% Preamble:",
            *(f"%   {line}" for line in preamble),
            tex,
            "",
        ]
    )
    log, text = compile_stated(document, tmp_path, latex)
    assert f"Font {missing} not found" in " ".join(log.split()), log[-3000:]
    assert all(name in text for name in NAMES), text
