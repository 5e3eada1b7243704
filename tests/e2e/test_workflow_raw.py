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


def scored(root: Path) -> dict[str, int]:
    """Each score file (``<run>/<metric>.parquet``) with its modification time."""
    folder = root / "results/scores"
    return {
        p.relative_to(folder).as_posix(): p.stat().st_mtime_ns
        for p in folder.rglob("*")
        if p.is_file()
    }


def test_new_run_scores_only_that_run(tmp_path: Path) -> None:
    experiment = make_mini_experiment(tmp_path / "exp", n_segments=12)
    assert run_snakemake(experiment.root, targets=(EVALUATION,)).returncode == 0
    old_scores = scored(experiment.root)
    experiment.add_run("comp_s3", "comp", "3", rng_seed=303)

    dry = run_snakemake(experiment.root, "--dry-run", targets=(EVALUATION,))
    assert dry.returncode == 0, dry.stderr
    counts = job_counts(dry.stdout)
    assert counts == {"score_run": 1, "prepare_runs": 1, "assemble": 1}, dry.stdout
    assert "results/scores/comp_s3/ter.parquet" in dry.stdout

    result = run_snakemake(experiment.root, targets=(EVALUATION,))
    assert result.returncode == 0, result.stderr[-3000:]
    new_scores = scored(experiment.root)
    metrics = experiment.config()["metrics"]
    assert set(new_scores) - set(old_scores) == {f"comp_s3/{m}.parquet" for m in metrics}
    assert all(new_scores[name] == mtime for name, mtime in old_scores.items())
    table = pd.read_parquet(experiment.root / EVALUATION)
    assert table["run_id"].nunique() == 5


def test_removing_a_metric_rescores_no_run(tmp_path: Path) -> None:
    """A scoring job's files are one per metric it computes, and no metric list is among its
    params: removing a metric (or reordering the rest) reruns no score_run job, where it used
    to rescore every run; adding one scores every run again (each lacks that metric's file)."""
    experiment = make_mini_experiment(tmp_path / "exp", n_segments=8, metrics=("ter", "rouge1"))
    assert run_snakemake(experiment.root, targets=(EVALUATION,)).returncode == 0
    before = scored(experiment.root)
    runs = len(pd.read_csv(experiment.runs_path, sep="\t", dtype=str))

    def planned(metrics: list[str]) -> dict[str, int]:
        experiment.write_config({**experiment.config(), "metrics": metrics})
        dry = run_snakemake(experiment.root, "--dry-run", targets=(EVALUATION,))
        assert dry.returncode == 0, dry.stderr[-3000:]
        return job_counts(dry.stdout)

    for metrics in (["ter"], ["rouge1", "ter"]):
        counts = planned(metrics)
        assert "score_run" not in counts, (metrics, counts)
    assert run_snakemake(experiment.root, targets=(EVALUATION,)).returncode == 0
    assert scored(experiment.root) == before  # nothing was scored again
    assert list(pd.read_parquet(experiment.root / EVALUATION).columns[-2:]) == ["rouge1", "ter"]
    assert planned(["rouge1", "ter", "chrf"]).get("score_run") == runs
