"""End-to-end: the package installed with `pip install .` (not editable) into a fresh virtual
environment imports every module of its own and runs a small experiment (every rule of the
workflow, raw mode: the session's ``mini_run``, tests/e2e/conftest.py) from a copy of the
workflow that holds no package source, so the config schema, the report templates and the other
package data come from the installed package; every file under results/ is the checkout's run's.

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
from workflow_helpers import MINI_RUN, REPO_ROOT, copy_workflow, make_mini_experiment

pytestmark = pytest.mark.e2e

PACKAGE_FILES = ("pyproject.toml", "README.md", "infrepro")
# every module of the package the interpreter finds (the installed copy), each imported: their
# names, one a line (a package that fails to import fails the walk)
IMPORT_EVERY_MODULE = """
import importlib, pkgutil, infrepro
def fail(name):
    raise ImportError(name)
for module in pkgutil.walk_packages(infrepro.__path__, "infrepro.", onerror=fail):
    importlib.import_module(module.name)
    print(module.name)
"""


def source_modules() -> list[str]:
    """The checkout's modules of the package (its .py files), but the package itself."""
    root = REPO_ROOT / "infrepro"
    names = (
        ".".join(("infrepro", *p.relative_to(root).with_suffix("").parts))
        for p in root.rglob("*.py")
    )
    return sorted(name.removesuffix(".__init__") for name in names if name != "infrepro.__init__")


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


def test_installed_package_runs_the_workflow_from_a_workflow_copy(
    installed_python: Path, tmp_path: Path, mini_run: Path
) -> None:
    where = run([installed_python, "-c", "import infrepro; print(infrepro.__file__)"], tmp_path, 60)
    assert Path(where.stdout.strip()).is_relative_to(installed_python.parents[1]), where
    modules = run([installed_python, "-c", IMPORT_EVERY_MODULE], tmp_path, 300)
    assert modules.returncode == 0, modules.stderr[-3000:]
    assert sorted(modules.stdout.split()) == source_modules()
    snakefile = copy_workflow(tmp_path / "workflow")
    assert not (snakefile.parent / "infrepro").exists()
    work = make_mini_experiment(tmp_path / "work", **MINI_RUN).root
    command = [installed_python, "-m", "snakemake", "--snakefile", snakefile]
    command += ["--directory", work, "--configfile", work / "config.yaml"]
    result = run([*command, "--cores", "2"], work, 900)
    assert result.returncode == 0, result.stderr[-4000:]
    # the same tables and report as the checkout's own run of the same experiment
    expected = sorted(p.relative_to(mini_run) for p in (mini_run / "results").rglob("*"))
    produced = sorted(p.relative_to(work) for p in (work / "results").rglob("*"))
    assert produced == expected
    for name in expected:
        if (mini_run / name).is_file():
            assert (work / name).read_bytes() == (mini_run / name).read_bytes(), name
