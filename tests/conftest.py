"""Shared pytest fixtures, the optional tools' fixtures (tests/optional_tools.py), and the CI
rule that a skipped test fails the run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from optional_tools import (
    NEEDS_OPTION,
    SLURM_OPT_IN,
    SUITE_ITEMS,
    LatexTools,
    find_chromium,
    in_ci,
    lacking,
    slurm_mode,
    tool_needs,
)

REPO_ROOT = Path(__file__).resolve().parents[1]
KREUTZER_DIR = REPO_ROOT / "resources" / "kreutzer2020"


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The repository's root folder."""
    return REPO_ROOT


@pytest.fixture(scope="session")
def kreutzer_dir() -> Path:
    """The bundled Kreutzer et al. (2020) data (resources/kreutzer2020, see its README)."""
    assert (KREUTZER_DIR / "data_ter.csv.gz").is_file(), f"{KREUTZER_DIR} is incomplete"
    return KREUTZER_DIR


# -- the optional tools: each test that needs one requests its fixture (OPTIONAL_TOOLS) ----------
@pytest.fixture(scope="session")
def chromium_executable() -> str:
    """Chromium's executable (Debian's ``chromium``); skip without it, fail under CI."""
    executable = find_chromium()
    if executable is None:
        lacking(
            "chromium",
            "`apt-get install chromium` runs this test",
            "chromium is not installed, but the browser test must run in CI",
        )
    return executable


@pytest.fixture(scope="session")
def latex() -> LatexTools:
    """The LaTeX compile tests' programs, each looked up (skip, or fail under CI) when used."""
    return LatexTools()


@pytest.fixture(scope="session")
def slurm_opt_in() -> str:
    """INFREPRO_SLURM_TEST's mode; skip when it does not opt in (a skip fails under CI)."""
    mode = slurm_mode()
    if mode is None:
        pytest.skip(SLURM_OPT_IN)
    return mode


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        NEEDS_OPTION,
        metavar="PATH",
        help="write which collected tests need each optional tool (tests/optional_tools.py) "
        "to PATH as JSON: {fixture: [node ids]} (with --collect-only: nothing runs)",
    )


# Run first, in this order (every other test keeps its place): the SLURM test, which mostly
# waits for its cluster's jobs, then README's blocks, the longest test, whose Snakemake runs on
# two cores keep the machine busy meanwhile (on the other pytest-xdist worker).
RUN_FIRST = ("tests/cluster/", "tests/e2e/test_readme.py::")


@pytest.hookimpl(tryfirst=True)  # before -k, -m and --deselect take tests out
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """RUN_FIRST's tests first; the collected tests of a session that collected its testpaths
    kept (SUITE_ITEMS)."""

    def rank(item: pytest.Item) -> int:
        found = (i for i, prefix in enumerate(RUN_FIRST) if item.nodeid.startswith(prefix))
        return next(found, len(RUN_FIRST))

    items.sort(key=rank)  # stable: the others stay in collection order
    if config.args_source == pytest.Config.ArgsSource.TESTPATHS:
        config.stash[SUITE_ITEMS] = list(items)


def pytest_collection_finish(session: pytest.Session) -> None:
    """With --write-optional-tools, the tests whose fixture closure holds each tool's fixture."""
    path = session.config.getoption(NEEDS_OPTION)
    if path:
        needs = tool_needs(session.items)
        Path(path).write_text(json.dumps(needs, indent=1) + "\n", encoding="utf-8")


# Under pytest-xdist each test module runs on one worker, in order: a module-scoped fixture (a
# workflow run) is built once, and tests that build on each other's state stay in sequence.
# SHARED_WORKER's modules go to one worker together: those that read the one example run, and
# those that compare with the one small experiment's run (tests/e2e/conftest.py: example_run,
# mini_run), so that no worker waits for another to finish it. PER_TEST's modules, of
# independent workflow runs without shared fixtures, spread their tests over all workers.
SHARED_WORKER = {
    "tests/e2e/test_example_analyses.py": "example run",
    "tests/e2e/test_report_browser.py": "example run",
    "tests/e2e/test_relocation.py": "example run",
    "tests/e2e/test_readme_numbers.py": "example run",
    "tests/e2e/test_determinism.py": "mini run",
    "tests/e2e/test_install.py": "mini run",
    "tests/e2e/test_plain_snakemake.py": "mini run",
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
