"""Readers for the tab-separated and JSON-lines tables users write by hand.

Every cell is read as a string so that ids like ``007`` or ``1e-4`` keep their spelling; each row
remembers its line number for error messages.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd

from infrepro.io.errors import InputError, plural
from infrepro.io.names import check_names
from infrepro.io.text import read_lines

LINE_COLUMN = "_line"
# field separators a hand-written table may use instead of the one it is read with
SEPARATORS = {"\t": "tab", ",": "comma", ";": "';'", "|": "'|'"}


def read_tsv(path: str | Path) -> pd.DataFrame:
    """Read a TSV with a header into string columns plus a ``_line`` column (1-based file line)."""
    lines = read_lines(path)
    if not lines:
        raise InputError(path, "file is empty; expected a header line")
    header = lines[0].split("\t")
    _check_header(path, header)
    rows: list[list[str]] = []
    line_numbers: list[int] = []
    for number, line in enumerate(lines[1:], start=2):
        fields = line.split("\t")
        if len(fields) != len(header):
            raise InputError(
                path,
                f"expected {len(header)} tab-separated fields as in the header, found "
                f"{len(fields)} (a tab or newline inside a text field? use JSON lines for such "
                "text)",
                line=number,
            )
        rows.append(fields)
        line_numbers.append(number)
    frame = pd.DataFrame(rows, columns=header, dtype=object)
    frame[LINE_COLUMN] = line_numbers
    return frame


def read_jsonl(path: str | Path) -> pd.DataFrame:
    """Read JSON lines (one object per line) into a frame with a ``_line`` column."""
    records: list[dict[str, object]] = []
    line_numbers: list[int] = []
    for number, line in enumerate(read_lines(path), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            raise InputError(path, f"invalid JSON: {err.msg}", line=number) from None
        if not isinstance(record, dict):
            raise InputError(path, "each line must be a JSON object", line=number)
        records.append(record)
        line_numbers.append(number)
    if not records:
        raise InputError(path, "file holds no JSON objects")
    frame = pd.DataFrame.from_records(records).astype(object)
    check_names([str(c) for c in frame.columns], path, "key", formulas=False)
    frame[LINE_COLUMN] = line_numbers
    return frame


def read_table(path: str | Path) -> pd.DataFrame:
    """Read a ``.jsonl`` file as JSON lines and anything else as TSV."""
    if str(path).endswith((".jsonl", ".json")):
        return read_jsonl(path)
    return read_tsv(path)


def _check_header(path: str | Path, header: list[str]) -> None:
    seen: set[str] = set()
    for position, name in enumerate(header, start=1):
        if not name.strip():
            raise InputError(path, f"header field {position} is empty", line=1)
        if name in seen:
            raise InputError(path, f"column '{name}' appears twice in the header", line=1)
        seen.add(name)
    check_names(header, path, "column", lines=[1] * len(header), formulas=False)


def require_columns(frame: pd.DataFrame, path: str | Path, columns: list[str]) -> None:
    """Raise naming the first required column that the table lacks (and the separator the
    file seems to use, when its header holds the column joined to others by another one)."""
    for column in columns:
        if column not in frame.columns:
            header = [str(c) for c in frame.columns if c != LINE_COLUMN]
            hint = separator_hint(header, "\t", "tab-separated (TSV) or JSON lines", column)
            raise InputError(
                path, f"required column '{column}' is missing (found: {', '.join(header)}){hint}"
            )


def separator_hint(
    header: list[str], separator: str, wanted: str, missing: str | None = None
) -> str:
    """``; the file looks ';'-separated ...`` when a field of the ``header``, read with
    ``separator``, holds names joined by another separator (the ``missing`` column among them,
    when given); else empty. ``wanted`` says how such a file must be written."""
    for other, word in SEPARATORS.items():
        if other == separator:
            continue
        for name in header:
            parts = [part.strip() for part in name.split(other)]
            if len(parts) > 1 and (missing is None or missing in parts):
                return (
                    f"; the file looks {word}-separated (its header is read as "
                    f"{plural(len(header), 'column')}), but it is read as "
                    f"{SEPARATORS[separator]}-separated: write it {wanted}"
                )
    return ""


def check_unique(frame: pd.DataFrame, path: str | Path, column: str) -> None:
    """Raise naming both lines of the first duplicated value in ``column``."""
    first_line: dict[str, int] = {}
    for value, line in zip(frame[column], frame[LINE_COLUMN], strict=True):
        key = str(value)
        if key in first_line:
            raise InputError(
                path,
                f"duplicate {column} '{key}' (first seen on line {first_line[key]})",
                line=int(line),
                column=column,
            )
        first_line[key] = int(line)


def check_nonempty(frame: pd.DataFrame, path: str | Path, column: str) -> None:
    """Raise at the first row whose ``column`` is missing or blank."""
    for value, line in zip(frame[column], frame[LINE_COLUMN], strict=True):
        if value is None or (isinstance(value, float) and pd.isna(value)) or not str(value).strip():
            raise InputError(path, "value is empty", line=int(line), column=column)


def require_text(frame: pd.DataFrame, path: str | Path, column: str) -> None:
    """``check_nonempty``, then ``column``'s values as text in place (an id the reader took for a
    number, ``7``, is ``"7"``): the id and name columns every row must fill."""
    check_nonempty(frame, path, column)
    frame[column] = frame[column].map(str)


def check_lookalike_values(
    frame: pd.DataFrame, path: str | Path, column: str, what: str, *, formulas: bool = True
) -> None:
    """Refuse two spellings in ``column`` that only look alike, and values whose characters
    mislead (infrepro.io.names: ``formulas``, those a spreadsheet would run), naming their
    lines; empty cells are left out."""
    pairs = [
        (str(v), int(line))
        for v, line in zip(frame[column], frame[LINE_COLUMN], strict=True)
        if v is not None and not (isinstance(v, float) and math.isnan(v))
    ]
    check_names(
        [v for v, _ in pairs],
        path,
        what,
        lines=[line for _, line in pairs],
        column=column,
        formulas=formulas,
    )
