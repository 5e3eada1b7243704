"""The tidy output tables of the analyses (``results/tables/*.csv``) and their columns."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import pandas as pd

from infrepro.core.vocabulary import COLUMN_DEFAULTS, TABLE_SPECS, TABLES


def conform(name: str, frame: pd.DataFrame | None) -> pd.DataFrame:
    """A table with exactly its declared columns, in order (empty if ``frame`` is None); a
    table with experiment-dependent columns (``extra``) as it is."""
    spec = TABLE_SPECS[name]
    columns = None if spec.extra else list(spec.names)
    if frame is None or frame.empty:
        return pd.DataFrame(columns=columns if columns is not None else ["metric"])
    if columns is None:
        return frame.reset_index(drop=True)
    absent = [c for c in columns if c not in frame.columns and c in COLUMN_DEFAULTS]
    frame = frame.assign(**{c: COLUMN_DEFAULTS[c] for c in absent})
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"table {name} lacks columns {missing}")
    return frame[columns].reset_index(drop=True)


def combine(parts: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """Concatenate the per-job parts of one table (skipping empty parts)."""
    frames = [p for p in parts if not p.empty]
    if not frames:
        return next(iter(parts), pd.DataFrame())
    return pd.concat(frames, ignore_index=True)


def joined_parts(paths: Sequence[str | Path]) -> str | None:
    """The CSV parts of one table (as write_csv wrote them) joined as text: the header once,
    then each part's rows in order. These are the bytes that reading the parts as text,
    :func:`combine` and write_csv give, without parsing and writing every cell again (the last
    job before the report waits for it). None when the parts' headers differ (a table with
    experiment-dependent columns: :func:`combine` unions them) or there are no parts."""
    header: str | None = None
    rows: list[str] = []
    for path in paths:
        head, newline, body = Path(path).read_text(encoding="utf-8").partition("\n")
        if not newline or (header is not None and head != header):
            return None
        if body and not body.endswith("\n"):
            return None
        header = head
        rows.append(body)
    return None if header is None else header + "\n" + "".join(rows)


def complete(tables: Mapping[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """Every table name with a conforming frame, empty where an analysis writes nothing."""
    return {name: conform(name, tables.get(name)) for name in TABLES}
