"""Inline SVG figures: deterministic across processes, self-contained, no fonts or network."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from infrepro.plots import PlotText, clean_svg, dstudy_curve, numeric_interaction, system_style
from infrepro.plots.svg import share_glyphs


def interaction(key: str = "k") -> str:
    x = np.linspace(0, 10, 25)
    lines = pd.concat(
        [
            pd.DataFrame(
                {"group": g, "x": x, "estimate": x + i, "lower": x + i - 1, "upper": x + i + 1}
            )
            for i, g in enumerate(["base", "comp"])
        ]
    )
    points = pd.DataFrame(
        {
            "group": ["base", "comp"],
            "x": [2.0, 5.0],
            "estimate": [2.0, 6.0],
            "lower": [1.0, 5.0],
            "upper": [3.0, 7.0],
        }
    )
    styles = {"base": system_style(0), "comp": system_style(1)}
    return numeric_interaction(
        lines, points, styles, PlotText("length", "TER, points", "TER x length", key)
    )


def test_svg_is_inline_ready_and_self_contained() -> None:
    svg = interaction("cond-ter-length")
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
    assert "<?xml" not in svg and "<!DOCTYPE" not in svg and "<metadata" not in svg
    assert "<text" not in svg  # text drawn as paths: no font needed, none fetched
    assert "font-family" not in svg and "@font-face" not in svg
    urls = re.findall(r"https?://[^\"'\s)]+", svg)
    assert set(urls) <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}
    assert 'role="img"' in svg and 'aria-label="TER x length"' in svg
    ids = re.findall(r'\sid="([^"]+)"', svg)
    assert ids and len(ids) == len(set(ids))
    assert all(i.startswith(("f-cond-ter-length-", "g-")) for i in ids)
    references = set(re.findall(r'(?:href="#|url\(#)([^")]+)', svg))
    assert references and references <= set(ids)


def test_two_figures_have_distinct_ids_except_shared_glyphs() -> None:
    first, second = interaction("a"), interaction("b")
    own = {i for i in re.findall(r'\sid="([^"]+)"', first) if not i.startswith("g-")}
    other = {i for i in re.findall(r'\sid="([^"]+)"', second) if not i.startswith("g-")}
    assert own and other and not own & other


def test_shared_glyphs_are_defined_once_and_resolve() -> None:
    curves = pd.DataFrame(
        {"system": ["base"] * 3, "n_per_facet": [1, 2, 3], "phi": [0.6, 0.75, 0.82]}
    )
    page = (
        "<html><body><main>"
        + interaction("a")
        + dstudy_curve(curves, {"base": system_style(0)}, title="D-study", key="d")
        + "</main></body></html>"
    )
    shared = share_glyphs(page)
    ids = re.findall(r'\sid="([^"]+)"', shared)
    assert len(ids) == len(set(ids))
    glyphs = [i for i in ids if i.startswith("g-")]
    assert glyphs
    sheet = shared.split("<main>")[0]
    assert all(f'id="{g}"' in sheet for g in glyphs)
    references = set(re.findall(r'(?:href="#|url\(#)([^")]+)', shared))
    assert references <= set(ids)
    assert len(shared) < len(page)


def test_clean_svg_keeps_scales_and_rounds_coordinates() -> None:
    raw = (
        '<?xml version="1.0"?>\n<svg width="10pt" height="5pt" viewBox="0 0 10 5">\n'
        ' <defs>\n  <path id="DejaVuSans-31" d="M 1.123456 2.5 \nL 3 4 \nz\n" '
        'transform="scale(0.015625)"/>\n </defs>\n'
        ' <g id="text_1"><!-- 1 --><use xlink:href="#DejaVuSans-31" x="12.345678"/></g>\n</svg>\n'
    )
    svg = clean_svg(raw, "k")
    assert 'transform="scale(0.015625)"' in svg
    assert 'd="M 1.12 2.5 L 3 4 z "' in svg or 'd="M 1.12 2.5 L 3 4 z"' in svg
    assert 'x="12.35"' in svg
    assert 'id="g-DejaVuSans-31"' in svg and 'href="#g-DejaVuSans-31"' in svg
    assert "text_1" not in svg and "<!--" not in svg
