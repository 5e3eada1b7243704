"""Fixtures of the end-to-end tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from workflow_helpers import copy_example, run_snakemake


@pytest.fixture(scope="session")
def example_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled example, run to completion once by `snakemake --cores 2`."""
    root = copy_example(tmp_path_factory.mktemp("example") / "run")
    result = run_snakemake(root, configfile=root / "config" / "config.yaml")
    assert result.returncode == 0, result.stderr[-4000:]
    return root
