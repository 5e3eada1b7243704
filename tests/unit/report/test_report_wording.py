"""The report speaks to its reader: no text it can show points to the project's issue tracker
("issue 23"); a pointer to docs/method.md ("§4b.6") is fine. Every string literal of the
report and figure code (docstrings and comments aside) and every template is scanned; the
rendered report of the bundled example is scanned in tests/e2e/test_example_analyses.py."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import infrepro.plots
import infrepro.report

INTERNAL = re.compile(r"\bissues?\s*#?\s*\d+", re.IGNORECASE)
PACKAGES = [Path(infrepro.report.__file__).parent, Path(infrepro.plots.__file__).parent]


def shown_strings(path: Path) -> list[tuple[int, str]]:
    """The string literals of a module that are not docstrings, with their line numbers."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
    ]


MODULES = sorted(p for package in PACKAGES for p in package.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_string_the_report_shows_names_an_issue(path: Path) -> None:
    found = [(line, s) for line, s in shown_strings(path) if INTERNAL.search(s)]
    assert found == []


def test_no_template_names_an_issue() -> None:
    templates = sorted((PACKAGES[0] / "templates").iterdir())
    assert templates
    for template in templates:
        assert not INTERNAL.search(template.read_text(encoding="utf-8")), template.name


def test_the_scan_finds_what_it_looks_for(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text('"""issue 7 in a docstring is fine"""\nX = "(56-90 %, issue 23)"\n')
    assert [s for _, s in shown_strings(module) if INTERNAL.search(s)] == ["(56-90 %, issue 23)"]
    assert not INTERNAL.search("docs/method.md §4b.6, 95 %, 1,250 segments")
