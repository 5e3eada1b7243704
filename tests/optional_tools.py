"""The tools some tests need and a fresh clone may lack, and how each is found.

Each tool is one fixture of tests/conftest.py (OPTIONAL_TOOLS names them); a test that needs a
tool requests its fixture, directly or through another fixture, so the fixture closure of a
collected test (``item.fixturenames``) says which tools it needs and README's count of the tests
that may skip is checked without running them (tests/unit/docs/test_readme_counts.py). Without
its tool a test skips with the install hint, except under CI, where it fails (a browser or LaTeX
test at once, any other skip by tests/conftest.py's rule that a skip fails the run).
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from typing import NoReturn

import pytest

# fixture name -> the words README puts between a tool's count and "tests"
OPTIONAL_TOOLS = {
    "slurm_opt_in": "SLURM",
    "chromium_executable": "browser",
    "latex": "LaTeX compile",
}
NEEDS_OPTION = "--write-optional-tools"  # pytest option of tests/conftest.py: who needs what
SLURM_VARIABLE = "INFREPRO_SLURM_TEST"
SLURM_MODES = ("1", "full", "quick")  # "1" and "full": the whole example; "quick": a part
SLURM_OPT_IN = "SLURM test is opt-in: INFREPRO_SLURM_TEST=1 (or quick) pytest tests/cluster"
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
LATEX_PACKAGES = {  # program -> the Debian package that installs it (.ci/run installs them all)
    "pdflatex": "texlive-latex-recommended",
    "lualatex": "texlive-luatex",
    "pdftotext": "poppler-utils",
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
