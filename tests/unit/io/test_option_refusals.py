"""Options that were ignored or changed meaning silently, and refusals that did not say what to
do (issue 42, items 6-11): each is refused before any job runs naming the option, file, line or
column and the fix, or, for a declared scale the data look unusual for, accepted with a warning
that says so."""

from __future__ import annotations

import copy
import logging
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from workflow_helpers import make_mini_experiment, two_by_two_scores

from infrepro.core.catalog import Scale
from infrepro.experiment import load_experiment
from infrepro.io import InputError, ScoresColumns, read_runs_sheet
from infrepro.io.config import check_config
from infrepro.io.looks import look_values
from infrepro.io.scores import check_scale, read_scores_table


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A raw-mode experiment whose runs sheet has a look column ``batch`` beside ``seed``."""
    folder = tmp_path_factory.mktemp("refusals")
    make_mini_experiment(folder, n_segments=4, metrics=("ter",), properties=("length",))
    runs = pd.read_csv(folder / "runs.tsv", sep="\t", dtype=str, keep_default_na=False)
    runs["batch"] = ["1", "2"] * (len(runs) // 2)
    runs.to_csv(folder / "runs.tsv", sep="\t", index=False)
    return folder


@pytest.fixture
def raw(root: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.chdir(root)
    return {
        "testset": "testset.tsv",
        "runs": "runs.tsv",
        "baseline": "base",
        "metrics": ["ter"],
        "properties": ["length"],
        "analyses": {"dev_score_better": "higher"},
    }


def start_up(config: dict[str, Any]) -> object:
    """What the Snakefile and common.smk run before any job, in the same order."""
    config = copy.deepcopy(config)
    check_config(config)
    return load_experiment(config)


def refusal(config: dict[str, Any]) -> str:
    with pytest.raises(InputError) as err:
        start_up(config)
    message = str(err.value)
    assert "\n" not in message
    return message


# -- item 6 ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "plan", [{"max_runs": 6}, {"max_runs": {"base": 6, "comp": 6}}, {"final": True}]
)
def test_sequential_without_a_look_column_applies_to_the_recorded_looks(
    raw: dict, plan: dict
) -> None:
    """A plan declared without a look column was ignored (the verdict stayed the single-look
    one: TER "better" at p 0.0467, "no difference shown" under the plan). Now every rerun that
    adds runs is a look the ledger records (docs/method.md §4e.12), the plan applies to those
    looks from the first one, and nothing is refused."""
    from infrepro.io.ledger import CurrentRun, looks_of, run_looks

    config = raw | {"analyses": raw["analyses"] | {"sequential": plan}}
    start_up(config)
    one = looks_of(Path("/nonexistent/runs.ledger.tsv"), [CurrentRun("b", "b1", "x", "d")], "p")
    assert run_looks(one, planned="max_runs" in plan) == ([["b1", 1]] if "max_runs" in plan else [])


def test_sequential_spending_without_looks_shapes_the_planned_design(raw: dict) -> None:
    """spending (and futility) also set the sequential design planning proposes without looks
    (docs/method.md §4e.8): not ignored, so not refused."""
    start_up(raw | {"analyses": raw["analyses"] | {"sequential": {"spending": "pocock"}}})


# -- item 7 ---------------------------------------------------------------------------------------
def test_futility_without_min_effect_is_refused(raw: dict) -> None:
    """futility is a threshold on conditional power at planning.min_effect: without it the
    report announced "futility below 20 %" for advice that could never be given."""
    sequential = {"max_runs": 6, "futility": 0.2}
    analyses = raw["analyses"] | {"sequential": sequential}
    config = raw | {"look_column": "batch", "analyses": analyses}
    message = refusal(config)
    assert "analyses.sequential.futility is 0.2" in message, message
    assert "analyses.planning.min_effect" in message and "conditional power" in message
    config["analyses"]["planning"] = {"min_effect": 1.0}
    start_up(config)


# -- item 8 ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("values", "line", "shown"),
    [
        (["2025-01-05T23:30-05:00", "2025-01-06"], 3, "'2025-01-06' has no time zone"),
        (["2025-01-06", "2025-01-05T23:30-05:00"], 3, "'2025-01-05T23:30-05:00' has a time zone"),
        (["2025-01-05T10:00", "2025-01-05T23:30+00:00"], 3, "'2025-01-05T23:30+00:00' has a"),
    ],
)
def test_time_zone_dates_mixed_with_plain_dates_are_refused(
    tmp_path: Path, values: list[str], line: int, shown: str
) -> None:
    """``…23:30-05:00`` and ``2025-01-06`` gave looks 2 and 1: the plain date was read as UTC."""
    path = tmp_path / "runs.tsv"
    with pytest.raises(InputError) as err:
        look_values(values, path, [2, 3], "batch")
    message = str(err.value)
    assert message.startswith(f"{path}:{line}: column 'batch': look {shown}"), message
    assert "line 2" in message  # the other kind's first line
    # one kind throughout is read as before
    assert look_values(["2025-01-05T23:30-05:00", "2025-01-06T00:00+01:00"], path, [2, 3], "b")
    assert look_values(["2025-01-05", "2025-01-06T10:00"], path, [2, 3], "b")


def test_time_zone_dates_mixed_with_plain_dates_are_refused_in_the_runs_sheet(
    tmp_path: Path,
) -> None:
    (tmp_path / "h.txt").write_text("x\n")
    path = tmp_path / "runs.tsv"
    rows = ["a1\tA\th.txt\t2025-01-05T23:30-05:00", "a2\tA\th.txt\t2025-01-06"]
    path.write_text("\n".join(["run_id\tsystem\thypotheses\tbatch", *rows]) + "\n")
    with pytest.raises(InputError, match=rf"{path}:3: column 'batch': look '2025-01-06' has no"):
        read_runs_sheet(path, look_column="batch")


# -- item 9 ---------------------------------------------------------------------------------------
def test_look_column_seed_is_refused(raw: dict) -> None:
    """``look_column: seed`` took the seed out of the facets (no retraining variance) and said
    nothing."""
    message = refusal(raw | {"look_column": "seed"})
    assert message.startswith("<config>: look_column names 'seed'"), message
    assert "analyses.retraining_facets" in message and "facet" in message
    named = raw | {"look_column": "batch"}  # a facet option naming the look column: the same
    named["analyses"] = raw["analyses"] | {"metaparam_facets": ["batch"]}
    assert "analyses.metaparam_facets names it as a facet" in refusal(named)
    # a retraining facet that is not the seed: the seed may then be the look column
    own = raw | {"look_column": "seed", "analyses": raw["analyses"] | {"retraining_facets": []}}
    start_up(own)


# -- item 10 --------------------------------------------------------------------------------------
def test_points_declared_for_scores_within_two_is_accepted_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A real 0-100 metric whose scores all lie in [-2, 2] could not be declared points, and the
    advice (remove the scale) would have shown 1.8 as 180: a declared scale wins, with a
    warning naming the option when the data look unusual for it."""
    values = [1.8, 0.4, -1.2, 0.9, 1.1, 0.0, 1.5, 0.7]
    path = two_by_two_scores(tmp_path / "scores.csv", lambda k: {"m": values[k]})
    columns = ScoresColumns("seg", "sys", ("sys", "rep"), ("m",))
    with caplog.at_level(logging.WARNING):
        table = read_scores_table(path, columns, scale={"m": "points"})
    assert table["m"].max() == pytest.approx(0.018)  # 1.8 points, never 180
    warned = " ".join(r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING)
    assert f"{path}: column 'm': scores of metric 'm'" in warned, warned
    assert "within [-2, 2]" in warned and "scale.m: points" in warned
    note = check_scale(pd.Series([1.8, 0.4, -1.2]), Scale("points"), path, "m")
    assert note is not None and "1.8 is shown as 1.8" in note
    # undeclared, fractions are the default and the data must fit them
    with pytest.raises(InputError, match="set scale: {m: points}"):
        check_scale(pd.Series([35.0, 80.0, 12.5]), None, path, "m")


