"""End-to-end, in headless Chromium at 1,280 px (issue 30, acceptance 5): long names never widen
the page or push the decision table's columns off-screen. A two-system report whose competitor
is one 200-character word (the verdict badge names it), and a report of four systems with
60-character names: the page's scrollWidth stays at the viewport, and the decision table's p,
verdict and group columns lie inside it without scrolling."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from test_report_browser import Browser
from workflow_helpers import many_systems_experiment, run_snakemake

pytestmark = pytest.mark.e2e
WIDTH, SCREEN = 1280, 900
LONG_WORD = "competitor_" + "x" * 189  # one unbreakable 200-character word
SIXTY = [f"{name}-" + "transformer-big-with-back-translation-and-more" for name in "ABCD"]
SIXTY = [(n + "-" * 60)[:60] for n in SIXTY]


def _report(root: Path, runs: dict[str, int]) -> Path:
    config = many_systems_experiment(root, runs, segments=40)
    result = run_snakemake(root, configfile=config)
    assert result.returncode == 0, result.stderr[-4000:]
    return root / "results" / "report.html"


@pytest.fixture(scope="module", params=["one-word", "sixty"])
def page(
    request, chromium_executable: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Browser]:
    root = tmp_path_factory.mktemp(request.param) / "run"
    runs = {"base": 3, LONG_WORD: 3} if request.param == "one-word" else dict.fromkeys(SIXTY, 3)
    report = _report(root, runs)
    with Browser(chromium_executable, timeout=180) as browser:
        browser.open(report.as_uri(), width=WIDTH, height=SCREEN)
        yield browser


def test_the_page_is_never_wider_than_the_viewport(page: Browser) -> None:
    page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    badge = page.evaluate(
        "Math.max(...Array.from(document.querySelectorAll('.badge')).map("
        "b => b.getBoundingClientRect().right))"
    )
    assert 0 < badge <= WIDTH


def test_the_decision_columns_are_visible_without_scrolling(page: Browser) -> None:
    found = page.evaluate(
        """(() => {
      const table = document.querySelector('#decision table.decision-table');
      const heads = Array.from(table.tHead.rows[0].cells);
      const index = start => heads.findIndex(h => h.textContent.trim().startsWith(start));
      const right = i => Math.max(...Array.from(table.rows).map(
        r => r.cells[i].getBoundingClientRect().right));
      return [index('p'), index('verdict'), index('group')].map(i => i < 0 ? -1 : right(i));
    })()"""
    )
    assert all(0 < right <= WIDTH for right in found), found
