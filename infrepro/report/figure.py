"""A figure of the report: inline SVG markup and its caption."""

from __future__ import annotations

from dataclasses import dataclass

from markupsafe import Markup


@dataclass(frozen=True)
class Figure:
    """An inline SVG (trusted: produced by matplotlib, text drawn as paths) with a caption."""

    svg: Markup
    caption: str = ""
    key: str = ""


def make_figure(svg: str, caption: str = "", key: str = "") -> Figure:
    return Figure(Markup(svg), caption, key)
