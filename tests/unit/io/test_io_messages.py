"""Small input checks: run ids matched in full, what a hypotheses path is when it is no file,
message grammar."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from infrepro.io import InputError, read_hypotheses, read_runs_sheet


def test_run_id_with_a_final_newline_is_rejected(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x\n")
    rows = [{"run_id": "r0\n", "system": "base", "hypotheses": "a.txt"}]
    sheet = tmp_path / "runs.jsonl"
    sheet.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(InputError, match=r"runs.jsonl:1: column 'run_id': run_id 'r0\\n' may"):
        read_runs_sheet(sheet)


def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize(
    ("make", "what"),
    [
        (lambda tmp: tmp, "is a directory"),
        (fifo, r"is a FIFO \(named pipe\)"),
        (lambda tmp: Path("/dev/null"), "is a character device"),
        (lambda tmp: tmp / "absent.txt", "not found"),
    ],
)
def test_hypotheses_path_that_is_no_file_says_what_it_is(tmp_path: Path, make, what: str) -> None:
    path = make(tmp_path)
    with pytest.raises(InputError, match=f"hypotheses file {what}"):
        read_hypotheses(path, ["s1"])
    sheet = tmp_path / "runs.tsv"
    sheet.write_text(f"run_id\tsystem\thypotheses\nr0\tbase\t{path}\n")
    with pytest.raises(
        InputError, match=rf"runs.tsv:2: column 'hypotheses': hypotheses file {what}"
    ):
        read_runs_sheet(sheet)


def test_line_counts_read_as_english(tmp_path: Path) -> None:
    path = tmp_path / "h.txt"
    path.write_text("only one\n")
    with pytest.raises(InputError, match=r"has 1 line but the test set has 2 segments"):
        read_hypotheses(path, ["s1", "s2"])
    path.write_text("one\ntwo\n")
    with pytest.raises(InputError, match=r"has 2 lines but the test set has 1 segment;"):
        read_hypotheses(path, ["s1"])
