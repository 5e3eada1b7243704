"""collect_tables joins the parts of a table as text (infrepro.analyses.common.tables.joined_parts):
the very bytes of reading them, concatenating and writing them again with pandas."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from infrepro.analyses.common.tables import combine, joined_parts
from infrepro.io.results import read_text_table
from infrepro.plumbing.atomic import write_csv

AWKWARD = ["plain", "a,b", 'say "x"', "two\nlines", " lead", "trail ", "", "NA", "1e-05", "ü"]


def parts(tmp_path: Path, frames: list[pd.DataFrame]) -> list[Path]:
    paths = []
    for i, frame in enumerate(frames):
        path = tmp_path / f"part{i}" / "glrt.csv"
        write_csv(frame, path)
        paths.append(path)
    return paths


def through_pandas(paths: list[Path], tmp_path: Path) -> str:
    out = tmp_path / "pandas.csv"
    write_csv(combine([read_text_table(p) for p in paths]), out)
    return out.read_text(encoding="utf-8")


def test_same_bytes_as_pandas(tmp_path: Path) -> None:
    frames = [
        pd.DataFrame({"metric": AWKWARD, "p": [0.1 * i for i in range(len(AWKWARD))]}),
        pd.DataFrame({"metric": [], "p": []}),  # a job that wrote no row
        pd.DataFrame({"metric": ["x", "y,z"], "p": [1.0, float("nan")]}),
    ]
    paths = parts(tmp_path, frames)
    assert joined_parts(paths) == through_pandas(paths, tmp_path)


def test_only_empty_parts_give_the_header(tmp_path: Path) -> None:
    paths = parts(tmp_path, [pd.DataFrame({"metric": [], "p": []})] * 2)
    assert joined_parts(paths) == through_pandas(paths, tmp_path) == "metric,p\n"


@pytest.mark.parametrize(
    "second",
    [pd.DataFrame({"metric": ["x"], "q": [1.0]}), pd.DataFrame({"p": [1.0], "metric": ["x"]})],
)
def test_other_headers_are_left_to_pandas(tmp_path: Path, second: pd.DataFrame) -> None:
    paths = parts(tmp_path, [pd.DataFrame({"metric": ["a"], "p": [0.5]}), second])
    assert joined_parts(paths) is None


def test_no_parts_or_a_file_without_a_line_end(tmp_path: Path) -> None:
    assert joined_parts([]) is None
    odd = tmp_path / "odd.csv"
    odd.write_text("metric,p\nx,1", encoding="utf-8")
    assert joined_parts([odd]) is None
