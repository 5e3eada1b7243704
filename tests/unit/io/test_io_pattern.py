"""Runs from a path pattern (infrepro.io.pattern; docs/reference.md, Inputs): the files matched
as snakemake.io.glob_wildcards matches them, run ids from the wildcards' values, dev scores from
a file per run, and every refusal before any job runs, naming the option, the pattern or the
file."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
import yaml
from workflow_helpers import make_mini_experiment

from infrepro.experiment.kept import kept_experiment
from infrepro.experiment.load import load_experiment
from infrepro.io.config import check_config
from infrepro.io.errors import InputError
from infrepro.io.ledger import SUFFIX, ledger_path
from infrepro.io.pattern import (
    LEDGER_NAME,
    derive_runs,
    find_runs,
    is_pattern,
    parse_pattern,
)

PATTERN = "outputs/{system}/{seed}.txt"


def write(root: Path, *paths: str, text: str = "x\n") -> None:
    for path in paths:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)


def runs_of(pattern: str, dev: str | None = None) -> list[list]:
    parsed = parse_pattern(pattern)
    return derive_runs(parsed, find_runs(parsed), dev).sheet()


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, *(f"outputs/{s}/{n}.txt" for s in ("base", "comp") for n in (1, 2)))
    return tmp_path


def test_a_pattern_is_a_runs_value_with_a_wildcard() -> None:
    assert is_pattern(PATTERN) and is_pattern("out/{system,[a-z]+}/hyps.txt")
    assert not is_pattern("config/runs.tsv") and not is_pattern(None)


def test_the_files_are_those_glob_wildcards_finds(tree: Path) -> None:
    """The same regular expression as Snakemake's: constraints, a repeated wildcard, a wildcard
    that matches across folders; files only (glob_wildcards lists folders too)."""
    from snakemake.io import glob_wildcards

    write(tree, "outputs/comp/x/3.txt", "outputs/base/7/7.txt", "outputs/base/7/8.txt")
    write(tree, "outputs/a1/b2.txt", "outputs/a1/b2.tsv")
    for pattern in (
        PATTERN,
        "outputs/{system,[a-z]+}/{seed}.txt",
        "outputs/{system}/{seed}/{seed}.txt",
        "outputs/{system}/b{seed,[0-9]}.txt",
    ):
        found = find_runs(parse_pattern(pattern))
        names = parse_pattern(pattern).wildcards
        expected = glob_wildcards(pattern)
        snakemake = sorted(zip(*(getattr(expected, n) for n in names), strict=True))
        assert sorted(tuple(m.values[n] for n in names) for m in found) == snakemake, pattern


def test_run_ids_join_the_values_the_system_first(tree: Path) -> None:
    write(tree, "runs/1/base.lr=0.5.txt")
    header, *rows = runs_of("runs/{seed}/{system}.lr={lr}.txt")
    assert header == ["run_id", "system", "hypotheses", "seed", "lr"]
    assert rows == [["base_1_0.5", "base", "runs/1/base.lr=0.5.txt", "1", "0.5"]]
    header, *rows = runs_of(PATTERN)
    assert [r[0] for r in rows] == ["base_1", "base_2", "comp_1", "comp_2"]
    assert rows[0][2] == "outputs/base/1.txt"  # relative to the experiment folder


def test_names_in_any_script_are_run_ids(tree: Path) -> None:
    """Letters of any script name a system and its runs' files (a user trial found Γάμμα
    refused, by a message that said letters were allowed)."""
    write(tree, "outputs/Γάμμα/1.txt", "outputs/modèle/1.txt", "outputs/名前/2.txt")
    header, *rows = runs_of(PATTERN)
    found = {r[0]: r[1] for r in rows}
    assert found["Γάμμα_1"] == "Γάμμα" and found["modèle_1"] == "modèle"
    assert found["名前_2"] == "名前"


def test_hidden_files_and_the_ledger_are_no_runs(tree: Path) -> None:
    write(tree, "outputs/.cache/1.txt", "outputs/comp/.1.txt.swp", "outputs/runs.ledger.tsv")
    assert LEDGER_NAME.endswith(SUFFIX)
    assert ledger_path(PATTERN) == Path("outputs/runs.ledger.tsv")
    assert ledger_path("{system}/{seed}.txt") == Path("runs.ledger.tsv")
    assert len(runs_of(PATTERN)) == 1 + 4
    with pytest.raises(InputError, match="matches no file"):  # but for the ledger
        find_runs(parse_pattern("outputs/{system,[^/]+}.{ext}"))


def test_a_pattern_without_system_is_refused_naming_option_and_pattern() -> None:
    with pytest.raises(InputError, match=r"^<config>: runs 'outputs/\{seed\}.txt' .*\{system\}"):
        parse_pattern("outputs/{seed}.txt")


@pytest.mark.parametrize("name", ["run_id", "hypotheses", "dev_score", "segment_id"])
def test_a_wildcard_named_as_a_reserved_column_is_refused(name: str) -> None:
    with pytest.raises(InputError, match=f"the wildcard {{{name}}} has the name of a column"):
        parse_pattern(f"out/{{system}}/{{{name}}}.txt")


def test_a_pattern_matching_nothing_is_refused_naming_it(tree: Path) -> None:
    with pytest.raises(InputError, match=r"runs 'outputs/\{system\}/\{seed\}.hyp' matches no"):
        find_runs(parse_pattern("outputs/{system}/{seed}.hyp"))
    with pytest.raises(InputError, match="its folder does not exist"):
        find_runs(parse_pattern("elsewhere/{system}/{seed}.txt"))


def test_two_files_for_one_run_are_refused_naming_both(tree: Path) -> None:
    write(tree, "outputs/a_b/1.txt", "outputs/a/b_1.txt")
    with pytest.raises(InputError, match="two files for run 'a_b_1'") as err:
        runs_of(PATTERN)
    assert "outputs/a/b_1.txt and outputs/a_b/1.txt" in str(err.value)


def test_a_value_across_folders_is_refused_naming_the_file(tree: Path) -> None:
    write(tree, "outputs/comp/old/1.txt")
    with pytest.raises(InputError, match=r"^outputs/comp/old/1.txt: .*spans folders"):
        runs_of(PATTERN)
    within = "outputs/{system,[^/]+}/{seed,[^/]+}.txt"  # each wildcard within one folder
    assert len(runs_of(within)) == 1 + 4


@pytest.mark.parametrize(
    ("path", "problem"),
    [
        ("outputs/my model/1.txt", "U+0020"),
        ("outputs/mode\u0300le/1.txt", "U+0300"),  # decomposed (NFD): a combining accent
        ("outputs/_base/1.txt", "must start with a letter or digit"),
        ("outputs/comp/=1+1.txt", "spreadsheet formulas"),
    ],
)
def test_a_value_that_cannot_be_part_of_a_run_id_is_refused(
    tree: Path, path: str, problem: str
) -> None:
    write(tree, path)
    with pytest.raises(InputError, match=f"^{re.escape(path)}: runs ") as err:
        runs_of(PATTERN)
    assert problem in str(err.value)


def test_dev_scores_come_from_a_file_per_run(tree: Path) -> None:
    for index, run in enumerate(("base/1", "base/2", "comp/1", "comp/2")):
        write(tree, f"outputs/{run}.dev", text=f" {0.5 + index / 10}\n")
    header, *rows = runs_of(PATTERN, "outputs/{system}/{seed}.dev")
    assert header[3] == "dev_score" and [r[3] for r in rows] == [0.5, 0.6, 0.7, 0.8]
    # a dev-score file the runs pattern also matches is no run
    for run in ("base/1", "base/2", "comp/1", "comp/2"):
        write(tree, f"outputs/{run}.dev.txt", text="0.5")
    assert len(runs_of(PATTERN, "outputs/{system}/{seed}.dev.txt")) == 1 + 4


def test_dev_score_refusals_name_the_file_or_the_option(tree: Path) -> None:
    write(tree, "outputs/base/1.dev", "outputs/base/2.dev", "outputs/comp/1.dev", text="0.5")
    with pytest.raises(InputError, match=r"^outputs/comp/2.dev: runs_dev_scores: .*not found"):
        runs_of(PATTERN, "outputs/{system}/{seed}.dev")
    write(tree, "outputs/comp/2.dev", text="nan")
    with pytest.raises(InputError, match=r"^outputs/comp/2.dev: .*'nan' is not a finite number"):
        runs_of(PATTERN, "outputs/{system}/{seed}.dev")
    with pytest.raises(InputError, match=r"^<config>: runs_dev_scores 'dev/\{system\}.txt' must"):
        runs_of(PATTERN, "dev/{system}.txt")


@pytest.fixture
def pattern_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    """The mini experiment with its hypotheses files moved to outputs/<system>/<seed>.txt."""
    experiment = make_mini_experiment(tmp_path, n_segments=5, metrics=("ter",), properties=())
    monkeypatch.chdir(tmp_path)
    for line in experiment.runs_path.read_text().splitlines()[1:]:
        run, system, hyp, _, seed = line.split("\t")
        write(tmp_path, f"outputs/{system}/{seed}.txt", text=(tmp_path / hyp).read_text())
    config = yaml.safe_load(experiment.config_path.read_text())
    config["runs"] = PATTERN
    del config["analyses"]
    check_config(config)
    return json.loads(json.dumps(config))


def test_the_experiment_of_a_pattern_is_that_of_its_runs_sheet(pattern_config: dict) -> None:
    experiment = load_experiment(pattern_config)
    assert experiment.run_ids == ["base_1", "base_2", "comp_1", "comp_2"]
    assert experiment.facets == ["seed"] and experiment.systems == ["base", "comp"]
    assert experiment.hypotheses_path("comp_2") == "outputs/comp/2.txt"
    assert experiment.derived_sheet[0] == ["run_id", "system", "hypotheses", "seed"]
    assert "runs.tsv" not in experiment.inputs and "outputs/comp/2.txt" in experiment.inputs


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"look_column": "seed"}, "look_column names a column of a runs sheet, but runs"),
        ({"runs": "runs.tsv", "runs_dev_scores": "x/{system}"}, "is a runs sheet: give its dev"),
    ],
)
def test_options_of_the_other_form_of_runs_are_refused(
    pattern_config: dict, change: dict, message: str
) -> None:
    with pytest.raises(InputError, match=message):
        load_experiment(pattern_config | change)


def test_dev_scores_of_a_pattern_need_their_direction(pattern_config: dict) -> None:
    for run in ("base/1", "base/2", "comp/1", "comp/2"):
        write(Path.cwd(), f"outputs/{run}.dev", text="1")
    config = pattern_config | {"runs_dev_scores": "outputs/{system}/{seed}.dev"}
    with pytest.raises(InputError, match="runs_dev_scores 'outputs/{system}/{seed}.dev'"):
        load_experiment(config)
    config["analyses"] = {**config["analyses"], "dev_score_better": "lower"}
    experiment = load_experiment(config)
    assert experiment.derived_sheet[0][3] == "dev_score"
    assert "outputs/comp/2.dev" in experiment.inputs


def test_runs_dev_scores_in_scores_mode_is_refused() -> None:
    config = {"scores": "s.csv", "columns": {}, "runs_dev_scores": "x/{system}"}
    with pytest.raises(InputError, match="in scores mode the dev score is a column"):
        load_experiment(config)


def test_a_parse_finds_the_files_once_and_a_new_file_is_a_new_run(
    pattern_config: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One walk of the outputs per parse; the kept check serves a parse only while the pattern
    finds the same files."""
    walks = []
    original = os.walk
    monkeypatch.setattr(os, "walk", lambda top, **kw: walks.append(top) or original(top, **kw))
    store = ".snakemake/infrepro/experiment.json"
    first = kept_experiment(pattern_config, check_hypotheses=True, path=store)
    assert walks == ["outputs"]
    again = kept_experiment(pattern_config, check_hypotheses=True, path=store)
    assert walks == ["outputs"] * 2 and again == first
    write(Path.cwd(), "outputs/comp/3.txt", text=Path("outputs/comp/2.txt").read_text())
    more = kept_experiment(pattern_config, check_hypotheses=True, path=store)
    assert walks == ["outputs"] * 3 and more.run_ids == [*first.run_ids, "comp_3"]
    assert more == load_experiment(pattern_config)


@pytest.mark.parametrize("char", ["\u202e", "\u200b", "\ufeff"])
def test_a_refusal_writes_the_paths_invisible_characters_as_escapes(tree: Path, char: str) -> None:
    """A folder named with a right-to-left override was printed raw at the start of the
    refusal, reversing the rest of the line in the terminal (found in a user trial)."""
    write(tree, f"outputs/ab{char}cd/1.txt")
    with pytest.raises(InputError) as err:
        runs_of(PATTERN)
    escaped = f"\\u{ord(char):04x}"
    assert char not in str(err.value)
    assert str(err.value).startswith(f"outputs/ab{escaped}cd/1.txt: runs ")
