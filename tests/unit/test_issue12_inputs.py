"""Small input checks: run ids matched in full, what a hypotheses path is when it is no file,
message grammar, and the user-name mapping of the analyses."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from infrepro.analyses import MetricData
from infrepro.analyses.classical import classical_tests
from infrepro.analyses.fitlog import FitLog
from infrepro.analyses.names import Names, formula_name
from infrepro.io import InputError, read_hypotheses, read_runs_sheet
from infrepro.lmm import LmmError, fit


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


def test_reasons_show_plain_numbers() -> None:
    data = pd.DataFrame({"y": [0.5] * 6, "g": list("aabbcc")})
    with pytest.raises(LmmError) as caught:
        fit("y ~ 1 + (1|g)", data)
    assert "constant (0.5)" in str(caught.value)
    assert "np.float64" not in str(caught.value)


def test_paired_bootstrap_on_one_segment_is_skipped_with_its_reason() -> None:
    """One difference resampled is always itself: the bootstrap would report the smallest
    possible p. It is skipped, saying why; approximate randomization gives its honest p = 1."""
    evaluation = pd.DataFrame(
        {
            "run_id": ["b1", "b2", "c1", "c2"],
            "system": ["base", "base", "comp", "comp"],
            "segment_id": ["s0"] * 4,
            "ter": [0.5, 0.52, 0.4, 0.41],
        }
    )
    data = MetricData(
        metric="ter",
        better="lower",
        baseline="base",
        evaluation=evaluation,
        runs=evaluation[["run_id", "system"]],
        facets=[],
        properties=[],
        options={"bootstrap": {"samples": 99}, "randomization": {"samples": 99}},
    )
    log = FitLog("ter")
    table = classical_tests(data, log)["classical"].set_index("test")
    assert "paired bootstrap" not in table.index
    assert table.loc["approximate randomization", "p_value"] == "1"
    reasons = list(log.diagnostics()["reason"])
    assert "paired bootstrap: the best runs share 1 segment; resampling needs at least 2" in reasons


def test_names_round_trip_through_formulas_and_tables() -> None:
    users = ["comet-22", "rand seed", "(1|x) + y", "länge", "srclen", "srclen-ratio"]
    names = Names.of(users)
    inner = names.internal_list(users)
    assert len(set(inner)) == len(users)
    assert all(formula_name(n) == n for n in inner)  # internal names need no quoting
    formula = f"{inner[0]} ~ system * {inner[5]} + (1|segment_id) + (1|{inner[1]}:{inner[4]})"
    table = pd.DataFrame({"property": [inner[5]], "model": [formula], inner[2]: ["v"]})
    back = names.user_table(table)
    assert list(back.columns) == ["property", "model", "(1|x) + y"]
    assert back.loc[0, "property"] == "srclen-ratio"
    assert back.loc[0, "model"] == (
        "`comet-22` ~ system * `srclen-ratio` + (1|segment_id) + (1|`rand seed`:srclen)"
    )
    options = names.internal_options({"facets": {"a": ["rand seed"]}, "vca_interactions": []})
    assert options["facets"] == {"a": [inner[1]]}
    assert names.internal_options({"vca_interactions": ["rand seed/srclen"]})[
        "vca_interactions"
    ] == [f"{inner[1]}/{inner[4]}"]
