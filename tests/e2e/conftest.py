"""Fixtures of the end-to-end tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from workflow_helpers import REPO_ROOT, run_snakemake


def copy_example(destination: Path) -> Path:
    """Copy the bundled example's config and data so the workflow can run in ``destination``."""
    destination.mkdir(parents=True, exist_ok=True)
    shutil.copytree(REPO_ROOT / "config", destination / "config")
    shutil.copytree(REPO_ROOT / "resources" / "example", destination / "resources" / "example")
    return destination


@pytest.fixture(scope="session")
def example_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled example, run to completion once by `snakemake --cores 2`."""
    root = copy_example(tmp_path_factory.mktemp("example") / "run")
    result = run_snakemake(root, configfile=root / "config" / "config.yaml")
    assert result.returncode == 0, result.stderr[-4000:]
    return root