# -- item 11 --------------------------------------------------------------------------------------
def test_analyses_alpha_is_refused_pointing_to_report_alpha(raw: dict) -> None:
    message = refusal(raw | {"analyses": raw["analyses"] | {"alpha": 0.1}})
    assert "unknown option analyses.alpha" in message and "report.alpha" in message, message


@pytest.mark.parametrize(
    ("section", "key", "meant"),
    [
        ("analyses", "boostrap", "analyses.bootstrap"),
        ("report", "alfa", "report.alpha"),
        ("analyses", "look_column", "look_column"),
        (None, "sequential", "analyses.sequential"),
        (None, "min_effect", "analyses.planning.min_effect"),
        ("analyses", "min_effect", "analyses.planning.min_effect"),
        ("report", "min_effect", "analyses.planning.min_effect"),
        (None, "alpha", "report.alpha"),
        (None, "runs_dev_score", "runs_dev_scores"),
        (None, "dev_scores", "runs_dev_scores"),
    ],
)
def test_near_miss_option_names_the_option_meant(
    raw: dict, section: str | None, key: str, meant: str
) -> None:
    config = copy.deepcopy(raw)
    node = config.setdefault(section, {}) if section else config
    node[key] = 1
    message = refusal(config)
    assert f"did you mean {meant}?" in message, message


