"""Tables as plain data for the templates: formatted cells plus the value each column sorts by."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import pandas as pd

from infrepro.report.formatting import sort_value

Formatter = Callable[[object], str]
# a table shows at most this many rows in the page (its CSV, linked under it, has them all): at
# 30 systems the per-pair tables run to thousands of rows, megabytes of markup nobody reads
MOST_ROWS = 100


@dataclass(frozen=True)
class Cell:
    """One table cell: its text, the number it sorts by (None: by text), an optional class."""

    text: str
    sort: float | None = None
    css: str = ""
    title: str = ""


@dataclass(frozen=True)
class Column:
    """How one column is shown: the source column, header, formatter and sort column."""

    key: str
    label: str
    fmt: Formatter = str
    sort_key: str | None = None
    numeric: bool = True
    title: str = ""
    css: Callable[[pd.Series], str] | None = None
    cls: str = ""  # a class for the whole column: "code" (formulas) or "wrap" (long text)


@dataclass
class Table:
    """A sortable HTML table and the CSV it comes from."""

    headers: list[Column]
    rows: list[list[Cell]]
    csv: str = ""
    caption: str = ""
    groups: list[tuple[str, int]] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.rows

    @property
    def shown(self) -> list[list[Cell]]:
        """The rows the page shows: the first MOST_ROWS."""
        return self.rows[:MOST_ROWS]


def text(value: object) -> str:
    """A text cell's content ('' for missing values)."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    return str(value)


def frame_table(
    frame: pd.DataFrame, columns: Sequence[Column], *, csv: str = "", caption: str = ""
) -> Table:
    """Format the rows of ``frame`` (already filtered and ordered) as a table."""
    rows: list[list[Cell]] = []
    for _, record in frame.iterrows():
        cells = []
        for column in columns:
            value = record.get(column.key)
            shown = column.fmt(value)
            sort = sort_value(record.get(column.sort_key or column.key)) if column.numeric else None
            css = column.css(record) if column.css is not None else ""
            cells.append(Cell(shown, sort, css))
        rows.append(cells)
    return Table(list(columns), rows, csv=csv, caption=caption)


def rows_table(
    headers: Sequence[Column], rows: Iterable[Sequence[Cell]], *, csv: str = "", caption: str = ""
) -> Table:
    """A table from cells built by hand (for tables that pivot several CSV rows into one)."""
    return Table(list(headers), [list(r) for r in rows], csv=csv, caption=caption)
