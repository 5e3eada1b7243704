"""README's count of the tests that may skip (its "Test" section) is the suite's (issue 27).

Each optional tool is one fixture (tests/optional_tools.py, defined in tests/conftest.py) that
every test needing the tool requests. Which collected tests of the whole suite have each tool's
fixture in their closure is read from this session's own collection when it collected every
test file (`pytest`, the suite's testpaths; before any -k, -m or --deselect), else from a
collection of the suite in a subprocess (collection only: no test runs) with the option that
writes them; README's numbers per tool and in total, in words or digits, must be those. No
test may skip by other means, or README's count would miss it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from optional_tools import NEEDS_OPTION, OPTIONAL_TOOLS, SUITE_ITEMS, tool_needs
from readme_numbers import WORD, is_number, number
from test_docs import REPO_ROOT, section

SKIPPING = re.compile(r"\.(skip|skipif|importorskip|xfail)\b")  # pytest's ways to skip a test
# the tools' fixtures, and this file's examples of the pattern
NOT_SCANNED = {
    "tests/optional_tools.py",
    "tests/conftest.py",
    "tests/unit/docs/test_readme_counts.py",
}


def suite_items(config: pytest.Config) -> list[pytest.Item] | None:
    """This session's collected tests if they are the whole suite's: every test file of the
    suite has tests among them (else None: pytest was given other paths, --ignore, --lf, ...)."""
    items = config.stash.get(SUITE_ITEMS, None)
    if items is None:
        return None
    files = set((REPO_ROOT / "tests").rglob("test_*.py"))
    return items if {Path(item.path) for item in items} == files else None


def collect_needs(destination: Path) -> dict[str, list[str]]:
    """{tool fixture: node ids of the collected tests that request it}, from a collection of
    the whole suite in one process (pyproject's addopts, -n auto, cleared)."""
    output = destination / "needs.json"
    env = {name: value for name, value in os.environ.items() if name != "PYTEST_ADDOPTS"}
    command = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-o", "addopts="]
    command += ["-p", "no:xdist", "-p", "no:cacheprovider", f"{NEEDS_OPTION}={output}", "tests"]
    run = subprocess.run(
        command, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, (run.stdout + run.stderr)[-4000:]
    return json.loads(output.read_text(encoding="utf-8"))


def readme_skip_counts(readme: str) -> tuple[int, dict[str, int]]:
    """README's number of tests that may skip, and per tool fixture the number it states
    ("the <number> <tool words> tests", OPTIONAL_TOOLS' words)."""
    text = " ".join(section(readme, "Test").split())
    total = re.search(rf"\b({WORD}) tests may skip\b", text)
    assert total is not None, "README's Test section says no number of tests that may skip"
    per_tool = {}
    for fixture, words in OPTIONAL_TOOLS.items():
        found = re.search(rf"\bthe ({WORD}) {re.escape(words)} tests\b", text)
        assert found is not None, f"README's Test section states no number of {words} tests"
        per_tool[fixture] = number(found.group(1))
    return number(total.group(1)), per_tool


def test_readme_states_how_many_tests_may_skip(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Per tool and in total (a test needing two tools counted once)."""
    items = suite_items(request.config)
    needs = collect_needs(tmp_path) if items is None else tool_needs(items)
    assert set(needs) == set(OPTIONAL_TOOLS)
    total, per_tool = readme_skip_counts((REPO_ROOT / "README.md").read_text(encoding="utf-8"))
    found = {fixture: len(ids) for fixture, ids in needs.items()}
    differing = {fixture: ids for fixture, ids in needs.items() if per_tool[fixture] != len(ids)}
    assert per_tool == found, f"README states {per_tool}; the suite has {found}: {differing}"
    union = {node for ids in needs.values() for node in ids}
    assert total == len(union), f"README states {total} tests may skip; the suite has {len(union)}"


def test_no_test_skips_but_for_want_of_an_optional_tool() -> None:
    """A skip, skipif, importorskip or xfail anywhere but the tools' own fixtures would be a
    test that may skip which README's count does not see."""
    found = [
        f"{path.relative_to(REPO_ROOT)}:{number}: {line.strip()}"
        for path in sorted((REPO_ROOT / "tests").rglob("*.py"))
        if str(path.relative_to(REPO_ROOT)) not in NOT_SCANNED
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if SKIPPING.search(line)
    ]
    assert not found, found


def test_the_skip_check_sees_a_skip() -> None:
    """The pattern above finds each way pytest skips a test (it must be able to fail)."""
    lines = ["pytest.skip('x')", "@pytest.mark.skipif(True, reason='x')", "pytest.xfail()"]
    lines += ["pytest.importorskip('numpy')", "marks=pytest.mark.skip"]
    assert all(SKIPPING.search(line) for line in lines)
    assert not SKIPPING.search("skipped = diagnostics['status'] == 'skipped'")


@pytest.mark.parametrize(
    ("text", "value"),
    [("Twenty-seven", 27), ("sixteen", 16), ("three", 3), ("24", 24), ("1,041", 1041)]
    + [("one hundred and five", 105), ("ninety-nine", 99), ("zero", 0)],
)
def test_numbers_read_as_readme_writes_them(text: str, value: int) -> None:
    assert number(text) == value and is_number(text)


@pytest.mark.parametrize("text", ["", "tests", "and", "the", "twenty and", "1,04", "hundred"])
def test_words_that_are_no_numbers(text: str) -> None:
    assert not is_number(text)
    with pytest.raises(ValueError, match="not a number"):
        number(text)
