"""End-to-end: runs from a path pattern, tried as a new user would (issue 44, acceptance 1).

A fresh folder with a test set and ``outputs/{system}/{seed}.txt`` for 3 systems x 3 seeds, a
config of at most six lines and one ``snakemake --cores 2``: a report, which lists the runs
found; a fourth seed's file reruns exactly one ``score_run`` job and appends a look to the
ledger (``outputs/runs.ledger.tsv``); a pattern with no match is refused before any job runs,
naming the pattern.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from workflow_helpers import corrupt, job_counts, run_snakemake, sentence

pytestmark = pytest.mark.e2e

SYSTEMS = ("base", "comp", "other")
CONFIG = """\
testset: testset.tsv
runs: outputs/{system}/{seed}.txt
baseline: base
metrics: [ter]
properties: [length]
"""
LEDGER = "outputs/runs.ledger.tsv"


def write_run(root: Path, system: str, seed: int) -> None:
    """``outputs/<system>/<seed>.txt``: each reference with words replaced, one per line."""
    references = pd.read_csv(root / "testset.tsv", sep="\t", dtype=str)["reference"]
    rng = np.random.default_rng(100 * SYSTEMS.index(system) + seed)
    path = root / "outputs" / system / f"{seed}.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(corrupt(ref, rng) + "\n" for ref in references))


def fresh_folder(root: Path) -> Path:
    root.mkdir(parents=True)
    rng = np.random.default_rng(7)
    rows = [f"s{i:03d}\t{sentence(rng)}\t{sentence(rng)}" for i in range(24)]
    (root / "testset.tsv").write_text("segment_id\tsource\treference\n" + "\n".join(rows) + "\n")
    for system in SYSTEMS:
        for seed in (1, 2, 3):
            write_run(root, system, seed)
    (root / "config.yaml").write_text(CONFIG)
    return root


def ledger(root: Path) -> pd.DataFrame:
    return pd.read_csv(root / LEDGER, sep="\t", comment="#", dtype=str)


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = fresh_folder(tmp_path_factory.mktemp("pattern") / "my_outputs")
    result = run_snakemake(root)
    assert result.returncode == 0, result.stderr[-4000:]
    return root


def test_a_folder_of_outputs_and_six_lines_of_config_make_a_report(finished: Path) -> None:
    assert len(CONFIG.splitlines()) <= 6
    html = (finished / "results/report.html").read_text()
    runs = pd.read_csv(finished / "results/tables/runs.csv", dtype=str)
    assert list(runs.columns) == ["run_id", "system", "hypotheses", "seed"]
    assert list(runs["run_id"]) == [f"{s}_{n}" for s in SYSTEMS for n in (1, 2, 3)]
    assert runs["hypotheses"].iloc[-1] == "outputs/other/3.txt"
    assert "<code>runs: outputs/{system}/{seed}.txt</code> matched" in html
    assert 'href="tables/runs.csv"' in html
    means = pd.read_csv(finished / "results/tables/run_means.csv", dtype=str)
    assert sorted(means["run_id"]) == sorted(runs["run_id"])
    assert set(means["seed"]) == {"1", "2", "3"}  # the wildcard is a facet
    first = ledger(finished)
    assert len(first) == 9 and set(first["look"]) == {"1"}


def test_a_new_seed_is_one_score_run_job_and_a_new_look(finished: Path, tmp_path: Path) -> None:
    root = tmp_path / "copy"
    shutil.copytree(finished, root, symlinks=True)
    shutil.rmtree(root / ".snakemake" / "locks", ignore_errors=True)
    nothing = run_snakemake(root, "-n")
    assert nothing.returncode == 0, nothing.stderr[-3000:]
    assert job_counts(nothing.stdout) == {}, nothing.stdout[-2000:]
    write_run(root, "comp", 4)
    dry = run_snakemake(root, "-n")
    assert dry.returncode == 0, dry.stderr[-3000:]
    counts = job_counts(dry.stdout)
    assert counts["score_run"] == 1 and "prepare_testset" not in counts, counts
    assert "results/scores/comp_4/ter.parquet" in dry.stdout
    result = run_snakemake(root)
    assert result.returncode == 0, result.stderr[-3000:]
    looks = ledger(root)
    assert len(looks) == 10 and looks.iloc[:9].equals(ledger(finished))
    assert looks.iloc[-1][["look", "run", "name"]].tolist() == ["2", "comp_4", "outputs/comp/4.txt"]
    runs = pd.read_csv(root / "results/tables/runs.csv", dtype=str)
    assert "comp_4" in set(runs["run_id"])
    html = (root / "results/report.html").read_text()  # the header says what changed
    said = "look 2 of an undeclared sequence, recorded in outputs/runs.ledger.tsv; new since"
    assert f"{said} look 1: comp: +1 run</dd>" in html, html[:3000]


def test_a_pattern_with_no_match_is_refused_naming_it(tmp_path: Path) -> None:
    root = fresh_folder(tmp_path / "exp")
    (root / "config.yaml").write_text(CONFIG.replace("{seed}.txt", "{seed}.hyp"))
    result = run_snakemake(root, "-n")
    output = result.stderr + result.stdout
    assert result.returncode != 0
    assert "invalid input: <config>: runs 'outputs/{system}/{seed}.hyp' matches no file" in output
    assert not (root / "results").exists()
