"""Scores mode: a metric's scale is declared, never guessed, and checked against the scores'
range both ways (fraction, points, a bounded raw scale). Scores on a 0-100 scale read as
fractions were once shown x 100 as "points" (a BLEU of 35 as 3500 points); now they are refused
at start-up naming the file, line, column and the fix, and ``scale: {metric: points}`` reads them
as the same fractions the tables hold for every other metric."""

from __future__ import annotations

import copy
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from infrepro.core.catalog import RAW, Scale
from infrepro.experiment import load_experiment
from infrepro.io import InputError
from infrepro.io.scores import check_scale
from infrepro.report.formatting import points

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
    assert message.startswith(f"{path}:2: column 'mscore': scores of metric 'mscore': ")
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


# -- the scale checked by the data's range, both ways (issue 30, item 3) -------------------------
# Generated score columns of each kind, with the declaration that fits them (the right one) and
# the advice a wrong declaration must give; kinds as the issue saw them: fractions (with a few
# TER segments above 1), 0-100 points with a low median (weak systems' sentence BLEU), 1-k
# ratings, and negative scores (COMET-like) on either scale.
RIGHT = {
    "fraction": "fraction",
    "negative fraction": "fraction",
    "points": "points",
    "points, low median": "points",
    "negative points": "points",
    "rating": "raw",
}
DECLARATIONS = ("undeclared", "fraction", "points", "raw 1-5")


