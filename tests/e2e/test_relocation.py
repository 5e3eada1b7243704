"""End-to-end: a finished experiment moved or cloned elsewhere reruns nothing (issue 30, item 1),
and files of a metric no longer configured leave results/ (item 2).

Every input is named by its path relative to the experiment folder and identified by its content
(infrepro.io.paths.portable_path; scripts and templates by name and content), so `cp -a` of the
bundled example to a folder at another depth, or a `git clone` of a repository that holds it
(with Snakemake's metadata, which records each input's checksum: git keeps no file times), plans
no job at all, and the outputs stay byte-identical when the location-free jobs are rerun there.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from workflow_helpers import job_counts, make_mini_experiment, run_snakemake

from infrepro.core.vocabulary import file_stem
from infrepro.workflow.outputs import RECORD

pytestmark = pytest.mark.e2e

HEAVY = ("score_run", "properties", "assemble", "import_scores")


def planned(root: Path) -> dict[str, int]:
    dry = run_snakemake(root, "--dry-run", configfile=root / "config" / "config.yaml")
    assert dry.returncode == 0, dry.stderr[-3000:]
    return job_counts(dry.stdout)


def results_bytes(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted((root / "results").rglob("*"))
        if p.is_file()
    }


def assert_nothing_heavy(counts: dict[str, int]) -> None:
    heavy = {k: v for k, v in counts.items() if k in HEAVY or k.startswith("analysis_")}
    assert heavy == {}, counts


def test_a_copied_experiment_at_another_depth_plans_no_job(
    example_run: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "elsewhere" / "two" / "levels" / "exp"
    copy.parent.mkdir(parents=True)
    subprocess.run(["cp", "-a", str(example_run), str(copy)], check=True)
    assert_nothing_heavy(planned(copy))
    assert planned(copy) == {}
    # the jobs that name files (provenance, the list of outputs, the report with its rerun
    # command) rerun in the new place to the same bytes: none records where the experiment lives
    before = results_bytes(copy)
    rerun = run_snakemake(
        copy,
        "--forcerun",
        "report_provenance",
        "prune_outputs",
        "report",
        configfile=copy / "config" / "config.yaml",
    )
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert results_bytes(copy) == before == results_bytes(example_run)


def test_a_git_clone_of_a_finished_experiment_plans_no_job(
    example_run: Path, tmp_path: Path
) -> None:
    source = tmp_path / "repository"
    subprocess.run(["cp", "-a", str(example_run), str(source)], check=True)
    # a repository holding the experiment: its inputs, results and Snakemake's metadata
    for name in ("log", "locks", "incomplete", "auxiliary", "iocache"):
        shutil.rmtree(source / ".snakemake" / name, ignore_errors=True)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "init", "-q", str(source)], check=True)
    subprocess.run([*git, "-C", str(source), "add", "-A", "."], check=True)
    subprocess.run([*git, "-C", str(source), "commit", "-q", "-m", "experiment"], check=True)
    clone = tmp_path / "clone" / "exp"
    clone.parent.mkdir()
    subprocess.run(["git", "clone", "-q", str(source), str(clone)], check=True)
    assert planned(clone) == {}
    assert results_bytes(clone) == results_bytes(example_run)


def test_removing_a_metric_leaves_no_file_of_it_under_results(tmp_path: Path) -> None:
    exp = make_mini_experiment(
        tmp_path / "exp", n_segments=8, metrics=("ter", "chrf"), properties=("length",)
    )
    config = exp.config()
    config["analyses"]["run"] = ["comparison", "summary"]
    exp.write_config(config)
    note = exp.root / "results" / "paper" / "my notes on chrf.md"  # a user's own file
    note.parent.mkdir(parents=True)
    note.write_text("mine")
    first = run_snakemake(exp.root)
    assert first.returncode == 0, first.stderr[-3000:]
    assert (exp.root / "results/paper/chrf.md").is_file()
    config["metrics"] = ["ter"]
    exp.write_config(config)
    second = run_snakemake(exp.root)
    assert second.returncode == 0, second.stderr[-3000:]
    stem = file_stem("chrf")
    left = [
        p.relative_to(exp.root).as_posix()
        for p in (exp.root / "results").rglob("*")
        if stem in p.relative_to(exp.root / "results").parts or p.stem == stem
    ]
    assert left == [], left
    assert note.read_text() == "mine"
    outputs = pd.read_csv(exp.root / "results/tables/outputs.csv")
    removed = set(outputs.loc[outputs["status"] == "removed", "path"])
    assert {"results/paper/chrf.md", "results/paper/chrf.tex"} <= removed
    # the metric's analyses, its paper files and each run's score file of it (scores/<run>/)
    assert all(
        p.startswith(f"results/analyses/{stem}/")
        or "/paper/" in p
        or (p.startswith("results/scores/") and p.endswith(f"/{stem}.parquet"))
        for p in removed
    ), removed
    produced = set(outputs.loc[outputs["status"] == "produced", "path"])
    on_disk = {
        p.relative_to(exp.root).as_posix()
        for p in (exp.root / "results").rglob("*")
        if p.is_file() and p != note and p.name != RECORD
    }
    assert produced == on_disk
    html = (exp.root / "results/report.html").read_text(encoding="utf-8")
    assert "Removed outputs" in html and "results/paper/chrf.md" in html
    assert run_snakemake(exp.root, "--dry-run").stdout.count("prune_outputs") == 0
