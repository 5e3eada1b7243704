"""End-to-end: real Snakemake runs of the raw-mode workflow on a tiny generated experiment."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import sacrebleu
from rouge_score import rouge_scorer
from workflow_helpers import MiniExperiment, job_counts, make_mini_experiment, run_snakemake

pytestmark = pytest.mark.e2e

EVALUATION = "results/evaluation.parquet"


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> MiniExperiment:
    """A mini experiment on which the workflow has run to completion once."""
    experiment = make_mini_experiment(tmp_path_factory.mktemp("raw") / "exp")
    result = run_snakemake(experiment.root, targets=(EVALUATION,))
    assert result.returncode == 0, result.stderr[-3000:]
    return experiment


def test_evaluation_table_has_one_row_per_run_and_segment(finished: MiniExperiment) -> None:
    table = pd.read_parquet(finished.root / EVALUATION)
    runs = pd.read_csv(finished.runs_path, sep="\t", dtype=str)
    assert len(table) == len(runs) * finished.n_segments
    assert list(table.columns) == [
        "run_id",
        "system",
        "seed",
        "segment_id",
        "length",
        "readability",
        "word_rarity",
        "length_bin",
        "readability_bin",
        "word_rarity_bin",
        "ter",
        "rouge1",
        "rougeL",
    ]
    assert table.groupby("run_id").size().eq(finished.n_segments).all()


def test_scores_equal_reference_packages(finished: MiniExperiment) -> None:
    table = pd.read_parquet(finished.root / EVALUATION)
    testset = pd.read_csv(finished.root / "testset.tsv", sep="\t", dtype=str)
    references = dict(zip(testset["segment_id"], testset["reference"], strict=True))
    run = table[table["run_id"] == "comp_s2"]
    hypotheses = (finished.root / "hyps" / "comp_s2.txt").read_text().splitlines()
    ter = sacrebleu.metrics.TER()
    scorer = rouge_scorer.RougeScorer(["rouge1", "rougeL"], use_stemmer=True)
    for row, hypothesis in zip(run.itertuples(), hypotheses, strict=True):
        reference = references[row.segment_id]
        assert row.ter == ter.sentence_score(hypothesis, [reference]).score / 100
        rouge = scorer.score(reference, hypothesis)
        assert row.rouge1 == rouge["rouge1"].fmeasure
        assert row.rougeL == rouge["rougeL"].fmeasure


def test_second_run_does_nothing(finished: MiniExperiment) -> None:
    result = run_snakemake(finished.root, "--dry-run", targets=(EVALUATION,))
    assert result.returncode == 0, result.stderr
    assert "Nothing to be done" in result.stdout + result.stderr


def test_new_run_scores_only_that_run(tmp_path: Path) -> None:
    experiment = make_mini_experiment(tmp_path / "exp", n_segments=12)
    assert run_snakemake(experiment.root, targets=(EVALUATION,)).returncode == 0
    old_scores = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "exp/results/scores").iterdir()}
    experiment.add_run("comp_s3", "comp", "3", rng_seed=303)

    dry = run_snakemake(experiment.root, "--dry-run", targets=(EVALUATION,))
    assert dry.returncode == 0, dry.stderr
    counts = job_counts(dry.stdout)
    assert counts == {"score_run": 1, "prepare_runs": 1, "assemble": 1}, dry.stdout
    assert "results/scores/comp_s3.parquet" in dry.stdout

    result = run_snakemake(experiment.root, targets=(EVALUATION,))
    assert result.returncode == 0, result.stderr[-3000:]
    new_scores = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "exp/results/scores").iterdir()}
    assert set(new_scores) - set(old_scores) == {"comp_s3.parquet"}
    assert all(new_scores[name] == mtime for name, mtime in old_scores.items())
    table = pd.read_parquet(experiment.root / EVALUATION)
    assert table["run_id"].nunique() == 5
