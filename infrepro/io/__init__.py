"""Input formats and their validation.

The public names load from their modules on first use: the workflow's parse (every Snakemake
invocation, one with nothing to do included) reads ``InputError`` and the config checks, and
pandas loads only where a table is read or written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from infrepro.plumbing.lazy import lazy_getattr

_WHERE = {
    "InputError": "errors",
    "ScoresColumns": "scores",
    "facet_columns": "runs",
    "property_text": "testset",
    "read_hypotheses": "hypotheses",
    "read_runs_sheet": "runs",
    "read_scores_table": "scores",
    "read_testset": "testset",
    "reference_columns": "testset",
}
__all__ = [
    "InputError",
    "ScoresColumns",
    "facet_columns",
    "property_text",
    "read_hypotheses",
    "read_runs_sheet",
    "read_scores_table",
    "read_testset",
    "reference_columns",
]

if TYPE_CHECKING:  # for type checkers and IDEs: the eager imports
    from infrepro.io.errors import InputError
    from infrepro.io.hypotheses import read_hypotheses
    from infrepro.io.runs import facet_columns, read_runs_sheet
    from infrepro.io.scores import ScoresColumns, read_scores_table
    from infrepro.io.testset import property_text, read_testset, reference_columns


__getattr__ = lazy_getattr(__name__, _WHERE, globals())
