"""The tables one job writes and another reads (``results/**.csv``), with their declared types.

Every reader of such a table goes through :func:`read_result_table`, which takes each column's
kind from its declaration (:data:`infrepro.core.vocabulary.TABLE_SPECS`), never from pandas' guess:
text stays text (a system named ``007``, ``NA``, ``None`` or ``1`` keeps its spelling), an
empty numeric cell is NaN, booleans are booleans. Writers conform a table to the same
declaration (:func:`infrepro.analyses.common.tables.conform`) and write it with :func:`write_csv`.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from infrepro.core.vocabulary import BOOL, FLOAT, INT, TABLE_SPECS
from infrepro.io.errors import InputError

TRUE = ("true", "1")


def typed(name: str, frame: pd.DataFrame, path: str | Path = "<table>") -> pd.DataFrame:
    """A table read as text with its declared numeric and boolean columns converted (columns
    not declared, such as ``run_means``' facets, stay text)."""
    out = frame.copy()
    for column in TABLE_SPECS[name].columns:
        if column.name not in out:
            continue
        cells = out[column.name]
        if column.kind in (INT, FLOAT):
            try:
                out[column.name] = pd.to_numeric(cells.replace("", None))
            except (TypeError, ValueError) as err:
                raise InputError(path, f"not a number ({err})", column=column.name) from None
        elif column.kind == BOOL:
            out[column.name] = cells.str.lower().isin(TRUE)
    return out


def read_text_table(path: str | Path) -> pd.DataFrame:
    """A table with every cell as written (text; an empty cell is ''): for passing tables on
    unchanged, as collect_tables does."""
    return pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8")


def read_result_table(name: str, path: str | Path) -> pd.DataFrame:
    """One table as its declaration types it (see the module docstring)."""
    return typed(name, read_text_table(path), path)