def test_columns_look_in_raw_mode_is_refused_pointing_to_look_column(raw: dict) -> None:
    """Refused as "columns.segment is required", which sent the user to fill in scores mode."""
    message = refusal(raw | {"columns": {"look": "batch"}})
    assert "columns.segment" not in message, message
    assert message.startswith("<config>: columns is an option of scores mode"), message
    assert "look_column: batch" in message


@pytest.mark.parametrize(
    ("option", "value", "expected"),
    [
        (("scale", "ter"), "point", "scale.ter is 'point'; choose one of fraction, points"),
        (("scale", "ter"), {"rw": [1, 5]}, "option scale.ter.rw (did you mean scale.ter.raw?)"),
        (("columns", "run"), 3, "columns.run is a number (3); it must be text or a list"),
        (
            ("analyses", "sequential", "max_runs"),
            1.5,
            "analyses.sequential.max_runs is a number (1.5); it must be empty, a whole number",
        ),
    ],
)
def test_one_of_several_forms_is_refused_naming_what_fits(
    raw: dict, option: tuple[str, ...], value: object, expected: str
) -> None:
    """These said only "... is not valid under any of the given schemas"."""
    config = copy.deepcopy(raw)
    if option[0] in ("scale", "columns"):  # scores mode's options
        del config["testset"], config["runs"]
        config["scores"] = "scores.csv"
        config["columns"] = {"segment": "seg", "system": "sys", "run": "run", "metrics": ["ter"]}
    node = config
    for part in option[:-1]:
        node = node.setdefault(part, {})
    node[option[-1]] = value
    with pytest.raises(InputError) as err:
        check_config(config)
    message = str(err.value)
    assert "not valid under any" not in message, message
    assert expected in message, message


def test_semicolon_separated_file_is_refused_saying_so(tmp_path: Path) -> None:
    """Refused as a missing column, with the whole header shown as one column's name."""
    scores = tmp_path / "scores.csv"
    scores.write_text("seg;sys;rep;m\ns0;A;0;0.3\n")
    columns = ScoresColumns("seg", "sys", ("sys", "rep"), ("m",))
    with pytest.raises(InputError) as err:
        read_scores_table(scores, columns)
    assert "looks ';'-separated" in str(err.value), str(err.value)
    sheet = tmp_path / "runs.tsv"
    sheet.write_text("run_id;system;hypotheses\na1;A;h.txt\n")
    with pytest.raises(InputError) as err:
        read_runs_sheet(sheet)
    assert "looks ';'-separated" in str(err.value), str(err.value)
