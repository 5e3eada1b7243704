"""The look column (docs/method.md §4e.1): integers or ISO dates per run, refused up front with
file, line and column when missing, malformed or mixed; no facet; constant within a run in
scores mode."""

from __future__ import annotations

import datetime
from pathlib import Path

import numpy as np
import pytest
from workflow_helpers import two_by_two_scores

from infrepro.core.vocabulary import LOOK
from infrepro.io import InputError, ScoresColumns, facet_columns, read_runs_sheet
from infrepro.io.looks import look_key, look_numbers, look_text, look_values
from infrepro.io.scores import read_scores_table


@pytest.mark.parametrize(
    ("value", "key"),
    [
        ("3", 3),
        (" 12 ", 12),
        (np.int64(2), 2),
        (4.0, 4),
        ("2025-03-01", datetime.datetime(2025, 3, 1)),
        ("2025-03-01T14:00", datetime.datetime(2025, 3, 1, 14)),
        (datetime.date(2025, 3, 1), datetime.datetime(2025, 3, 1)),
        ("2025-03-01T14:00+02:00", datetime.datetime(2025, 3, 1, 12)),  # aware: in UTC
    ],
)
def test_a_look_is_an_integer_or_an_iso_date(value: object, key: object) -> None:
    assert look_key(value) == key
    assert look_key(look_text(look_key(value))) == key  # the stored text reads back the same


@pytest.mark.parametrize("value", ["", None, float("nan"), "batch 2", "1.5", 2.5, True])
def test_anything_else_is_no_look(value: object) -> None:
    with pytest.raises(ValueError):
        look_key(value)


def test_look_values_name_the_first_bad_line_and_the_column(tmp_path: Path) -> None:
    path = tmp_path / "runs.tsv"
    assert look_values(["2", "1", "2"], path, [2, 3, 4], "batch") == ["2", "1", "2"]
    with pytest.raises(InputError, match=r"runs.tsv:4: column 'batch': no look value"):
        look_values(["2", "1", ""], path, [2, 3, 4], "batch")
    with pytest.raises(InputError, match=r"runs.tsv:3: column 'batch': 'soon' is neither"):
        look_values(["2", "soon"], path, [2, 3], "batch")
    with pytest.raises(InputError, match=r"runs.tsv:3: column 'batch': look '2025-01-02T00:00"):
        look_values(["2", "2025-01-02"], path, [2, 3], "batch")


def test_looks_are_ordered_values_and_equal_values_one_look() -> None:
    dates = ["2025-03-01", "2025-01-15", "2025-03-01T00:00", "2025-02-01"]
    assert list(look_numbers(dates)) == [3, 1, 3, 2]
    assert list(look_numbers(["10", "2", "2"])) == [2, 1, 1]  # as numbers, not as text
    with pytest.raises(ValueError, match="mix"):
        look_numbers(["1", "2025-01-01"])


def _sheet(tmp_path: Path, header: str, rows: list[str]) -> Path:
    (tmp_path / "h.txt").write_text("x\n")
    path = tmp_path / "runs.tsv"
    path.write_text("\n".join([header, *rows]) + "\n")
    return path


def test_the_runs_sheet_keeps_the_look_column_as_look_and_not_as_a_facet(tmp_path: Path) -> None:
    path = _sheet(
        tmp_path,
        "run_id\tsystem\thypotheses\tseed\tbatch",
        ["a1\tA\th.txt\t1\t1", "a2\tA\th.txt\t2\t02", "b1\tB\th.txt\t1\t1"],
    )
    runs = read_runs_sheet(path, look_column="batch")
    assert list(runs[LOOK]) == ["1", "2", "1"]
    assert "batch" not in runs
    assert facet_columns(runs, looks=True) == ["seed"]
    plain = read_runs_sheet(path)  # without the option the column is a facet, as before
    assert facet_columns(plain) == ["seed", "batch"]


@pytest.mark.parametrize(
    ("header", "rows", "pattern"),
    [
        (
            "run_id\tsystem\thypotheses\tbatch",
            ["a1\tA\th.txt\t1", "a2\tA\th.txt\t"],
            r"runs.tsv:3: column 'batch': no look value",
        ),
        (
            "run_id\tsystem\thypotheses\tbatch",
            ["a1\tA\th.txt\t2025-01-01", "a2\tA\th.txt\t3"],
            r"runs.tsv:3: column 'batch': look '3' mixes kinds",
        ),
        (
            "run_id\tsystem\thypotheses\tseed",
            ["a1\tA\th.txt\t1"],
            r"look_column names 'batch', which the runs sheet .* lacks \(its columns: run_id, "
            r"system, hypotheses, seed\)",
        ),
        (
            "run_id\tsystem\thypotheses\tbatch\tlook",
            ["a1\tA\th.txt\t1\tx"],
            r"runs.tsv: column 'look': column 'look' has the name infrepro gives the look column",
        ),
    ],
)
def test_bad_look_columns_are_refused_up_front(
    tmp_path: Path, header: str, rows: list[str], pattern: str
) -> None:
    with pytest.raises(InputError, match=pattern):
        read_runs_sheet(_sheet(tmp_path, header, rows), look_column="batch")


def _scores(tmp_path: Path, batches: list[str]) -> Path:
    return two_by_two_scores(tmp_path / "scores.csv", lambda k: {"ter": 0.3, "batch": batches[k]})


COLUMNS = ScoresColumns("seg", "sys", ("sys", "rep"), ("ter",), look="batch")


def test_scores_mode_reads_the_look_of_each_run(tmp_path: Path) -> None:
    table = read_scores_table(_scores(tmp_path, ["1", "1", "2", "2"] * 2), COLUMNS)
    assert table.groupby("run_id")[LOOK].first().to_dict() == {
        "A:0": "1",
        "A:1": "2",
        "B:0": "1",
        "B:1": "2",
    }


def test_scores_mode_refuses_a_look_that_varies_within_a_run(tmp_path: Path) -> None:
    path = _scores(tmp_path, ["1", "2", "2", "2", "1", "1", "2", "2"])
    with pytest.raises(InputError, match=r"scores.csv:3: column 'batch': 'batch' must be constant"):
        read_scores_table(path, COLUMNS)


def test_scores_mode_refuses_a_bad_look_value_with_its_line(tmp_path: Path) -> None:
    path = _scores(tmp_path, ["1", "1", "2", "2", "1", "1", "x", "x"])
    with pytest.raises(InputError, match=r"scores.csv:8: column 'batch': 'x' is neither"):
        read_scores_table(path, COLUMNS)


def test_scores_mode_refuses_a_look_column_with_another_role(tmp_path: Path) -> None:
    path = _scores(tmp_path, ["1"] * 8)
    facet = ScoresColumns("seg", "sys", ("sys", "rep"), ("ter",), facets=("batch",), look="batch")
    with pytest.raises(InputError, match=r"columns.look names 'batch', which columns.facets"):
        read_scores_table(path, facet)
    # a run column may be the look: a run named by the batch it arrived in
    by_batch = ScoresColumns("seg", "sys", ("sys", "batch"), ("ter",), look="batch")
    table = read_scores_table(_scores(tmp_path, ["1", "1", "2", "2"] * 2), by_batch)
    assert sorted(set(table["run_id"])) == ["A:1", "A:2", "B:1", "B:2"]
