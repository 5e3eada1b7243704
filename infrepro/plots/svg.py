"""Deterministic matplotlib figures rendered to inline SVG strings.

Two renders of the same figure give the same bytes: the SVG hash salt is fixed, the metadata
carries no date or creator, and text is drawn as paths (so no font is needed or fetched). Every
id inside a figure gets a figure-specific prefix, so many SVGs can live in one HTML page, and ids
nothing refers to are dropped.
"""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Iterable, Iterator, Mapping
from html import escape

import matplotlib
from matplotlib.figure import Figure

from infrepro.plots.names import short_name, short_names

STYLE: dict[str, object] = {
    "svg.hashsalt": "infrepro",
    "svg.fonttype": "path",
    "font.family": "DejaVu Sans",
    "font.size": 8,
    "axes.titlesize": 8.5,
    "axes.titleweight": "bold",
    "axes.labelsize": 8,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "legend.fontsize": 7,
    "legend.frameon": False,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.edgecolor": "#555555",
    "axes.linewidth": 0.7,
    "axes.grid": True,
    "grid.color": "#e6e6e6",
    "grid.linewidth": 0.6,
    "axes.axisbelow": True,
    "xtick.color": "#444444",
    "ytick.color": "#444444",
    "lines.linewidth": 1.6,
    "path.simplify": True,
}
_METADATA = {"Date": None, "Creator": None, "Format": None, "Type": None}
_PROLOGUE = re.compile(r"^.*?(?=<svg)", re.DOTALL)
_METADATA_BLOCK = re.compile(r"\s*<metadata>.*?</metadata>", re.DOTALL)
_COMMENT = re.compile(r"\s*<!--.*?-->", re.DOTALL)
_ID = re.compile(r'\sid="([^"]+)"')
_REFERENCE = re.compile(r'(xlink:href="#|href="#|url\(#)([^")]+)')
_SIZE = re.compile(r'<svg([^>]*?) width="([\d.]+)pt" height="([\d.]+)pt"')
_DECIMALS = re.compile(r"(?<![\w.#-])-?\d+\.\d{3,}")
_COORDINATES = re.compile(r'\s(?:d|x|y|x1|x2|y1|y2)="[^"]*"|translate\([^)]*\)')
_NEWLINE = re.compile(r"[ \t]*\n\s*")
LEGEND_HANDLE = 0.45  # inches of a legend column besides its label: handle, gaps
LEGEND_CHAR = 0.055  # inches per character of a legend label at the report's 7 pt
_TAG_GAP = re.compile(r">\s+<")
_GLYPH = re.compile(r'<path id="(g-[^"]+)"[^>]*/>')
_EMPTY_DEFS = re.compile(r"<defs></defs>")
_BODY = re.compile(r"<body[^>]*>")


@contextlib.contextmanager
def figure(
    width: float,
    height: float,
    *,
    left: float = 0.55,
    right: float = 0.15,
    top: float = 0.3,
    bottom: float = 0.45,
    wspace: float | None = None,
    hspace: float | None = None,
) -> Iterator[Figure]:
    """A new figure drawn under the report's fixed style; use with :func:`to_svg`.

    Sizes and margins are in inches. Margins are fixed rather than computed by a layout engine:
    twice as fast, and the plots of one kind line up in the page.
    """
    with matplotlib.rc_context(STYLE):
        fig = Figure(figsize=(width, height))
        fig.subplots_adjust(
            left=left / width,
            right=1 - right / width,
            top=1 - top / height,
            bottom=bottom / height,
            wspace=wspace,
            hspace=hspace,
        )
        yield fig


