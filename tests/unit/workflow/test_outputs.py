"""Removing what an earlier configuration produced (infrepro.workflow.outputs): only files the
previous job recorded, that infrepro writes, under results/; never a file of the current
configuration, a user's own file or anything outside results/."""

from __future__ import annotations

from pathlib import Path

import pytest

from infrepro.workflow.outputs import RECORD, is_owned, read_record, remove_stale, stale_outputs


@pytest.mark.parametrize(
    ("path", "owned"),
    [
        ("analyses/chrf/summary/summary.csv", True),
        ("analyses/chrf/summary/notes.csv", False),  # not a table of the analysis
        ("analyses/chrf/nosuch/summary.csv", False),  # not an analysis
        ("analyses/my metric/summary/summary.csv", False),  # not a file stem infrepro makes
        ("paper/chrf.md", True),
        ("paper/chrf.tex", True),
        ("paper/my notes on chrf.md", False),
        ("paper/chrf.docx", False),
        ("scores/run_1.parquet", True),  # the layout before a file per metric
        ("scores/run_1/ter.parquet", True),
        ("scores/run_1/ter.csv", False),
        ("scores/run_1.csv", False),
        ("tables/summary.csv", True),
        ("tables/outputs.csv", True),
        ("tables/my_table.csv", False),
        ("evaluation.parquet", True),
        ("report.html", True),
        ("notes.txt", False),
        ("paper/.chrf.md.x1y2.tmp", False),  # an atomic write's temporary file
    ],
)
def test_only_files_infrepro_writes_are_owned(path: str, owned: bool) -> None:
    assert is_owned(path) is owned


def make(root: Path, *paths: str) -> None:
    for path in paths:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(path)


def test_only_recorded_files_the_configuration_no_longer_produces_are_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    old = [
        "results/paper/chrf.md",
        "results/paper/ter.md",
        "results/analyses/chrf/summary/summary.csv",
        "results/tables/summary.csv",
    ]
    user = ["results/paper/draft.md", "results/notes.txt", "elsewhere/paper/chrf.md"]
    make(tmp_path, *old, *user)
    assert remove_stale(old) == []  # first run: nothing recorded, nothing removed
    assert read_record() == sorted(old)
    produced = ["results/paper/ter.md", "results/tables/summary.csv", "results/paper/new.md"]
    assert stale_outputs(produced) == [
        "results/analyses/chrf/summary/summary.csv",
        "results/paper/chrf.md",
    ]
    removed = remove_stale(produced)
    assert removed == ["results/analyses/chrf/summary/summary.csv", "results/paper/chrf.md"]
    assert not (tmp_path / "results/analyses/chrf").exists()  # its emptied folders too
    assert (tmp_path / "results/analyses").is_dir()
    for path in [*user, "results/paper/ter.md", "results/tables/summary.csv"]:
        assert (tmp_path / path).read_text() == path
    assert read_record() == sorted(produced)
    assert remove_stale(produced) == []


def test_a_record_naming_files_outside_results_removes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    outside = ["elsewhere/paper/chrf.md", "results/../paper/chrf.md", "/tmp/x/report.html"]
    make(tmp_path, "elsewhere/paper/chrf.md", "paper/chrf.md")
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / RECORD).write_text("\n".join(outside) + "\n")
    assert remove_stale([]) == []
    assert (tmp_path / "elsewhere/paper/chrf.md").is_file()
    assert (tmp_path / "paper/chrf.md").is_file()
