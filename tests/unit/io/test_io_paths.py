"""How the workflow names an input file (infrepro.io.paths.portable_path): relative to the
experiment folder when inside it, absolute when outside, the same name however it was written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from infrepro.io import read_runs_sheet
from infrepro.io.paths import portable_path


@pytest.fixture
def experiment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "exp"
    (root / "config").mkdir(parents=True)
    (root / "hyps").mkdir()
    (root / "hyps" / "a.txt").write_text("x\n")
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "b.txt").write_text("y\n")
    monkeypatch.chdir(root)
    return root


def test_a_file_inside_the_experiment_is_named_relative_to_it(experiment: Path) -> None:
    for written in (
        "hyps/a.txt",
        "./hyps/a.txt",
        "config/../hyps/a.txt",
        experiment / "hyps/a.txt",
    ):
        assert portable_path(written) == "hyps/a.txt"


def test_a_file_outside_the_experiment_is_named_by_its_absolute_path(experiment: Path) -> None:
    outside = (experiment.parent / "shared" / "b.txt").resolve()
    assert portable_path("../shared/b.txt") == outside.as_posix()
    assert portable_path(outside) == outside.as_posix()


def test_a_dotdot_after_a_symlink_names_the_file_the_system_opens(experiment: Path) -> None:
    """`link/..` is the link target's parent, not the experiment folder: the lexical form would
    name another file, so the resolved one is used."""
    deep = experiment.parent / "shared" / "deep"
    deep.mkdir()
    (experiment / "link").symlink_to(deep)
    assert Path(os.path.join("link", "..", "b.txt")).read_text() == "y\n"
    assert portable_path("link/../b.txt") == (experiment.parent / "shared/b.txt").as_posix()


def test_the_runs_sheet_names_hypotheses_the_same_from_any_folder_or_spelling(
    experiment: Path,
) -> None:
    sheet = experiment / "config" / "runs.tsv"
    rows = [
        "run_id\tsystem\thypotheses",
        "r1\tbase\t../hyps/a.txt",
        f"r2\tbase\t{experiment / 'hyps' / 'a.txt'}",
        "r3\tcomp\t../../shared/b.txt",
    ]
    sheet.write_text("\n".join(rows) + "\n")
    runs = read_runs_sheet(sheet)
    outside = (experiment.parent / "shared" / "b.txt").resolve().as_posix()
    assert list(runs["hypotheses"]) == ["hyps/a.txt", "hyps/a.txt", outside]
