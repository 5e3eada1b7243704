"""Fixtures of the end-to-end tests."""

from __future__ import annotations

import fcntl
import os
import shutil
from pathlib import Path

import pytest
from workflow_helpers import copy_example, run_snakemake

EXAMPLE_FAILED = "example-run-failed.txt"


def shared_temp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A temporary folder all pytest-xdist workers of this session share (the base temp
    folder's parent under xdist, the base temp folder itself without)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def example_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled example, run to completion once per test session by `snakemake --cores 2`.

    Tests that use it only read its results. Under pytest-xdist the workers share the one run:
    the first worker to ask runs it under a file lock, the others wait for the lock and reuse it
    (tests/conftest.py puts the modules that use it on one worker, so none waits).
    """
    shared = shared_temp(tmp_path_factory)
    root = shared / "example" / "run"
    done, failed = shared / "example" / "done", shared / "example" / EXAMPLE_FAILED
    with open(shared / "example.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if failed.is_file():
            pytest.fail(f"the example run failed (in another worker):\n{failed.read_text()}")
        if not done.is_file():
            shutil.rmtree(root.parent, ignore_errors=True)
            copy_example(root)
            result = run_snakemake(root, configfile=root / "config" / "config.yaml")
            if result.returncode != 0:
                failed.write_text(result.stderr[-4000:])
            assert result.returncode == 0, result.stderr[-4000:]
            done.touch()
    return root


SEQUENTIAL_CONFIG = "config/sequential.yaml"  # the bundled example declared as three looks


@pytest.fixture(scope="session")
def sequential_example_run(example_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled example declared as three looks (``config/sequential.yaml``), run once per
    session on a copy of the finished example (its scores are reused: the hypotheses are the
    same); shared by the workers as ``example_run`` is. The dry run that preceded it is kept in
    ``dry-run.txt`` beside the folder."""
    shared = shared_temp(tmp_path_factory)
    root = shared / "sequential" / "run"
    done, failed = shared / "sequential" / "done", shared / "sequential" / EXAMPLE_FAILED
    with open(shared / "sequential.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if failed.is_file():
            pytest.fail(f"the sequential example failed (in another worker):\n{failed.read_text()}")
        if not done.is_file():
            shutil.rmtree(root.parent, ignore_errors=True)
            shutil.copytree(example_run, root, symlinks=True)
            shutil.rmtree(root / ".snakemake" / "locks", ignore_errors=True)
            config = root / SEQUENTIAL_CONFIG
            dry = run_snakemake(root, "-n", configfile=config)
            (root.parent / "dry-run.txt").write_text(dry.stdout + dry.stderr)
            result = run_snakemake(root, configfile=config)
            if dry.returncode != 0 or result.returncode != 0:
                failed.write_text(dry.stderr[-2000:] + result.stderr[-4000:])
            assert result.returncode == 0, result.stderr[-4000:]
            done.touch()
    return root
