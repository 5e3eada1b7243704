"""End-to-end: new seeds, a changed hypotheses file and a changed analysis option rerun only
what they must (issue: "New seeds arrive"); an edited rule script reruns its rule."""

from __future__ import annotations

from pathlib import Path

import pytest
from workflow_helpers import (
    MiniExperiment,
    copy_workflow,
    job_counts,
    make_mini_experiment,
    run_snakemake,
)

from infrepro.analyses import ANALYSES

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def experiment(tmp_path_factory: pytest.TempPathFactory) -> MiniExperiment:
    # One metric and one property: each analysis job per metric is what reruns; one is enough.
    root = tmp_path_factory.mktemp("incremental") / "exp"
    exp = make_mini_experiment(root, n_segments=10, metrics=("ter",), properties=("length",))
    result = run_snakemake(exp.root)
    assert result.returncode == 0, result.stderr[-4000:]
    return exp


def planned(exp: MiniExperiment) -> dict[str, int]:
    """The jobs a dry run would execute now."""
    dry = run_snakemake(exp.root, "--dry-run")
    assert dry.returncode == 0, (dry.stdout + dry.stderr)[-3000:]
    return job_counts(dry.stdout)


def score_mtimes(exp: MiniExperiment) -> dict[str, int]:
    """Each run's score files (``<run>/<metric>.parquet``) with their modification times."""
    folder = exp.root / "results/scores"
    return {
        p.relative_to(folder).as_posix(): p.stat().st_mtime_ns for p in folder.rglob("*.parquet")
    }


def test_nothing_to_do_after_a_full_run(experiment: MiniExperiment) -> None:
    assert planned(experiment) == {}


def test_two_new_seeds_score_two_runs_and_refit(experiment: MiniExperiment) -> None:
    before = score_mtimes(experiment)
    experiment.add_run("comp_s3", "comp", "3", rng_seed=303)
    experiment.add_run("comp_s4", "comp", "4", rng_seed=304)
    counts = planned(experiment)
    n_metrics = len(experiment.config()["metrics"])
    assert counts["score_run"] == 2
    assert counts["assemble"] == 1
    for analysis in ANALYSES:
        assert counts[f"analysis_{analysis}"] == n_metrics, analysis
    assert "prepare_testset" not in counts and "properties" not in counts
    result = run_snakemake(experiment.root)
    assert result.returncode == 0, result.stderr[-3000:]
    after = score_mtimes(experiment)
    metrics = experiment.config()["metrics"]
    assert set(after) - set(before) == {
        f"{r}/{m}.parquet" for r in ("comp_s3", "comp_s4") for m in metrics
    }
    assert all(after[name] == mtime for name, mtime in before.items())
    assert planned(experiment) == {}


def test_changed_hypotheses_rescore_only_that_run(experiment: MiniExperiment) -> None:
    # A run changed after a look is refused (test_look_ledger); the user who starts the looks
    # over deletes the ledger, as the refusal says. Starting over puts every run at look 1 (the
    # new seeds above were look 2), which prepare_runs records: settle that first, then change
    # a run with the looks started over again; only that run is scored again.
    ledger = experiment.root / "runs.ledger.tsv"
    ledger.unlink()
    assert run_snakemake(experiment.root).returncode == 0
    ledger.unlink()
    path: Path = experiment.root / "hyps" / "base_s2.txt"
    lines = path.read_text().splitlines()
    lines[0] = "a completely different first hypothesis"
    path.write_text("\n".join(lines) + "\n")
    counts = planned(experiment)
    assert counts["score_run"] == 1
    assert "prepare_runs" not in counts and "prepare_testset" not in counts
    assert counts["assemble"] == 1
    result = run_snakemake(experiment.root)
    assert result.returncode == 0, result.stderr[-3000:]


def test_changed_analysis_option_refits_without_rescoring(experiment: MiniExperiment) -> None:
    config = experiment.config()
    config["analyses"]["randomization"] = {"samples": 500, "seed": 7}
    experiment.write_config(config)
    counts = planned(experiment)
    assert "score_run" not in counts and "assemble" not in counts
    # only the analysis that reads the option refits (its registry entry's reads)
    n_metrics = len(config["metrics"])
    assert counts["analysis_classical"] == n_metrics
    assert not any(k.startswith("analysis_") and k != "analysis_classical" for k in counts)


def test_editing_a_rule_script_reruns_its_rule(tmp_path: Path) -> None:
    """Each rule script is an input of its rule: editing scripts/score_run.py (in a scratch copy
    of the workflow) plans every score_run job again, and nothing upstream of it."""
    snakefile = copy_workflow(tmp_path / "workflow")
    exp = make_mini_experiment(
        tmp_path / "exp", n_segments=10, metrics=("ter",), properties=("length",)
    )
    runs = [line.split("\t")[0] for line in exp.runs_path.read_text().splitlines()[1:]]
    targets = tuple(f"results/scores/{run}/ter.parquet" for run in runs)

    def planned_scores() -> dict[str, int]:
        dry = run_snakemake(exp.root, "--dry-run", targets=targets, snakefile=snakefile)
        assert dry.returncode == 0, dry.stderr[-3000:]
        return job_counts(dry.stdout)

    result = run_snakemake(exp.root, targets=targets, snakefile=snakefile)
    assert result.returncode == 0, result.stderr[-4000:]
    assert planned_scores() == {}
    script = snakefile.parent / "scripts" / "score_run.py"
    script.write_text(script.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    assert planned_scores() == {"score_run": len(runs)}
