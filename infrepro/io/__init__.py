"""Input formats and their validation.

The public names load from their modules on first use: the workflow's parse (every Snakemake
invocation, one with nothing to do included) reads ``InputError`` and the config checks, and
pandas loads only where a table is read or written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from infrepro.plumbing.lazy import lazy_package

if TYPE_CHECKING:  # the public names (for type checkers as they are; loaded on first use)
    from infrepro.io.errors import InputError
    from infrepro.io.hypotheses import read_hypotheses
    from infrepro.io.runs import facet_columns, read_runs_sheet
    from infrepro.io.scores import ScoresColumns, read_scores_table
    from infrepro.io.testset import property_text, read_testset, reference_columns

__getattr__, __all__ = lazy_package(__name__, __file__, globals())
