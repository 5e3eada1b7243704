"""Fixtures of the end-to-end tests."""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from workflow_helpers import MINI_RUN, copy_example, make_mini_experiment, run_snakemake

from infrepro.workflow.snakemake_door import PLAIN_VARIABLE

RUN_FAILED = "run-failed.txt"


def shared_temp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A temporary folder all pytest-xdist workers of this session share (the base temp
    folder's parent under xdist, the base temp folder itself without)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def shared_run(
    tmp_path_factory: pytest.TempPathFactory, name: str, make: Callable[[Path], str]
) -> Path:
    """``<shared temp>/<name>/run``, made once per test session by ``make`` (which returns the
    error text of a failed run, '' on success). Under pytest-xdist the workers share it: the
    first worker to ask makes it under a file lock, the others wait for the lock and reuse it;
    a failure is recorded so that every later request fails at once with its text."""
    shared = shared_temp(tmp_path_factory)
    root = shared / name / "run"
    done, failed = shared / name / "done", shared / name / RUN_FAILED
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if failed.is_file():
            pytest.fail(f"the {name} run failed (in another worker):\n{failed.read_text()}")
        if not done.is_file():
            shutil.rmtree(root.parent, ignore_errors=True)
            error = make(root)
            if error:
                failed.write_text(error)
            assert not error, error
            done.touch()
    return root


@pytest.fixture(scope="session")
def example_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled example, run to completion once per test session by `snakemake --cores 2`.

    Tests that use it only read its results (tests/conftest.py puts the modules that use it on
    one worker, so none waits)."""

    def make(root: Path) -> str:
        copy_example(root)
        result = run_snakemake(root, configfile=root / "config" / "config.yaml")
        return "" if result.returncode == 0 else result.stderr[-4000:]

    return shared_run(tmp_path_factory, "example", make)


SEQUENTIAL_CONFIG = "config/sequential.yaml"  # the bundled example declared as three looks


@pytest.fixture(scope="session")
def sequential_example_run(example_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled example declared as three looks (``config/sequential.yaml``), run once per
    session on a copy of the finished example (its scores are reused: the hypotheses are the
    same). The dry run that preceded it is kept in ``dry-run.txt`` beside the folder."""

    def make(root: Path) -> str:
        shutil.copytree(example_run, root, symlinks=True)
        shutil.rmtree(root / ".snakemake" / "locks", ignore_errors=True)
        config = root / SEQUENTIAL_CONFIG
        dry = run_snakemake(root, "-n", configfile=config)
        (root.parent / "dry-run.txt").write_text(dry.stdout + dry.stderr)
        result = run_snakemake(root, configfile=config)
        if dry.returncode == 0 and result.returncode == 0:
            return ""
        return dry.stderr[-2000:] + result.stderr[-4000:]

    return shared_run(tmp_path_factory, "sequential", make)


@pytest.fixture(scope="session")
def mini_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``make_mini_experiment(root, **MINI_RUN)`` run to completion once per session by
    `snakemake --cores 2` with the door open (``INFREPRO_PLAIN_SNAKEMAKE`` cleared); the run's
    stderr is kept in ``stderr.txt`` beside the folder. test_determinism (`--cores 1`),
    test_install (the installed package) and test_plain_snakemake (the door shut) compare a run
    of their own with it and only read it (tests/conftest.py puts the three modules on one
    worker, so that none waits for another to finish it)."""

    def make(root: Path) -> str:
        make_mini_experiment(root, **MINI_RUN)
        result = run_snakemake(root, env={PLAIN_VARIABLE: ""})
        (root.parent / "stderr.txt").write_text(result.stderr)
        return "" if result.returncode == 0 else result.stderr[-4000:]

    return shared_run(tmp_path_factory, "mini", make)
