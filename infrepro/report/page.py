"""Render the report with Jinja2 into one self-contained HTML page (CSS and JS inline)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from infrepro.plots.cache import finish_figures
from infrepro.plots.svg import share_glyphs
from infrepro.report.assets import ASSETS, TEMPLATE, TEMPLATE_DIR
from infrepro.report.bidi import isolate_names
from infrepro.report.context import build_context
from infrepro.report.inputs import ReportSettings, load_tables


def environment(template_dir: str | Path = TEMPLATE_DIR) -> jinja2.Environment:
    """A strict, autoescaping environment over the report's template folder."""
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(template_dir)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def render(context: Mapping[str, Any], template_dir: str | Path = TEMPLATE_DIR) -> str:
    """The HTML page for a context built by :func:`build_context` (with the figures a render
    through a store deferred drawn in place: ``plots.cache``), every name that could reorder
    the text around it isolated (``bidi``)."""
    folder = Path(template_dir)
    assets = {
        name: Markup((folder / file).read_text(encoding="utf-8")) for name, file in ASSETS.items()
    }
    html = environment(folder).get_template(TEMPLATE).render(**context, assets=assets)
    return isolate_names(share_glyphs(finish_figures(html)), context.get("isolated", ()))


def render_report(
    table_paths: Mapping[str, str | Path],
    settings: ReportSettings,
    template_dir: str | Path = TEMPLATE_DIR,
) -> str:
    """Load the tables, build the context and render the page."""
    return render(build_context(load_tables(table_paths), settings), template_dir)
