"""The test set: one row per segment with its id, optional source, and one or more references."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from infrepro.core.vocabulary import REFERENCE, SEGMENT, SOURCE
from infrepro.io.errors import InputError
from infrepro.io.tables import (
    LINE_COLUMN,
    check_lookalike_values,
    check_nonempty,
    check_unique,
    read_table,
    require_columns,
    require_text,
)

_EXTRA_REFERENCE = re.compile(r"^reference_(\d+)$")


def reference_columns(columns: list[str] | pd.Index) -> list[str]:
    """``reference`` followed by ``reference_2``, ``reference_3``, ... in numeric order."""
    extra = sorted((int(m.group(1)), c) for c in columns if (m := _EXTRA_REFERENCE.match(str(c))))
    return [REFERENCE] + [c for _, c in extra]


def read_testset(path: str | Path) -> pd.DataFrame:
    """Read and validate a test set (TSV or JSONL); text columns become ``str``.

    The result keeps the file's row order, which is the order hypotheses files follow.
    """
    frame = read_table(path)
    require_columns(frame, path, [SEGMENT, REFERENCE])
    require_text(frame, path, SEGMENT)
    check_unique(frame, path, SEGMENT)
    check_lookalike_values(frame, path, SEGMENT, SEGMENT, formulas=False)  # in no table
    text_columns = reference_columns(frame.columns) + ([SOURCE] if SOURCE in frame else [])
    for column in text_columns:
        _check_text(frame, path, column)
    for column in reference_columns(frame.columns):
        check_nonempty(frame, path, column)
    return frame.drop(columns=[LINE_COLUMN]).reset_index(drop=True)


def _check_text(frame: pd.DataFrame, path: str | Path, column: str) -> None:
    for value, line in zip(frame[column], frame[LINE_COLUMN], strict=True):
        if not isinstance(value, str):
            raise InputError(
                path, f"expected text, found {type(value).__name__}", line=int(line), column=column
            )


def property_text(testset: pd.DataFrame) -> tuple[pd.Series, str]:
    """The text that data properties describe: the source if present, else the first reference."""
    if SOURCE in testset.columns:
        return testset[SOURCE], SOURCE
    return testset[REFERENCE], REFERENCE
