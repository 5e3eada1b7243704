"""Every reader names its file: a bad gzip, CSV, Parquet, JSON lines or YAML file, a symlink loop
or a directory is one line naming the file and the problem (an InputError), never a traceback."""

from __future__ import annotations

import gzip
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from infrepro.io import InputError, read_runs_sheet, read_testset
from infrepro.io.config import check_config_file
from infrepro.io.scores import ScoresColumns, read_scores_table
from infrepro.properties.rarity import FrequencyTable

COLUMNS = ScoresColumns(segment="seg", system="sys", run=("sys", "seed"), metrics=("ter",))
SCORES = "seg,sys,seed,ter\ns1,base,1,0.5\ns2,base,1,0.4\ns1,comp,1,0.3\ns2,comp,1,0.2\n"


def read_scores(path: Path) -> object:
    return read_scores_table(path, COLUMNS)


def refusal(read: Callable[[Path], object], path: Path) -> str:
    """The one-line message of the InputError that reading ``path`` raises."""
    with pytest.raises(InputError) as err:
        read(path)
    message = str(err.value)
    assert message.startswith(f"{path}"), message
    assert "\n" not in message
    return message


def test_scores_file_that_is_not_gzip_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "scores.csv.gz"
    path.write_text(SCORES)
    message = refusal(read_scores, path)
    assert "cannot read it as gzip-compressed text" in message
    assert "Not a gzipped file" in message


def test_truncated_gzip_scores_file_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "scores.csv.gz"
    data = gzip.compress(SCORES.encode())
    path.write_bytes(data[: len(data) // 2])
    assert "is it gzip, and complete?" in refusal(read_scores, path)


def test_gzip_scores_file_with_a_corrupt_body_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "scores.csv.gz"
    data = bytearray(gzip.compress(SCORES.encode() * 20))
    data[-6] ^= 0xFF  # the stored length / CRC no longer match the content
    path.write_bytes(bytes(data))
    assert "cannot read it as gzip-compressed text" in refusal(read_scores, path)


def test_empty_scores_csv_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "scores.csv"
    path.write_text("")
    assert refusal(read_scores, path).endswith(
        "file is empty; expected a header line and rows of scores"
    )


def test_header_only_scores_file_says_it_has_no_rows(tmp_path: Path) -> None:
    path = tmp_path / "scores.csv"
    path.write_text("seg,sys,seed,ter\n")
    message = refusal(read_scores, path)
    assert "file has a header (seg, sys, seed, ter) but no rows of scores" in message


def test_garbage_parquet_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "scores.parquet"
    path.write_bytes(b"PAR1" + os.urandom(200) + b"PAR1")
    assert "cannot read it as Parquet" in refusal(read_scores, path)


@pytest.mark.parametrize(
    ("line", "problem"),
    [('{"segment_id": "s1"', "invalid JSON"), ("[1, 2]", "each line must be a JSON object")],
)
@pytest.mark.parametrize("reader", [read_testset, read_runs_sheet], ids=["testset", "runs"])
def test_bad_json_line_is_refused_naming_file_and_line(
    tmp_path: Path, reader: Callable[[Path], object], line: str, problem: str
) -> None:
    path = tmp_path / "table.jsonl"
    path.write_text('{"segment_id": "s0", "reference": "a"}\n' + line + "\n")
    message = refusal(reader, path)
    assert message.startswith(f"{path}:2: {problem}")


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ("baseline: [base\n", 2, "expected ',' or ']'"),
        ("analyses:\n\trun: [variance]\n", 2, "found character '\\t'"),
        ("a: 1\n  b: 2\n", 2, "mapping values are not allowed here"),
    ],
)
def test_config_file_that_is_not_yaml_is_refused_naming_file_and_line(
    tmp_path: Path, text: str, line: int, problem: str
) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    message = refusal(check_config_file, path)
    assert message.startswith(f"{path}:{line}: not valid YAML: {problem}"), message


def rarity(path: Path) -> object:
    return FrequencyTable.from_file(path)


READERS: dict[str, Callable[[Path], object]] = {
    "scores": read_scores,
    "testset": read_testset,
    "runs sheet": read_runs_sheet,
    "config file": check_config_file,
    "rarity corpus": rarity,
}


def symlink_loop(tmp_path: Path) -> Path:
    (tmp_path / "b.tsv").symlink_to(tmp_path / "a.tsv")
    (tmp_path / "a.tsv").symlink_to(tmp_path / "b.tsv")
    return tmp_path / "a.tsv"


@pytest.mark.parametrize("reader", list(READERS))
def test_symlink_loop_is_refused_naming_it(tmp_path: Path, reader: str) -> None:
    message = refusal(READERS[reader], symlink_loop(tmp_path))
    assert "Too many levels of symbolic links" in message


@pytest.mark.parametrize("reader", list(READERS))
def test_directory_is_refused_naming_it(tmp_path: Path, reader: str) -> None:
    folder = tmp_path / "folder.tsv"
    folder.mkdir()
    assert "is a directory" in refusal(READERS[reader], folder)


def test_hypotheses_path_in_a_symlink_loop_is_refused_with_the_sheet_line(tmp_path: Path) -> None:
    symlink_loop(tmp_path)
    sheet = tmp_path / "runs.tsv"
    sheet.write_text("run_id\tsystem\thypotheses\nr1\tbase\ta.tsv\n")
    message = refusal(read_runs_sheet, sheet)
    assert message.startswith(f"{sheet}:2: column 'hypotheses': hypotheses file cannot be read")
    assert "a.tsv" in message


def test_dev_score_varying_within_a_run_is_refused_naming_file_line_and_column(
    tmp_path: Path,
) -> None:
    """In scores mode the first row's dev score once won silently."""
    path = tmp_path / "scores.csv"
    path.write_text(
        "seg,sys,seed,ter,dev\ns1,base,1,0.5,0.3\ns2,base,1,0.4,0.3\n"
        "s1,comp,1,0.3,0.2\ns2,comp,1,0.2,0.25\n",
        encoding="utf-8",
    )
    columns = ScoresColumns(
        segment="seg", system="sys", run=("sys", "seed"), metrics=("ter",), dev_score="dev"
    )
    message = refusal(lambda p: read_scores_table(p, columns), path)
    assert message.startswith(f"{path}:5: column 'dev': 'dev' must be constant within each run")