def legend_rows(entries: int, ncols: int) -> int:
    """How many rows a legend of ``entries`` in ``ncols`` columns takes."""
    return -(-entries // max(1, ncols)) if entries else 0


def legend_columns(labels: Iterable[str], width: float, most: int) -> int:
    """At most ``most`` legend columns, fewer when the (shortened) labels would not fit side by
    side in a figure ``width`` inches wide: a legend never runs past the figure's edges."""
    shown = short_names([str(label) for label in labels])
    per_column = LEGEND_HANDLE + LEGEND_CHAR * max((len(s) for s in shown), default=0)
    columns = max(1, min(most, len(shown)))
    while columns > 1 and columns * per_column > width:
        columns -= 1
    return columns


def lines_figure(
    entries: int, columns: int, *, left: float, right: float = 0.15, titled: bool = False
) -> contextlib.AbstractContextManager[Figure]:
    """A figure 3.5 in wide for lines (curves, interactions) with their legend below the axes:
    ``entries`` labels in ``columns`` columns, a row more for a legend title (``titled``); each
    legend row adds 0.17 in to the height and to the bottom margin."""
    rows = legend_rows(entries, columns) + (1 if titled else 0)
    return figure(3.5, 2.45 + 0.17 * rows, left=left, right=right, bottom=0.5 + 0.17 * rows)


def legend_below(fig: Figure, handles: list, labels: list[str], ncols: int, **kwargs) -> None:
    """A frameless legend centred under the axes, in the figure's bottom margin; each label
    once (its first handle); long labels and a long ``title`` (a facet's name) shortened
    (:func:`~infrepro.plots.names.short_names`). Handles and labels are passed explicitly, so
    a label that starts with ``_`` (a system named ``_v1_``) is shown: matplotlib leaves such
    labels out only when it collects them from the axes (``get_legend_handles_labels``)."""
    title = kwargs.pop("title", None)
    firsts: dict[str, object] = {}
    for label, handle in zip(map(str, labels), handles, strict=True):
        firsts.setdefault(label, handle)
    handles, labels = list(firsts.values()), list(firsts)
    if handles:
        fig.legend(
            handles,
            short_names(labels),
            loc="lower center",
            bbox_to_anchor=(0.5, 0.0),
            ncols=max(1, ncols),
            title=short_name(str(title)) if title else None,
            **kwargs,
        )


def marked_line(ax, x, y, label: str, markersize: float, **style):
    """A line through (x, y) with a dot at each point, above bands and guides (zorder 3)."""
    return ax.plot(x, y, marker="o", markersize=markersize, label=label, zorder=3, **style)[0]


def lines_legend_svg(
    fig: Figure, entries: Mapping[str, object], columns: int, key: str, title: str
) -> str:
    """A line legend of ``entries`` (label -> line) under the figure in ``columns`` columns,
    then the figure as SVG."""
    legend_below(fig, list(entries.values()), list(entries), columns, handlelength=2.6)
    return to_svg(fig, key, title)


def to_svg(fig: Figure, key: str, label: str = "") -> str:
    """The figure as an inline ``<svg>`` element whose ids are prefixed with ``key``.

    Call it inside the :func:`figure` block so that the style (hash salt, font type) applies.
    """
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata=_METADATA)
    return clean_svg(buffer.getvalue(), key, label)


def clean_svg(svg: str, key: str, label: str = "") -> str:
    """Make matplotlib's SVG fit for inlining, deterministically.

    Strips the XML prologue, metadata, comments and indentation; shortens coordinates (paths,
    positions, translations; never scales) to two decimals; prefixes referenced ids (clip paths,
    markers) with the figure's key and glyph ids with ``g-`` (glyphs are identical in every
    figure, see :func:`share_glyphs`); drops ids nothing refers to.
    """
    prefix = "f-" + (re.sub(r"[^A-Za-z0-9_-]+", "-", key).strip("-") or "fig")
    text = _COMMENT.sub("", _METADATA_BLOCK.sub("", _PROLOGUE.sub("", svg, count=1)))
    referenced = {m.group(2) for m in _REFERENCE.finditer(text)}

    def renamed(name: str) -> str:
        # matplotlib names glyphs "<font>-<code>"; its clip paths and markers have no dash
        return f"g-{name}" if "-" in name else f"{prefix}-{name}"

    text = _ID.sub(
        lambda m: f' id="{renamed(m.group(1))}"' if m.group(1) in referenced else "", text
    )
    text = _REFERENCE.sub(lambda m: f"{m.group(1)}{renamed(m.group(2))}", text)
    text = _COORDINATES.sub(lambda m: _DECIMALS.sub(_two_decimals, m.group(0)), text)
    text = _TAG_GAP.sub("><", _NEWLINE.sub(" ", text))
    attributes = f' role="img" aria-label="{escape(label, quote=True)}"' if label else ""
    text = _SIZE.sub(
        lambda m: (
            f'<svg{m.group(1)} width="{m.group(2)}pt" height="{m.group(3)}pt"'
            f' class="plot"{attributes}'
        ),
        text,
        count=1,
    )
    return text.strip() + "\n"


def _two_decimals(match: re.Match[str]) -> str:
    return f"{float(match.group(0)):.2f}".rstrip("0").rstrip(".")


def share_glyphs(html: str) -> str:
    """Move the glyph definitions of every inline SVG into one hidden ``<svg>`` right after
    ``<body>``, once each: a page with dozens of figures then carries each glyph only once."""
    glyphs: dict[str, str] = {}

    def collect(match: re.Match[str]) -> str:
        glyphs.setdefault(match.group(1), match.group(0))
        return ""

    body = _GLYPH.sub(collect, html)
    body = _EMPTY_DEFS.sub("", body)
    if not glyphs:
        return html
    sheet = (
        '<svg class="glyphs" width="0" height="0" aria-hidden="true" focusable="false" '
        'style="position:absolute;width:0;height:0;overflow:hidden" '
        'xmlns="http://www.w3.org/2000/svg"><defs>'
        + "".join(glyphs[name] for name in sorted(glyphs))
        + "</defs></svg>"
    )
    return _BODY.sub(lambda m: m.group(0) + "\n" + sheet, body, count=1)
