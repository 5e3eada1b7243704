"""The page stays small at many systems: QQ plots of many models overlay them in one image per
analysis, long tables show their first rows and link the CSV (issue 20, item 8)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
from jinja2 import Environment, FileSystemLoader

from infrepro.plots import qq_panels
from infrepro.report.assets import TEMPLATE_DIR
from infrepro.report.htmltable import MOST_ROWS, Cell, Column, rows_table


def qq_frame(subsets: int, points: int = 400) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    frames = []
    for s in range(subsets):
        theoretical = np.sort(rng.normal(size=points))
        sample = theoretical * rng.uniform(0.8, 1.2) + rng.normal(0, 0.05, points)
        frames.append(
            pd.DataFrame({"subset": f"A vs S{s:02d}", "theoretical": theoretical, "sample": sample})
        )
    return pd.concat(frames, ignore_index=True)


def test_overlaid_qq_lines_are_one_image_and_deterministic() -> None:
    many = qq_frame(60)
    svg = qq_panels([("60 x run-aware", many)], title="TER: residual QQ plots", key="qq-ter")
    again = qq_panels([("60 x run-aware", many)], title="TER: residual QQ plots", key="qq-ter")
    assert svg == again
    assert svg.count("<image") == 1  # 60 lines of 400 points: one raster, not 24,000 vertices
    assert len(svg) < 60_000
    one = qq_panels([("one model", qq_frame(1))], title="t", key="qq-one")
    assert "<image" not in one  # a single model's line stays a vector path


def test_long_tables_show_their_first_rows_and_link_the_csv() -> None:
    env = Environment(loader=FileSystemLoader(str(TEMPLATE_DIR)), autoescape=True)
    macro = env.get_template("macros.html.j2").module.table
    headers = [Column("n", "n")]
    long = rows_table(
        headers, [[Cell(str(i), float(i))] for i in range(MOST_ROWS + 50)], csv="tables/tests.csv"
    )
    html = str(macro(long))
    assert html.count("<tr>") == MOST_ROWS + 1  # the header row and the first MOST_ROWS rows
    assert f"The first {MOST_ROWS} of {MOST_ROWS + 50} rows; all in" in html
    assert re.search(r'href="tables/tests.csv"', html)
    short = rows_table(headers, [[Cell("1", 1.0)]], csv="tables/tests.csv")
    assert "Source: " in str(macro(short)) and "The first" not in str(macro(short))


def test_per_system_rows_split_into_the_top_systems_and_the_rest() -> None:
    """Beyond MOST_LINES systems a per-system table shows the top systems' rows (a pair: both
    systems top; "all systems" always) and the others one click away; no row is lost."""
    from infrepro.report.sections.properties import split_rows

    top = {"S00", "S03"}
    systems = pd.DataFrame({"system": ["S00", "S01", "S03", "S04"], "v": [1, 2, 3, 4]})
    shown, rest = split_rows(systems, top)
    assert list(shown["system"]) == ["S00", "S03"] and list(rest["system"]) == ["S01", "S04"]
    pairs = pd.DataFrame({"subset": ["all systems", "S00 vs S01", "S00 vs S03", "S01 vs S03"]})
    shown, rest = split_rows(pairs, top, column="subset")
    assert list(shown["subset"]) == ["all systems", "S00 vs S03"]
    assert list(rest["subset"]) == ["S00 vs S01", "S01 vs S03"]
    everything, none = split_rows(systems, None)  # few systems: every row shown
    assert len(everything) == 4 and none.empty


def test_a_panel_draws_one_line_per_fit() -> None:
    """Two fits in one panel are two lines, not one zigzag between them."""
    two = qq_frame(2).assign(subset="A vs B", model=lambda f: np.repeat(["h1", "h0"], 400))
    svg = qq_panels([("two fits", two)], title="t", key="qq-two")
    one = qq_panels([("one fit", qq_frame(1))], title="t", key="qq-two")
    line = re.compile(r"stroke: ?#0072b2", re.IGNORECASE)
    assert "<image" not in svg  # a few fits stay vector paths
    assert len(line.findall(svg)) == 2 * len(line.findall(one))  # a line a fit, no zigzag


def test_a_facet_with_many_levels_shows_its_pairs_with_the_reference_level() -> None:
    """20 seeds are 190 pairs a bin: the page shows the 19 with the reference level (the first
    in sorted order, as the analysis takes it) and says where the others are."""
    from infrepro.report.sections.metaparams import MOST_PAIRED_LEVELS, _reference_pairs

    seeds = [str(s) for s in range(1, 21)]
    pairs = [(a, b) for i, a in enumerate(seeds) for b in seeds[i + 1 :]]
    contrasts = pd.DataFrame(
        {"bin": "low", "level1": [a for a, _ in pairs], "level2": [b for _, b in pairs]}
    )
    shown, note = _reference_pairs(contrasts, "seed")
    assert len(contrasts) == 190 and len(shown) == 19
    assert all("1" in (a, b) for a, b in zip(shown["level1"], shown["level2"], strict=True))
    assert "reference level 1" in note and "190 pairs" in note and "contrasts.csv" in note
    few = contrasts[contrasts["level1"].isin(seeds[:MOST_PAIRED_LEVELS])]
    few = few[few["level2"].isin(seeds[:MOST_PAIRED_LEVELS])]
    kept, none = _reference_pairs(few, "seed")  # five levels: every pair
    assert len(few) == 10 and kept is few and none == ""
