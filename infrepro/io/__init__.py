"""Input formats, validation and atomic output."""

from .atomic import atomic_open, atomic_path, write_csv, write_parquet, write_text
from .errors import InputError
from .hypotheses import read_hypotheses
from .runs import facet_columns, read_runs_sheet
from .scores import ScoresColumns, read_scores_table
from .testset import property_text, read_testset, reference_columns

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
