"""Input formats, validation and atomic output.

The public names load from their modules on first use: the workflow's parse (every Snakemake
invocation, one with nothing to do included) reads ``InputError`` and the config checks, and
pandas loads only where a table is read or written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from infrepro.lazy import lazy_getattr

_WHERE = {
    "InputError": "errors",
    "ScoresColumns": "scores",
    "atomic_open": "atomic",
    "atomic_path": "atomic",
    "facet_columns": "runs",
    "property_text": "testset",
    "read_hypotheses": "hypotheses",
    "read_runs_sheet": "runs",
    "read_scores_table": "scores",
    "read_testset": "testset",
    "reference_columns": "testset",
    "write_csv": "atomic",
    "write_parquet": "atomic",
    "write_text": "atomic",
}
__all__ = [
    "InputError",
    "ScoresColumns",
    "atomic_open",
    "atomic_path",
    "facet_columns",
    "property_text",
    "read_hypotheses",
    "read_runs_sheet",
    "read_scores_table",
    "read_testset",
    "reference_columns",
    "write_csv",
    "write_parquet",
    "write_text",
]

if TYPE_CHECKING:  # for type checkers and IDEs: the eager imports
    from infrepro.io.atomic import atomic_open, atomic_path, write_csv, write_parquet, write_text
    from infrepro.io.errors import InputError
    from infrepro.io.hypotheses import read_hypotheses
    from infrepro.io.runs import facet_columns, read_runs_sheet
    from infrepro.io.scores import ScoresColumns, read_scores_table
    from infrepro.io.testset import property_text, read_testset, reference_columns


__getattr__ = lazy_getattr(__name__, _WHERE, globals())
