"""Scores mode: a metric's scale is declared, never guessed. Scores on a 0-100 scale read as
fractions were once shown x 100 as "points" (a BLEU of 35 as 3500 points); now they are refused
at start-up naming the file, line, column and the fix, and ``scale: {metric: points}`` reads them
as the same fractions the tables hold for every other metric."""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import pytest

from infrepro.experiment import load_experiment
from infrepro.io import InputError

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from label_experiments import generate, run_in_process, with_all_defaults  # noqa: E402


def test_scores_on_a_0_100_scale_are_refused_naming_file_line_column_and_the_fix(
    tmp_path: Path,
) -> None:
    experiment = generate(3)
    path = tmp_path / "scores.csv"
    experiment.scores.to_csv(path, index=False)
    config = experiment.config(str(path), ["summary"])
    del config["scale"]
    with pytest.raises(InputError) as err:
        load_experiment(with_all_defaults(config) | {"incomplete_runs": "reject"})
    message = str(err.value)
    assert message.startswith(f"{path}:2: column 'mscore': scores of metric 'mscore' have a ")
    assert "set scale: {mscore: points}" in message


def test_points_scale_gives_the_tables_of_the_same_scores_as_fractions(tmp_path: Path) -> None:
    experiment = generate(4)
    points = run_in_process(experiment, tmp_path / "points", ["variance", "classical"])
    fractions = copy.deepcopy(experiment)
    fractions.scores["mscore"] = fractions.scores["mscore"] / 100
    original = type(fractions).config

    def fraction_config(self, scores_path: str, analyses) -> dict:
        return original(self, scores_path, analyses) | {"scale": {}}

    fractions.config = fraction_config.__get__(fractions)  # type: ignore[method-assign]
    assert run_in_process(fractions, tmp_path / "fractions", ["variance", "classical"]) == points


@pytest.mark.parametrize("mode", ["scores", "raw"])
def test_scale_of_a_metric_the_experiment_lacks_is_refused(mode: str, tmp_path: Path) -> None:
    experiment = generate(5)
    path = tmp_path / "scores.csv"
    experiment.scores.to_csv(path, index=False)
    config = with_all_defaults(experiment.config(str(path), ["summary"]))
    config |= {"incomplete_runs": "reject", "scale": {"comet": "points"}}
    if mode == "raw":
        config = {k: v for k, v in config.items() if k not in ("scores", "columns")}
        config |= {"testset": "t.tsv", "runs": "r.tsv", "metrics": ["ter"]}
    pattern = "scale.comet is set, but 'comet' is not " + (
        "one of the scores file's metrics" if mode == "scores" else "a metric of a scores file"
    )
    with pytest.raises(InputError, match=pattern):
        load_experiment(config)
