"""End-to-end, in headless Chromium (issue 42, item 2 and acceptance 3, first part): a name that
holds U+202E RIGHT-TO-LEFT OVERRIDE reversed the report's sentences, digits included ("+4.91
[−1.22, 11.04]" drawn "[40.11 ,22.1−] 19.4+").

The workflow refuses bidirectional controls in names up front (tests/unit/io/
test_name_characters.py); the page isolates besides every name that can move the text around
it (``infrepro.report.bidi``). Here a small scores-mode experiment with right-to-left names
(Arabic, Hebrew) runs through the workflow, and its tables, with three systems renamed to hold
U+202E, U+200F and an embedding never closed (U+202B), are rendered again by the report's
renderer. In Chromium, every digit of the page's text outside the names is laid out in reading
order (each digit's box from a DOM Range: on one line left to right, a later line lower), and
no name's text lies outside a ``<bdi>``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from test_report_browser import Browser
from workflow_helpers import many_systems_experiment, run_snakemake

from infrepro.report import ReportSettings, render_report, table_paths

pytestmark = pytest.mark.e2e
RIGHT_TO_LEFT = ("نموذج عربي", "מערכת")  # names the workflow takes as they are
HOSTILE = {  # placeholder in the workflow's run -> the name the tables are rendered with
    "SYSRLO": "comp\u202e",  # RIGHT-TO-LEFT OVERRIDE, never closed
    "SYSRLM": "comp\u200f",  # RIGHT-TO-LEFT MARK
    "SYSEMB": "emb\u202b",  # RIGHT-TO-LEFT EMBEDDING, never closed
}

# [text of each element whose digits, outside the names, are not in reading order]
DIGITS_OUT_OF_ORDER = """(() => {
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  const bad = [];
  const blocks = document.querySelectorAll('p, li, td, th, h1, h2, h3, h4, figcaption, summary');
  for (const block of blocks) {
    const walker = document.createTreeWalker(block, NodeFilter.SHOW_TEXT);
    const boxes = [];
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (node.parentElement.closest('bdi, svg, pre, script, style')) continue;
      const text = node.textContent;
      for (let i = 0; i < text.length; i++) {
        if (text[i] < '0' || text[i] > '9') continue;
        const range = document.createRange();
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const box = range.getBoundingClientRect();
        if (box.width > 0) boxes.push(box);
      }
    }
    for (let k = 1; k < boxes.length; k++) {
      const a = boxes[k - 1], b = boxes[k];
      const sameLine = Math.abs(b.top - a.top) < a.height / 2;
      if (sameLine ? b.left < a.right - 0.5 : b.top < a.top) {
        bad.push(block.textContent.trim().slice(0, 160));
        break;
      }
    }
  }
  return bad;
})()"""

# [text outside any <bdi> that holds a right-to-left letter or a bidirectional control]
NAMES_NOT_ISOLATED = r"""(() => {
  const movers = /[\u0590-\u08ff\u200e\u200f\u202a-\u202e\u2066-\u2069\ufb1d-\ufdff\ufe70-\ufeff]/;
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const bad = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node.parentElement.closest('bdi, svg, script, style')) continue;
    if (movers.test(node.textContent)) bad.push(node.textContent.slice(0, 160));
  }
  return bad;
})()"""


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The workflow's results for the base, the two right-to-left names and the placeholders."""
    root = tmp_path_factory.mktemp("bidi") / "run"
    runs = {"base": 3, **dict.fromkeys(RIGHT_TO_LEFT, 3), **dict.fromkeys(HOSTILE, 2)}
    config = many_systems_experiment(root, runs, segments=30)
    result = run_snakemake(root, configfile=config)
    assert result.returncode == 0, result.stderr[-4000:]
    return root / "results"


@pytest.fixture(scope="module")
def hostile_page(run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run's tables with the placeholders renamed to hold bidirectional controls, rendered
    by the report's renderer."""
    folder = tmp_path_factory.mktemp("hostile")
    for table in (run / "tables").glob("*.csv"):
        text = table.read_text(encoding="utf-8")
        for placeholder, name in HOSTILE.items():
            text = text.replace(placeholder, name)
        (folder / table.name).write_text(text, encoding="utf-8")
    systems = ["base", *RIGHT_TO_LEFT, *HOSTILE.values()]
    settings = ReportSettings(
        name="bidi",
        baseline="base",
        systems=sorted(systems),
        metrics=["score"],
        better={"score": "higher"},
        facets=["seed"],
        date="not set",
    )
    page = folder / "report.html"
    page.write_text(render_report(table_paths(folder), settings), encoding="utf-8")
    return page


@pytest.fixture(scope="module")
def browser(chromium_executable: str) -> Iterator[Browser]:
    with Browser(chromium_executable, timeout=180) as opened:
        yield opened


@pytest.mark.parametrize("which", ["workflow", "hostile"])
def test_a_right_to_left_name_leaves_every_sentences_digits_in_order(
    which: str, run: Path, hostile_page: Path, browser: Browser
) -> None:
    page = run / "report.html" if which == "workflow" else hostile_page
    browser.events.clear()  # the last page's load event is no sign of this one's
    browser.open(page.as_uri(), width=1280, height=900)
    sentences = browser.evaluate(
        "Array.from(document.querySelectorAll('ul.sentences li')).map(li => li.textContent)"
    )
    names = RIGHT_TO_LEFT + (tuple(HOSTILE.values()) if which == "hostile" else ())
    assert all(any(name in s for s in sentences) for name in names), sentences
    assert browser.evaluate(DIGITS_OUT_OF_ORDER) == []
    assert browser.evaluate(NAMES_NOT_ISOLATED) == []
