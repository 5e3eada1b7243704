"""Shared pytest fixtures, and the CI rule that a skipped test fails the run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
KREUTZER_DIR = REPO_ROOT / "resources" / "kreutzer2020"


def in_ci() -> bool:
    """True when the environment variable CI is set to a true value (CI=true, as .ci/run sets)."""
    return os.environ.get("CI", "").strip().lower() not in {"", "0", "false", "no"}


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The repository's root folder."""
    return REPO_ROOT


@pytest.fixture(scope="session")
def kreutzer_dir() -> Path:
    """The bundled Kreutzer et al. (2020) data (resources/kreutzer2020, see its README)."""
    assert (KREUTZER_DIR / "data_ter.csv.gz").is_file(), f"{KREUTZER_DIR} is incomplete"
    return KREUTZER_DIR


# Under pytest-xdist each test module runs on one worker, in order: a module-scoped fixture (a
# workflow run) is built once, and tests that build on each other's state stay in sequence.
# SHARED_WORKER's modules go to one worker together: those that read the one example run
# (tests/e2e/conftest.py), so that no worker waits for another to finish it. PER_TEST's modules,
# of independent workflow runs without shared fixtures, spread their tests over all workers.
SHARED_WORKER = {
    "tests/e2e/test_example_analyses.py": "example run",
    "tests/e2e/test_install.py": "example run",
    "tests/e2e/test_report_browser.py": "example run",
    "tests/e2e/test_relocation.py": "example run",
}
PER_TEST = {
    "tests/e2e/test_bad_input.py",
    "tests/e2e/test_own_experiment.py",
    "tests/e2e/test_scores_mode.py",
}


@pytest.hookimpl(optionalhook=True)  # without pytest-xdist (-p no:xdist) nothing to do
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """The scheduler of pytest-xdist workers (pyproject's addopts: `-n auto --dist loadscope`):
    work units as SHARED_WORKER and PER_TEST say, in collection order. (`--dist loadgroup` with
    `xdist_group` marks would do the grouping, but pytest-xdist 3.8 cannot rename pytest 9's
    node ids, so it ignores the marks.)"""
    from xdist.scheduler import LoadScopeScheduling

    class ModuleScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return nodeid if module in PER_TEST else SHARED_WORKER.get(module, module)

    return ModuleScheduling(config, log)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Under CI, list the skipped tests as the reason the run fails."""
    skipped = terminalreporter.stats.get("skipped", [])
    if in_ci() and skipped:
        terminalreporter.section("skipped tests fail the run under CI", sep="=", red=True)
        for report in skipped:
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
            terminalreporter.write_line(f"{report.nodeid}: {reason}")


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Under CI every test must run: any skip turns a passing run into a failing one."""
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or not in_ci():
        return
    if reporter.stats.get("skipped") and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
