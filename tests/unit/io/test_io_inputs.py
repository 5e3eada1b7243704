"""Test set, runs sheet and hypotheses readers: accepted input and specific errors."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from infrepro.io import InputError, read_hypotheses, read_runs_sheet, read_testset


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8", newline="")
    return path


def test_testset_tsv_keeps_ids_as_text(tmp_path: Path) -> None:
    path = write(
        tmp_path / "t.tsv",
        "segment_id\tsource\treference\treference_2\tdomain\n007\tHallo\tHello\tHi\tnews\n",
    )
    table = read_testset(path)
    assert list(table.columns) == ["segment_id", "source", "reference", "reference_2", "domain"]
    assert table.loc[0, "segment_id"] == "007"


def test_testset_jsonl(tmp_path: Path) -> None:
    rows = [{"segment_id": 1, "reference": "a\tb\nc"}, {"segment_id": 2, "reference": "d"}]
    path = write(tmp_path / "t.jsonl", "\n".join(json.dumps(r) for r in rows) + "\n")
    table = read_testset(path)
    assert list(table["segment_id"]) == ["1", "2"]
    assert table.loc[0, "reference"] == "a\tb\nc"


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ("segment_id\tsource\nA\tx\n", "required column 'reference' is missing"),
        ("segment_id\treference\nA\tx\nB\ty\nA\tz\n", r":4: column 'segment_id': duplicate"),
        ("segment_id\treference\nA\tx\tstray\n", r":2: expected 2 tab-separated fields"),
        ("segment_id\treference\nA\t\n", r":2: column 'reference': value is empty"),
        ("", "file is empty"),
    ],
)
def test_testset_errors(tmp_path: Path, text: str, pattern: str) -> None:
    with pytest.raises(InputError, match=pattern):
        read_testset(write(tmp_path / "t.tsv", text))


def make_runs(tmp_path: Path, rows: str, header: str = "run_id\tsystem\thypotheses\tseed") -> Path:
    (tmp_path / "h dir").mkdir(exist_ok=True)
    write(tmp_path / "h dir" / "a.txt", "x\n")
    return write(tmp_path / "runs.tsv", header + "\n" + rows)


def test_runs_sheet_resolves_paths_relative_to_sheet(tmp_path: Path) -> None:
    runs = read_runs_sheet(
        make_runs(tmp_path, "r1\tbase\th dir/a.txt\t1\nr2\tcomp\th dir/a.txt\t\n")
    )
    assert Path(runs.loc[0, "hypotheses"]) == (tmp_path / "h dir" / "a.txt").resolve()
    assert pd.isna(runs.loc[1, "seed"])


@pytest.mark.parametrize(
    ("rows", "header", "pattern"),
    [
        ("r1\tb\th dir/a.txt\t1\nr1\tc\th dir/a.txt\t2\n", None, r":3: column 'run_id': duplicate"),
        ("r1\th dir/a.txt\n", "run_id\thypotheses", "required column 'system' is missing"),
        ("r1\tb\tmissing.txt\t1\n", None, r":2: column 'hypotheses': hypotheses file not found"),
        ("r/1\tb\th dir/a.txt\t1\n", None, r":2: column 'run_id': run_id 'r/1' may hold only"),
        (
            "r1\tb\th dir/a.txt\tabc\n",
            "run_id\tsystem\thypotheses\tdev_score",
            r":2: column 'dev_score': 'abc' is not a number",
        ),
    ],
)
def test_runs_sheet_errors(tmp_path: Path, rows: str, header: str | None, pattern: str) -> None:
    path = make_runs(tmp_path, rows, header or "run_id\tsystem\thypotheses\tseed")
    with pytest.raises(InputError, match=pattern):
        read_runs_sheet(path)


def test_hypotheses_text_and_empty_lines(tmp_path: Path) -> None:
    path = write(tmp_path / "h.txt", "one\r\n\r\nthree\r\n")
    assert read_hypotheses(path, ["a", "b", "c"]) == ["one", "", "three"]


@pytest.mark.parametrize("text", ["one\ntwo\n", "one\ntwo\nthree\nfour\n"])
def test_hypotheses_wrong_line_count(tmp_path: Path, text: str) -> None:
    path = write(tmp_path / "h.txt", text)
    with pytest.raises(InputError, match=r"h.txt: has \d lines but the test set has 3 segments"):
        read_hypotheses(path, ["a", "b", "c"])


def test_hypotheses_jsonl_are_reordered(tmp_path: Path) -> None:
    lines = [{"segment_id": "b", "hypothesis": "B"}, {"segment_id": "a", "hypothesis": "A"}]
    path = write(tmp_path / "h.jsonl", "".join(json.dumps(x) + "\n" for x in lines))
    assert read_hypotheses(path, ["a", "b"]) == ["A", "B"]


def test_hypotheses_jsonl_missing_segment(tmp_path: Path) -> None:
    path = write(tmp_path / "h.jsonl", json.dumps({"segment_id": "a", "hypothesis": "A"}) + "\n")
    with pytest.raises(InputError, match="1 test-set segments have no hypothesis: b"):
        read_hypotheses(path, ["a", "b"])


def test_one_empty_dev_score_is_refused_with_its_line(tmp_path: Path) -> None:
    """One empty dev_score cell once turned best-run selection by dev score off for every system."""
    header = "run_id\tsystem\thypotheses\tdev_score"
    rows = "r1\tb\th dir/a.txt\t0.4\nr2\tb\th dir/a.txt\t\nr3\tc\th dir/a.txt\t0.5\n"
    with pytest.raises(InputError, match=r"runs.tsv:3: column 'dev_score': dev_score is empty"):
        read_runs_sheet(make_runs(tmp_path, rows, header))
    every = read_runs_sheet(make_runs(tmp_path, rows.replace("\t\n", "\t0.3\n"), header))
    assert every["dev_score"].notna().all()
    none = read_runs_sheet(
        make_runs(tmp_path, "r1\tb\th dir/a.txt\t\nr2\tc\th dir/a.txt\t\n", header)
    )
    assert none["dev_score"].isna().all()


def test_runs_sheet_rows_are_ordered_by_run_id(tmp_path: Path) -> None:
    runs = read_runs_sheet(make_runs(tmp_path, "r2\tc\th dir/a.txt\t1\nr1\tb\th dir/a.txt\t2\n"))
    assert list(runs["run_id"]) == ["r1", "r2"]
    assert list(runs["seed"]) == ["2", "1"]
