"""End-to-end: an input whose content changed is reread whatever its mtime (content, not clocks).

A hypotheses file, test set or scores file replaced by other bytes with an older or the same
mtime (``cp -p``, ``touch -d 2020-01-01``, a same-size edit with the mtime restored) is rescored
and refitted, and ``inputs.csv`` lists the SHA-256 of the bytes that produced the tables.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from workflow_helpers import (
    MiniExperiment,
    job_counts,
    make_mini_experiment,
    run_snakemake,
    write_scores,
)

pytestmark = pytest.mark.e2e

TARGETS = ("results/evaluation.parquet", "results/tables/inputs.csv")
OLD = "2020-01-01"


def planned(root: Path) -> dict[str, int]:
    """The jobs a dry run for TARGETS would execute now."""
    dry = run_snakemake(root, "--dry-run", targets=TARGETS)
    assert dry.returncode == 0, dry.stderr[-3000:]
    return job_counts(dry.stdout)


def run_to_the_end(root: Path) -> None:
    result = run_snakemake(root, targets=TARGETS)
    assert result.returncode == 0, result.stderr[-3000:]


def listed_sha256(root: Path, name: str) -> str:
    inputs = pd.read_csv(root / "results/tables/inputs.csv", dtype=str)
    return inputs.set_index("path").loc[name, "sha256"]


def copy_preserving_old_mtime(path: Path, text: str) -> None:
    """``cp -p`` of a file with new content whose mtime is older than every output."""
    source = path.with_name(path.name + ".new")
    source.write_text(text)
    subprocess.run(["touch", "-d", OLD, str(source)], check=True)
    subprocess.run(["cp", "-p", str(source), str(path)], check=True)
    source.unlink()


def edit_then_backdate(path: Path, text: str) -> None:
    """Edit a file, then ``touch -d 2020-01-01`` it."""
    path.write_text(text)
    subprocess.run(["touch", "-d", OLD, str(path)], check=True)


def same_size_same_mtime(path: Path, text: str) -> None:
    """Replace the content by as many bytes, and restore the file's mtime."""
    before = path.stat()
    assert len(text.encode()) == before.st_size
    path.write_text(text)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


CHANGES: dict[str, Callable[[Path, str], None]] = {
    "cp -p": copy_preserving_old_mtime,
    "touch -d 2020-01-01": edit_then_backdate,
    "same size, same mtime": same_size_same_mtime,
}


def changed_text(path: Path) -> str:
    """The file's text with its first line's first letter swapped for another (same size)."""
    text = path.read_text()
    swap = "q" if text[0] != "q" else "z"
    return swap + text[1:]


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def raw(tmp_path_factory: pytest.TempPathFactory) -> MiniExperiment:
    root = tmp_path_factory.mktemp("content") / "exp"
    exp = make_mini_experiment(root, n_segments=10, metrics=("ter",), properties=("length",))
    run_to_the_end(exp.root)
    return exp


@pytest.mark.parametrize("change", list(CHANGES))
def test_changed_hypotheses_are_rescored_whatever_their_mtime(
    raw: MiniExperiment, change: str
) -> None:
    path = raw.root / "hyps" / "comp_s1.txt"
    scored = raw.root / "results/scores/comp_s1/ter.parquet"
    scored_at = scored.stat().st_mtime_ns
    CHANGES[change](path, changed_text(path))
    counts = planned(raw.root)
    assert counts.get("score_run") == 1, counts
    assert counts.get("assemble") == 1 and counts.get("report_provenance") == 1, counts
    assert "prepare_testset" not in counts and "prepare_runs" not in counts
    run_to_the_end(raw.root)
    if change == "cp -p":  # the params trigger settles: nothing left to do after the rerun
        assert planned(raw.root) == {}
    assert listed_sha256(raw.root, "hyps/comp_s1.txt") == sha256_of(path)
    assert scored.stat().st_mtime_ns > scored_at


def test_changed_testset_is_reread_despite_an_older_mtime(raw: MiniExperiment) -> None:
    path = raw.root / "testset.tsv"
    lines = path.read_text().splitlines()
    source, reference = lines[1].split("\t")[1:]
    lines[1] = f"s000\t{source}\tan entirely new reference."
    copy_preserving_old_mtime(path, "\n".join(lines) + "\n")
    counts = planned(raw.root)
    assert counts.get("prepare_testset") == 1, counts
    assert counts.get("score_run") == 4 and counts.get("properties") == 1, counts
    run_to_the_end(raw.root)
    assert listed_sha256(raw.root, "testset.tsv") == sha256_of(path)


def scores(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        [
            {"seg": f"s{seg}", "sys": system, "seed": run, "bleurt": round(rng.random(), 6)}
            for system in ("base", "comp")
            for run in (1, 2)
            for seg in range(8)
        ]
    )


@pytest.fixture(scope="module")
def scores_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("content-scores")
    write_scores(root / "scores.csv", scores(1))
    config = {
        "scores": "scores.csv",
        "columns": {"segment": "seg", "system": "sys", "run": ["sys", "seed"]},
        "better": {"bleurt": "higher"},
        "baseline": "base",
    }
    config["columns"]["metrics"] = ["bleurt"]
    (root / "config.yaml").write_text(yaml.safe_dump(config))
    run_to_the_end(root)
    return root


@pytest.mark.parametrize("change", list(CHANGES))
def test_changed_scores_are_reimported_whatever_their_mtime(scores_root: Path, change: str) -> None:
    path = scores_root / "scores.csv"
    text = path.read_text()
    lines = text.splitlines()
    # a new score of the same width in the first data row's last field
    old_value = lines[1].rsplit(",", 1)[1]
    new_value = "0." + "".join("7" if c != "7" else "3" for c in old_value[2:])
    lines[1] = lines[1][: -len(old_value)] + new_value
    CHANGES[change](path, "\n".join(lines) + ("\n" if text.endswith("\n") else ""))
    counts = planned(scores_root)
    assert counts.get("import_scores") == 1 and counts.get("report_provenance") == 1, counts
    run_to_the_end(scores_root)
    assert listed_sha256(scores_root, "scores.csv") == sha256_of(path)
    evaluation = pd.read_parquet(scores_root / "results/evaluation.parquet")
    assert float(new_value) in set(evaluation["bleurt"].round(6))


def test_unchanged_content_with_a_new_mtime_lists_the_same_checksum(raw: MiniExperiment) -> None:
    path = raw.root / "hyps" / "base_s1.txt"
    before = listed_sha256(raw.root, "hyps/base_s1.txt")
    shutil.copy(path, path.with_name("copy"))
    os.replace(path.with_name("copy"), path)
    run_to_the_end(raw.root)
    assert listed_sha256(raw.root, "hyps/base_s1.txt") == before == sha256_of(path)
