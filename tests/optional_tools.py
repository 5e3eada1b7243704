"""The tools some tests need and a fresh clone may lack, and how each is found.

Each tool is one fixture of tests/conftest.py (OPTIONAL_TOOLS names them); a test that needs a
tool requests its fixture, directly or through another fixture, so the fixture closure of a
collected test (``item.fixturenames``) says which tools it needs and README's count of the tests
that may skip is checked without running them (tests/unit/docs/test_readme_counts.py). Without
its tool a test skips with the install hint, except under CI, where it fails (a browser or LaTeX
test at once, any other skip by tests/conftest.py's rule that a skip fails the run).
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import pytest

# fixture name -> the words README puts between a tool's count and "tests"
OPTIONAL_TOOLS = {
    "slurm_opt_in": "SLURM",
    "chromium_executable": "browser",
    "latex": "LaTeX compile",
}
NEEDS_OPTION = "--write-optional-tools"  # pytest option of tests/conftest.py: who needs what
# The session's collected tests before any -k, -m or --deselect, kept by tests/conftest.py when
# pytest collected its testpaths (the whole suite): tests/unit/docs/test_readme_counts.py then
# reads who needs what from them instead of collecting the suite again in a subprocess.
SUITE_ITEMS = pytest.StashKey[list[pytest.Item]]()
SLURM_VARIABLE = "INFREPRO_SLURM_TEST"
SLURM_MODES = ("1", "full", "quick")  # "1" and "full": the whole example; "quick": a part
SLURM_OPT_IN = "SLURM test is opt-in: INFREPRO_SLURM_TEST=1 (or quick) pytest tests/cluster"
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
LATEX_PACKAGES = {  # program -> the Debian package that installs it (.ci/run installs them all)
    "pdflatex": "texlive-latex-recommended",
    "lualatex": "texlive-luatex",
    "pdftotext": "poppler-utils",
}


def tool_needs(items: list[pytest.Item]) -> dict[str, list[str]]:
    """{tool fixture: the node ids of the ``items`` whose fixture closure holds it}."""
    return {
        fixture: [item.nodeid for item in items if fixture in item.fixturenames]
        for fixture in OPTIONAL_TOOLS
    }


def in_ci() -> bool:
    """True when the environment variable CI is set to a true value (CI=true, as .ci/run sets)."""
    return os.environ.get("CI", "").strip().lower() not in {"", "0", "false", "no"}


def lacking(tool: str, hint: str, ci_message: str) -> NoReturn:
    """Skip the test for want of ``tool``, saying how to install it; fail instead under CI."""
    if in_ci():
        pytest.fail(ci_message)
    pytest.skip(f"{tool} is not installed: {hint}")


def find_chromium() -> str | None:
    """The path of the first Chromium (or Chrome) on PATH, or None."""
    return next(filter(None, (shutil.which(name) for name in CHROMIUM_NAMES)), None)


def slurm_mode() -> str | None:
    """The SLURM test's mode INFREPRO_SLURM_TEST opts in to, or None (not opted in)."""
    mode = os.environ.get(SLURM_VARIABLE, "")
    return mode if mode in SLURM_MODES else None


def stated(tex: str) -> tuple[str, list[str]]:
    """The engine and the preamble lines a paper table's first comment lines state."""
    engine = re.match(r"% Engine: (\w+)", tex)
    assert engine is not None, tex[:200]
    lines = tex.split("% Preamble:\n", 1)[1].splitlines()
    preamble = [line[4:] for line in lines if line.startswith("%   ")]
    return engine.group(1), preamble


@dataclass(frozen=True)
class LatexTools:
    """The TeX Live and Poppler programs of the LaTeX compile tests, looked up when a test asks
    for one, so a test that needs only pdflatex runs where lualatex is missing."""

    def path(self, program: str) -> str:
        """The path of ``program`` (a key of LATEX_PACKAGES); skip without it (fail under CI)."""
        found = shutil.which(program)
        if found is None:
            lacking(
                program,
                f"apt-get install {LATEX_PACKAGES[program]}",
                f"{program} is not installed, but the LaTeX tests must run in CI",
            )
        return found

    def compile(self, document: str, folder: Path, engine: str, timeout: int = 600) -> str:
        """Compile ``document`` as ``folder``/table.tex with ``engine``, one compile at a time
        across pytest-xdist workers (lualatex's first runs build its font name database and
        font caches, which two runs at once could both write); its log, the compile passed."""
        (folder / "table.tex").write_text(document, encoding="utf-8")
        command = [self.path(engine), "-interaction=nonstopmode", "-halt-on-error", "table.tex"]
        with open(Path(tempfile.gettempdir()) / "infrepro-latex-tests.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            run = subprocess.run(
                command, cwd=folder, capture_output=True, text=True, timeout=timeout
            )
        log = (folder / "table.log").read_text(errors="replace")
        assert run.returncode == 0, log[-3000:]
        return log