@st.composite
def score_column(draw: st.DrawFn) -> tuple[str, np.ndarray, int]:
    """(kind, scores, the top of a rating scale): 50-400 scores of one kind."""
    kind = draw(st.sampled_from(sorted(RIGHT)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n = draw(st.integers(50, 400))
    top = draw(st.sampled_from([5, 7, 10]))
    if kind == "fraction":
        values = rng.beta(2, 3, n)
        values[: n // 200] += 1.0  # a TER above 1 on under 1 % of the segments
    elif kind == "negative fraction":
        values = np.clip(rng.normal(draw(st.floats(-0.5, 0.6)), 0.4, n), -1.9, 1.2)
    elif kind == "points":
        values = rng.uniform(0, 100, n)
    elif kind == "points, low median":  # median about 1, max 83 or so: the issue's case
        values = rng.exponential(draw(st.floats(0.3, 1.5)), n)
        tail = max(3, int(draw(st.floats(0.03, 0.4)) * n))
        values[:tail] = rng.uniform(2.5, 100, tail)
    elif kind == "negative points":
        values = np.clip(rng.normal(draw(st.floats(-50, 60)), 40, n), -190, 120)
    else:  # ratings 1..top, each end present
        values = rng.integers(1, top + 1, n).astype(float)
        values[:2] = [1, top]
    return kind, np.round(rng.permutation(values), 4), top


def declared_as(declaration: str) -> Scale | None:
    if declaration == "undeclared":
        return None
    return Scale(RAW, 1.0, 5.0) if declaration == "raw 1-5" else Scale(declaration)


def right_declaration(kind: str, top: int) -> Scale:
    return Scale(RAW, 1.0, float(top)) if RIGHT[kind] == RAW else Scale(RIGHT[kind])


def advice(kind: str, top: int) -> str:
    """The option a refusal must name for this kind of scores."""
    if RIGHT[kind] == RAW:
        return f"scale: {{m: {{raw: [1, {top}]}}}}"
    if RIGHT[kind] == "points":
        return "scale: {m: points}"
    return "fraction"


def shown(stored_mean: float) -> str:
    """The report's and the paper table's rendering of a stored mean (formatting.points)."""
    return points(stored_mean)


@settings(max_examples=300, deadline=None, database=None, derandomize=True)
@given(score_column(), st.sampled_from(DECLARATIONS))
def test_every_wrong_scale_is_refused_or_noted_with_the_fitting_option_and_right_ones_show_as_given(
    column: tuple[str, np.ndarray, int], declaration: str
) -> None:
    """Undeclared (fraction assumed) scores that are no fractions, and scores outside a raw
    scale, are refused; a declared fraction or points scale wins with a note (issue 42, item
    10); either names the option that fits the scores."""
    kind, values, top = column
    scores = pd.Series(values)
    scale = declared_as(declaration)
    right = right_declaration(kind, top)
    taken = scale or Scale("fraction")
    if taken == right or (taken.name == RAW and right.name == RAW and top == 5):
        assert check_scale(scores, scale, "s.csv", "m") is None
    elif scale is None or scale.name == RAW:
        with pytest.raises(InputError) as err:
            check_scale(scores, scale, "s.csv", "m")
        message = str(err.value)
        assert re.match(r"s\.csv:\d+: column 'm': scores of metric 'm': ", message), message
        assert advice(kind, top) in message, message
        line = int(message.split(":")[1])
        assert f"{values[line - 2]:g} (line {line})" in message  # an offending value, its line
    else:
        note = check_scale(scores, scale, "s.csv", "m")
        assert note is not None
        assert note.startswith("s.csv: column 'm': scores of metric 'm': "), note
        assert f"the declared scale.m: {scale} is used" in note, note
        fitting = "remove scale.m" if RIGHT[kind] == "fraction" else advice(kind, top)
        assert fitting in note, note
    # the right declaration is accepted, and the tables' value shows as the score as given:
    # fractions x 100 (as points), points and raw scores unchanged, never / 100 or x 100 again
    assert check_scale(scores, right, "s.csv", "m") is None
    stored = float((scores / right.given_per_stored).mean())
    expected = float(values.mean()) * (100.0 if right.name == "fraction" else 1.0)
    assert shown(stored) == points(expected / 100.0)
    assert abs(float(shown(stored).replace("\u2212", "-")) - expected) <= 0.005 + 1e-9 * abs(
        expected
    )


def test_the_issues_sentence_bleu_of_a_weak_system_is_refused_as_fractions() -> None:
    """0-100 scores with a median of 1.2 and a maximum of 83 were shown as 1861.97 points."""
    rng = np.random.default_rng(3)
    values = np.concatenate([rng.exponential(1.0, 180), rng.uniform(2.5, 83, 20)])
    values *= 1.2 / np.median(values)
    values = np.minimum(values, 83.0)  # the upper tail only: the median stays
    values[np.argmax(values)] = 83.0
    assert abs(np.median(values) - 1.2) < 1e-9 and values.max() == 83.0
    with pytest.raises(InputError, match=r"if they are on a 0-100 scale, set scale: \{m: points\}"):
        check_scale(pd.Series(values), None, "s.csv", "m")


def test_raw_scale_bounds_must_increase(tmp_path: Path) -> None:
    experiment = generate(6)
    path = tmp_path / "scores.csv"
    experiment.scores.to_csv(path, index=False)
    config = with_all_defaults(experiment.config(str(path), ["summary"]))
    config |= {"incomplete_runs": "reject", "scale": {"mscore": {"raw": [5, 1]}}}
    with pytest.raises(InputError, match=r"scale.mscore.raw is \[5, 1\]; give the lowest"):
        load_experiment(config)


def test_a_raw_scale_is_stored_like_points_and_shown_as_given_without_points(
    tmp_path: Path,
) -> None:
    """1-5 ratings on `{raw: [1, 5]}`: the tables hold rating / 100, the report's numbers show
    the rating itself and its unit is no longer "points"."""
    from infrepro.experiment import import_scores
    from infrepro.io import ScoresColumns
    from infrepro.report import ReportSettings

    experiment = generate(7)
    rng = np.random.default_rng(7)
    ratings = rng.integers(1, 6, len(experiment.scores)).astype(float)
    experiment.scores["mscore"] = ratings
    path = tmp_path / "scores.csv"
    experiment.scores.to_csv(path, index=False)
    config = with_all_defaults(experiment.config(str(path), ["summary"]))
    config |= {"incomplete_runs": "reject", "scale": {"mscore": {"raw": [1, 5]}}}
    loaded = load_experiment(config)
    assert loaded.units == {"mscore": ""}
    settings = ReportSettings("x", loaded.baseline, loaded.systems, ["mscore"], loaded.better)
    assert settings.unit("mscore") == "points"  # without units: the default
    settings = ReportSettings(
        "x", loaded.baseline, loaded.systems, ["mscore"], loaded.better, units=loaded.units
    )
    assert settings.unit("mscore") == "as given"
    evaluation, _, _ = import_scores(
        str(path), ScoresColumns.from_config(config["columns"]), scale=config["scale"]
    )
    assert np.allclose(sorted(evaluation["mscore"].to_numpy() * 100), sorted(ratings))
    assert points(float(evaluation["mscore"].mean())) == points(float(ratings.mean()) / 100)
    assert float(points(float(evaluation["mscore"].mean()))) == round(float(ratings.mean()), 2)
