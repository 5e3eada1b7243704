"""Every table one job writes and another reads has one typed declaration; readers take their
types from it (strings stay strings, an empty numeric cell is NaN), never from pandas' guess."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from infrepro.analyses import load_metric_data
from infrepro.analyses.common.fitlog import FitLog
from infrepro.analyses.common.tables import conform
from infrepro.analyses.metaparam import facet_importance
from infrepro.core.registry import ANALYSES
from infrepro.core.vocabulary import (
    KINDS,
    OPTIONAL_REPORT_TABLES,
    REPORT_TABLES,
    STR,
    TABLE_SPECS,
    TABLES,
    Column,
)
from infrepro.io import InputError
from infrepro.io.results import read_result_table
from infrepro.plumbing.atomic import write_csv
from infrepro.report.formatting import is_significant

ODD = ["1", "007", "NA", "None", "nan", "True", ""]  # system names a guessing reader mangles


def test_every_table_is_declared_once_with_known_kinds() -> None:
    assert set(REPORT_TABLES) | set(OPTIONAL_REPORT_TABLES) == set(TABLE_SPECS)
    assert not set(REPORT_TABLES) & set(OPTIONAL_REPORT_TABLES)
    written = {table for spec in ANALYSES.values() for table in spec.tables}
    assert written == set(TABLES)
    for spec in TABLE_SPECS.values():
        assert len(set(spec.names)) == len(spec.names), spec.name
        assert all(column.kind in KINDS for column in spec.columns)
    with pytest.raises(ValueError, match="kind"):
        Column("x", "decimal")


def test_a_table_survives_a_csv_round_trip_with_its_types(tmp_path) -> None:
    n = len(ODD)
    frame = pd.DataFrame(
        {
            "metric": ["ter"] * n,
            "system": ODD,
            "facet": ["seed"] * n,
            "variance": [0.5, np.nan, 1e-300, 2.0, -0.0, 3.25, 1.0],
            "percent": [50.0, np.nan, 0.0, 1.0, 2.0, 3.0, 4.0],
            "rank": list(range(1, n + 1)),
            "dominant": [True, False, True, False, False, True, False],
        }
    )
    path = tmp_path / "importance.csv"
    write_csv(conform("importance", frame), path)
    read = read_result_table("importance", path)
    assert list(read["system"]) == ODD
    assert math.isnan(read["variance"][1]) and read["variance"][2] == 1e-300
    assert read["rank"].dtype.kind == "i" and read["dominant"].dtype == bool
    pd.testing.assert_frame_equal(read, frame)
    kinds = {c.name: c.kind for c in TABLE_SPECS["importance"].columns}
    assert all(pd.api.types.is_string_dtype(read[c]) for c, k in kinds.items() if k == STR)


def test_a_number_column_with_text_is_refused_naming_file_and_column(tmp_path) -> None:
    path = tmp_path / "dstudy.csv"
    path.write_text("metric,system,n_per_facet,runs_averaged,phi\nter,a,2,2,high\n")
    with pytest.raises(InputError, match=r"dstudy\.csv.*phi"):
        read_result_table("dstudy", path)


def test_variance_components_read_back_keep_numeric_system_names(tmp_path) -> None:
    """A system named 1 or 007 keeps its dominant facet after the variance job's CSV."""
    systems = ["1", "007"]
    rows = [
        {"run_id": f"{s}_{seed}", "system": s, "seed": str(seed), "segment_id": f"g{g}", "m": g}
        for s in systems
        for seed in (1, 2)
        for g in range(3)
    ]
    evaluation = pd.DataFrame(rows)
    runs = evaluation[["run_id", "system", "seed"]].drop_duplicates()
    data = load_metric_data(
        evaluation,
        runs,
        pd.DataFrame(columns=["property", "bin"]),
        metric="m",
        better="higher",
        baseline="1",
        facets=["seed"],
        properties=[],
        options={},
    )
    components = pd.DataFrame(
        {
            "metric": "m",
            "system": ["1", "1", "007", "007"],
            "vca": "run-aware",
            "component": ["seed", "Residual", "seed", "Residual"],
            "variance": [0.2, 0.1, 0.3, 0.1],
            "percent": [66.7, 33.3, 75.0, 25.0],
            "n_levels": [2, np.nan, 2, np.nan],
            "converged": True,
        }
    )
    path = tmp_path / "variance_components.csv"
    write_csv(conform("variance_components", components), path)
    read = data.names.internal_values(read_result_table("variance_components", path), ["component"])
    importance = facet_importance(data, FitLog("m"), read)
    assert list(importance["system"]) == systems
    assert list(importance["dominant"]) == [True, True]


@pytest.mark.parametrize(
    ("log10_p", "expected"),
    [
        (-2.0, True),
        (-1.0, False),
        (float("-inf"), True),
        (float("nan"), False),
        (None, False),
        ("", False),
        ("-3", True),
        ("n/a", False),
        (np.log10(0.05), False),
    ],
)
def test_significance_is_one_rule_and_a_missing_p_is_never_significant(
    log10_p: object, expected: bool
) -> None:
    assert is_significant(log10_p, 0.05) is expected
