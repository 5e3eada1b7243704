"""End-to-end: the package installed with `pip install .` (not editable) into a fresh virtual
environment runs the bundled example from a copy of the workflow that holds no package source,
so the config schema and the report templates come from the installed package's data.

Nothing is downloaded: the new environment sees the test environment's packages (as
``venv --system-site-packages`` would see the system's), and pip builds the package with the
setuptools installed there (no build isolation, no index).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from workflow_helpers import REPO_ROOT, copy_example, copy_workflow

pytestmark = pytest.mark.e2e

PACKAGE_FILES = ("pyproject.toml", "README.md", "infrepro")


def run(command: list[str | Path], cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    """Run a command without PYTHONPATH (nothing but the environment decides what it imports)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [str(c) for c in command], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture(scope="module")
def installed_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Python of a new virtual environment with infrepro installed from a source copy."""
    root = tmp_path_factory.mktemp("install")
    source = root / "source"  # pip builds in the source tree: a copy keeps the checkout clean
    source.mkdir()
    for name in PACKAGE_FILES:
        if (REPO_ROOT / name).is_dir():
            ignore = shutil.ignore_patterns("__pycache__")
            shutil.copytree(REPO_ROOT / name, source / name, ignore=ignore)
        else:
            shutil.copy2(REPO_ROOT / name, source / name)
    venv = root / "venv"
    made = run([sys.executable, "-m", "venv", "--without-pip", venv], root, 120)
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    code = "import sysconfig; print(sysconfig.get_path('purelib'))"
    purelib = run([python, "-c", code], root, 60)
    ours = dict.fromkeys(sysconfig.get_path(kind) for kind in ("purelib", "platlib"))
    (Path(purelib.stdout.strip()) / "test-environment.pth").write_text("\n".join(ours) + "\n")
    pip = [python, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index"]
    # --ignore-installed: the test environment's own (editable) infrepro is visible too
    result = run([*pip, "--ignore-installed", "--quiet", source], root, 600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return python


def test_installed_package_runs_the_example_from_a_workflow_copy(
    installed_python: Path, tmp_path: Path, example_run: Path
) -> None:
    where = run([installed_python, "-c", "import infrepro; print(infrepro.__file__)"], tmp_path, 60)
    assert Path(where.stdout.strip()).is_relative_to(installed_python.parents[1]), where
    snakefile = copy_workflow(tmp_path / "workflow")
    assert not (snakefile.parent / "infrepro").exists()
    work = copy_example(tmp_path / "work")
    command = [installed_python, "-m", "snakemake", "--snakefile", snakefile]
    command += ["--directory", work, "--configfile", work / "config" / "config.yaml"]
    result = run([*command, "--cores", "2"], work, 900)
    assert result.returncode == 0, result.stderr[-4000:]
    # the same tables and report as the checkout's own run of the example
    expected = sorted(p.relative_to(example_run) for p in (example_run / "results").rglob("*"))
    produced = sorted(p.relative_to(work) for p in (work / "results").rglob("*"))
    assert produced == expected
    for name in expected:
        if (example_run / name).is_file():
            assert (work / name).read_bytes() == (example_run / name).read_bytes(), name
