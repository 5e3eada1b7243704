"""End-to-end: the report holds its layout with 30 systems, 200-character names, a facet of 20
levels with a 200-character name (scores mode, 40 segments, one or two runs per system),
measured in headless Chromium at 1400 px: the decision tables, groups diagrams and forest plots
come before the fifth screen, the groups diagram right after its table with every system
labelled, no text label of a figure overlaps another, no label lies outside its SVG (legends
included), nothing is wider than the page, and the copy button puts the LaTeX on the
clipboard. Text in the SVGs is drawn as glyph groups (``<g transform="... scale(...)">``)."""

from __future__ import annotations

import re
import struct
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from test_report_browser import Browser
from workflow_helpers import run_snakemake

pytestmark = pytest.mark.e2e
SYSTEMS, SEGMENTS, LEVELS = 30, 40, 20
WIDTH, SCREEN = 1400, 900
TAIL = "-".join(["a-rather-long-system-name-with-many-hyphenated-parts"] * 5)
# a 200-character facet name: it titles legends and axes of the meta-parameter figures
FACET = ("checkpoint " + " ".join(["of the meta-parameter sweep"] * 8))[:200]


def write_experiment(root: Path) -> list[str]:
    """Scores of 30 systems named ``Snn <long tail>`` (200 characters; one of them a single
    word, which prose must break), 1-2 runs each, a facet
    with a 200-character name whose 20 levels the runs cycle through, a numeric property."""
    rng = np.random.default_rng(11)
    names = [(f"S{i:02d} " + TAIL)[:200] for i in range(SYSTEMS)]
    names[2] = "S02_" + "x" * 196  # one unbreakable 200-character word, with two runs
    length = rng.integers(5, 60, SEGMENTS)
    difficulty = rng.normal(0, 8, SEGMENTS)
    rows, run = [], 0
    for i, name in enumerate(names):
        effect = rng.normal(0, 3)
        for replication in range(2 if i % 2 == 0 else 1):
            shift = rng.normal(0, 1)
            scores = 50 + effect + shift + difficulty + rng.normal(0, 5, SEGMENTS)
            for segment in range(SEGMENTS):
                rows.append(
                    {
                        "segment": f"seg{segment}",
                        "system": name,
                        "replication": f"r{replication}",
                        FACET: f"checkpoint-{run % LEVELS:02d}",
                        "length": int(length[segment]),
                        "score": float(scores[segment]),
                    }
                )
            run += 1
    root.mkdir(parents=True)
    pd.DataFrame(rows).to_csv(root / "scores.csv", index=False)
    config = {
        "experiment": "30 systems with long names",
        "scores": "scores.csv",
        "columns": {
            "segment": "segment",
            "system": "system",
            "run": ["system", "replication"],
            "metrics": ["score"],
            "facets": [FACET],
            "properties": ["length"],
        },
        "better": {"score": "higher"},
        "scale": {"score": "points"},
        "baseline": names[0],
    }
    (root / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    return names


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("thirty") / "run"
    write_experiment(root)
    result = run_snakemake(root)
    assert result.returncode == 0, result.stderr[-4000:]
    return root / "results" / "report.html"


@pytest.fixture(scope="module")
def page(chromium_executable: str, report: Path) -> Iterator[Browser]:
    with Browser(chromium_executable, timeout=180) as browser:
        browser.open(report.as_uri(), width=WIDTH, height=SCREEN)
        yield browser


def test_decision_tables_and_forest_plots_come_first(page: Browser, report: Path) -> None:
    bottom = page.evaluate(
        "Math.max(...Array.from(document.querySelectorAll("
        "'#decision table.decision-table, #decision svg.plot')).map("
        "e => e.getBoundingClientRect().bottom + window.scrollY))"
    )
    count = page.evaluate("document.querySelectorAll('#decision svg.plot').length")
    assert count == 2 and 0 < bottom <= 5 * SCREEN, bottom  # groups diagram, forest plot
    target = report.parent / "report-top.png"
    page.screenshot(target, {"x": 0, "y": 0, "width": WIDTH, "height": 5 * SCREEN})
    assert struct.unpack(">II", target.read_bytes()[16:24]) == (WIDTH, 5 * SCREEN)


def test_groups_diagram_follows_the_table_with_every_system_labelled(page: Browser) -> None:
    """The groups diagram (§4c.9) comes right after its decision table and labels all 30
    systems (the overlap and clipping checks below cover it like every figure)."""
    found = page.evaluate(
        """(() => {
      const table = document.querySelector('#decision table.decision-table');
      const figure = document.querySelector('#decision figure[id^="groups-"]');
      if (!table || !figure) return null;
      const texts = figure.querySelectorAll('svg.plot g[transform*="scale("]');
      const after = table.compareDocumentPosition(figure) & Node.DOCUMENT_POSITION_FOLLOWING;
      const forest = document.querySelector('#decision figure[id^="forest-"]');
      const before = forest.compareDocumentPosition(figure) & Node.DOCUMENT_POSITION_PRECEDING;
      return [Array.from(texts).filter(g => g.querySelector('use')).length, !!after, !!before,
              figure.querySelector('figcaption').textContent];
    })()"""
    )
    assert found is not None
    texts, after, before, caption = found
    assert texts >= SYSTEMS and after and before, found
    assert f"over all {SYSTEMS * (SYSTEMS - 1) // 2} pairs" in caption


def test_per_pair_cards_are_collapsed_and_runs_counted(report: Path) -> None:
    """With 29 competitors the headline and the Next-experiment cards show the 5 ranked first
    and collapse the rest, one click away (docs/method.md §4c.11)."""
    html = report.read_text(encoding="utf-8")
    for name in ("headline", "next"):
        part = html.split(f'<section id="{name}">', 1)[1].split("</section>", 1)[0]
        shown, _, collapsed = part.partition('<details class="more">')
        assert shown.count('<article class="card') == 5, name
        assert collapsed.count('<article class="card') == SYSTEMS - 6, name
    header = html.split('<header class="top"', 1)[1].split("</header>", 1)[0]
    assert "30 systems" in header and "1 run" in header and "1 runs" not in html


def test_next_experiment_fits_two_screens(page: Browser) -> None:
    height = page.evaluate(
        "(() => { document.querySelectorAll('details').forEach(d => { d.open = false; });"
        " return document.querySelector('#next').getBoundingClientRect().height; })()"
    )
    assert 0 < height <= 2 * SCREEN, height


def test_per_system_figures_only_for_the_top_systems(report: Path) -> None:
    """Meta-parameter figures and power curves for the baseline and the 5 systems ranked
    first; the other systems' blocks say so and are collapsed (the page stays small)."""
    html = report.read_text(encoding="utf-8")
    section = html.split('<section id="metaparams">', 1)[1].split("</section>", 1)[0]
    blocks = section.split('<div class="block"')[1:]
    undrawn = [b for b in blocks if "Figures and within-bin contrasts are shown for" in b]
    drawn = [b for b in blocks if b not in undrawn]
    assert undrawn and len(drawn) == 6 and len(blocks) > 6
    assert all("<figure" not in b for b in undrawn)
    assert all("<figure" in b for b in drawn)
    # the undrawn systems' blocks are one click away (issue 31): after the drawn ones, in one
    # <details>, each with its tests
    shown, collapsed = section.split('<details class="more"><summary>The other ', 1)
    assert shown.count('<div class="block"') == 6
    assert collapsed.count('<div class="block"') == len(undrawn)
    assert re.match(r"\d+ systems' meta-parameter tests", collapsed)
    planning = html.split('<section id="next">', 1)[1].split("</section>", 1)[0]
    assert "Power curves are drawn for the 5 systems ranked first" in planning
    assert planning.count('id="power-') <= 5


def test_nothing_is_wider_than_the_page(page: Browser) -> None:
    page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
    wide = page.evaluate(
        """(() => {
      const W = document.documentElement.clientWidth;
      const scrolls = e => { for (let p = e.parentElement; p; p = p.parentElement) {
        const s = getComputedStyle(p).overflowX; if (s === 'auto' || s === 'scroll') return true; }
        return false; };
      return Array.from(document.querySelectorAll('body *')).filter(
        e => e.getBoundingClientRect().right > W + 1 && !scrolls(e)).map(
        e => e.tagName + '.' + e.className).slice(0, 10);
    })()"""
    )
    assert wide == []
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    # a 200-character name wraps in its cell (30-60 characters a line), never a letter a line
    heights = page.evaluate(
        "Array.from(document.querySelectorAll('#decision table.decision-table tbody tr')).map("
        "r => r.getBoundingClientRect().height)"
    )
    assert len(heights) == SYSTEMS and max(heights) < 200, max(heights)


def label_problems(page: Browser) -> list[str]:
    """The figures whose text labels overlap or leave their SVG (tick labels, titles, legend
    entries), every ``details`` opened first."""
    page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
    return page.evaluate(
        """(() => {
      const out = [];
      document.querySelectorAll('svg.plot').forEach((svg, n) => {
        const box = svg.getBoundingClientRect();
        const name = svg.getAttribute('aria-label') || String(n);
        const labels = Array.from(svg.querySelectorAll('g[transform*="scale("]')).filter(
          g => g.querySelector('use')).map(g => g.getBoundingClientRect());
        for (let i = 0; i < labels.length; i++) {
          for (let j = i + 1; j < labels.length; j++) {
            const a = labels[i], b = labels[j];
            const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
            const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
            if (w > 1 && h > 1) out.push('overlap: ' + name);
          }
        }
        labels.forEach(r => {  // tick labels, titles, legend entries: never clipped
          if (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1
              || r.bottom > box.bottom + 1) out.push('outside: ' + name);
        });
      });
      return Array.from(new Set(out));
    })()"""
    )


def test_no_label_overlaps_and_nothing_leaves_its_svg(page: Browser) -> None:
    assert label_problems(page) == []


def test_the_copy_button_puts_the_latex_on_the_clipboard(page: Browser) -> None:
    """A real click (a user gesture) on the first "Copy LaTeX" button: the clipboard then holds
    exactly the LaTeX shown under the table."""
    page.send(
        "Browser.grantPermissions",
        {"permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]},
        session="",
    )
    page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
    x, y, source = page.evaluate(
        """(() => { const b = document.querySelector('button[data-copy]');
      const r = b.getBoundingClientRect();
      window.scrollTo({top: window.scrollY + r.top - 300, behavior: 'instant'});
      const s = b.getBoundingClientRect();
      return [s.x + s.width / 2, s.y + s.height / 2, b.getAttribute('data-copy')]; })()"""
    )
    page.send("Page.bringToFront")
    for kind in ("mousePressed", "mouseReleased"):
        page.send(
            "Input.dispatchMouseEvent",
            {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1},
        )
    latex = page.evaluate(f"document.getElementById({source!r}).textContent")
    copied = page.evaluate(
        "new Promise(done => setTimeout(() => navigator.clipboard.readText().then(done), 300))"
    )
    assert latex.startswith("% Engine:") and "\\begin{table" in latex and copied == latex
    assert page.evaluate("document.querySelector('button[data-copy]').textContent") == "Copied"
