"""Metamorphic tests: a user's labels are data, never syntax, and row order is not information.

Each case generates a small scores-mode experiment (tests/label_experiments.py), runs it through
the workflow's own rule scripts in-process (import_scores, analysis, collect_tables: a CSV and
Parquet round trip between jobs), then runs it again with every system, facet, facet level,
metric and property renamed to adversarial strings (numbers, NA, None, _v1_, quotes of both
kinds, backquotes, braces, .., /, unicode, 200 characters), or with the scores file's rows
shuffled, and compares every table.

200 renamed experiments (100 designs, two renamings each) and 20 shuffled ones; each runs one
analysis (the cheap ones most often) so the module stays within about two minutes on one core.
In raw mode (hypotheses scored by the real metrics through the raw rule scripts), 10 renamed
experiments (systems, facets, levels, user properties) and 5 with the test set's and the runs
sheet's rows permuted. Names that only look alike (a system, run, segment, facet level or column
spelt a second time with surrounding whitespace or decomposed) are refused before any table is
written, naming the file, the line of each spelling and both spellings.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from infrepro.core.vocabulary import SEGMENT
from infrepro.io.errors import InputError

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from label_experiments import (  # noqa: E402
    Lookalike,
    assert_same_tables,
    draw_renaming,
    generate,
    generate_raw,
    permute_raw,
    rename,
    rename_raw,
    run_ids,
    run_in_process,
    run_raw_in_process,
    with_lookalike,
    with_lookalike_raw,
)

# the analysis each design runs, in turn: the model-heavy ones less often
ROTATION = (
    *("variance", "classical", "summary") * 3,
    "comparison",
    *("variance", "classical", "summary") * 2,
    "metaparam",
    "budget",
    "summary",
    "conditional",
)
DESIGNS = range(100)
RENAMINGS = 2


@pytest.mark.parametrize("design", DESIGNS)
def test_renaming_every_label_keeps_every_number_and_maps_back(design: int, tmp_path) -> None:
    analysis = ROTATION[design % len(ROTATION)]
    experiment = generate(design)
    base = run_in_process(experiment, tmp_path / "base", [analysis])
    for k in range(RENAMINGS):
        renaming = draw_renaming(experiment, RENAMINGS * design + k)
        renamed = rename(experiment, renaming)
        workdir = tmp_path / f"renamed{k}"
        tables = run_in_process(renamed, workdir, [analysis])
        runs = dict(zip(run_ids(tmp_path / "base"), run_ids(workdir), strict=True))
        assert_same_tables(base, tables, renaming, runs)


@pytest.mark.parametrize("design", range(20))
def test_shuffling_the_scores_rows_keeps_tables_byte_identical(design: int, tmp_path) -> None:
    analysis = ROTATION[design % len(ROTATION)]
    experiment = generate(1000 + design)
    base = run_in_process(experiment, tmp_path / "base", [analysis])
    order = np.random.default_rng(design).permutation(len(experiment.scores))
    experiment.scores = experiment.scores.iloc[order].reset_index(drop=True)
    assert run_in_process(experiment, tmp_path / "shuffled", [analysis]) == base


def test_a_facet_named_like_the_residual_is_refused_up_front(tmp_path) -> None:
    from infrepro.io.errors import InputError

    experiment = next(e for e in map(generate, range(50)) if e.facets)
    facet = experiment.facets[0]
    experiment.scores = experiment.scores.rename(columns={facet: "Residual"})
    experiment.facets[0] = "Residual"
    experiment.levels["Residual"] = experiment.levels.pop(facet)
    with pytest.raises(InputError, match="facet 'Residual' has the name of the model residual"):
        run_in_process(experiment, tmp_path, ["variance"])


RAW_ROTATION = ("variance", "classical", "summary", "metaparam", "comparison")


@pytest.mark.parametrize("design", range(10))
def test_raw_mode_renaming_keeps_every_number_and_maps_back(design: int, tmp_path) -> None:
    """Raw mode: hypotheses scored by the real metrics, a test set with user properties and a
    runs sheet with facets; systems, facets, levels and user properties renamed."""
    analysis = RAW_ROTATION[design % len(RAW_ROTATION)]
    experiment = generate_raw(design)
    base = run_raw_in_process(experiment, tmp_path / "base", [analysis])
    renaming = draw_renaming(experiment, 700 + design)
    tables = run_raw_in_process(rename_raw(experiment, renaming), tmp_path / "renamed", [analysis])
    runs = dict(zip(run_ids(tmp_path / "base"), run_ids(tmp_path / "renamed"), strict=True))
    assert_same_tables(base, tables, renaming, runs)


@pytest.mark.parametrize("design", range(5))
def test_raw_mode_permuting_testset_and_runs_sheet_rows_keeps_tables_byte_identical(
    design: int, tmp_path
) -> None:
    """The test set's rows (each hypotheses file's lines with them) and the runs sheet's rows in
    another order: the same experiment, so the same bytes in every table."""
    analysis = RAW_ROTATION[design % len(RAW_ROTATION)]
    experiment = generate_raw(100 + design)
    base = run_raw_in_process(experiment, tmp_path / "base", [analysis])
    permuted = permute_raw(experiment, design)
    assert list(permuted.testset[SEGMENT]) != list(experiment.testset[SEGMENT])
    assert run_raw_in_process(permuted, tmp_path / "permuted", [analysis]) == base


def assert_refused_naming_both(err: pytest.ExceptionInfo, path: Path, twin: Lookalike) -> None:
    message = str(err.value)
    earlier, later = sorted((twin.first_line, twin.second_line))
    where = f"{path}:{later}: " + ("" if twin.role == "column" else f"column '{twin.column}': ")
    assert message.startswith(where), message
    assert repr(twin.first) in message and repr(twin.second) in message, message
    assert f"(line {earlier})" in message, message
    assert "differ only by invisible characters, surrounding whitespace or Unicode" in message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("raw", "design"), [(False, d) for d in range(15)] + [(True, d) for d in range(8)]
)
def test_names_that_only_look_alike_are_refused_up_front_naming_both(
    raw: bool, design: int, tmp_path: Path
) -> None:
    """Scores mode (15 designs) and raw mode (8): the file and line of both spellings."""
    if raw:
        experiment, twin = with_lookalike_raw(generate_raw(design), design)
        file = "testset.tsv" if twin.role == "segment" else "runs.tsv"
    else:
        experiment, twin = with_lookalike(generate(design), design)
        file = "scores.csv"
    with pytest.raises(InputError) as err:
        (run_raw_in_process if raw else run_in_process)(experiment, tmp_path, ["summary"])
    assert_refused_naming_both(err, tmp_path / file, twin)
    if not raw:
        assert not (tmp_path / "results" / "evaluation.parquet").exists()
