"""End-to-end: two clean runs give byte-identical results/ trees, also across --cores 1 and 2."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from workflow_helpers import copy_example, run_snakemake

pytestmark = pytest.mark.e2e
TEST_ARTIFACTS = {"report-screenshot.png"}


def digest_tree(root: Path) -> dict[str, str]:
    """sha256 of every file under results/, by relative path (test artifacts left out)."""
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted((root / "results").rglob("*"))
        if path.is_file() and path.name not in TEST_ARTIFACTS
    }


def test_clean_runs_are_byte_identical_across_core_counts(
    example_run: Path, tmp_path: Path
) -> None:
    second = copy_example(tmp_path / "second")
    result = run_snakemake(second, "--cores", "1", configfile=second / "config/config.yaml")
    assert result.returncode == 0, result.stderr[-3000:]
    first_tree, second_tree = digest_tree(example_run), digest_tree(second)
    assert first_tree.keys() == second_tree.keys()
    differing = [name for name in first_tree if first_tree[name] != second_tree[name]]
    assert differing == []
