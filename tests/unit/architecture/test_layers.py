"""The package's layer order (docs/architecture.md, "Layers"), checked on its import graph.

Every module of ``infrepro`` imports only from its own layer or lower ones, and no chain of
imports leads back to where it started. Imports inside functions count as much as those at the
top of a module (they run as soon as the function does), and so do module paths written as
strings. ``from P import x`` where ``P.x`` is a submodule
is an import of ``P.x``; a module's own parent packages are not edges (Python runs them first,
whoever imports the module).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[3] / "infrepro"

# Lowest first; a module may import from its own layer and from every layer before it.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("core",),
    ("plumbing",),
    ("stats",),
    ("io", "lmm", "metrics", "properties"),
    ("experiment",),
    ("analyses",),
    ("plots",),
    ("report",),
    ("validation",),
    ("workflow",),
)
# A module named in a string that is imported by name (importlib, mock targets); a string
# ``"module:function"`` is a reference that the layer which imports it resolves (the registry's
# analysis functions, imported by ``analyses.runner``).
STRING_IMPORT = re.compile(r"[\"'](infrepro(?:\.\w+)+)[\"']")


def _modules() -> dict[str, Path]:
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def import_graph() -> dict[str, set[str]]:
    """Each module's imports of other modules of the package."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        text = path.read_text(encoding="utf-8")
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Import):
                targets.update(_resolve(a.name, modules) or "" for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parent, base] if base else parent)
                subs = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in modules]
                targets.update(subs)
                if len(subs) < len(node.names):  # names defined in the module itself
                    targets.add(_resolve(base, modules) or "")
        for string in STRING_IMPORT.findall(text):
            targets.add(_resolve(string, modules) or "")
        ancestors = {".".join(module.split(".")[:i]) for i in range(1, module.count(".") + 1)}
        graph[module] = {t for t in targets if t and t != module and t not in ancestors}
    return graph


def layer_of(module: str) -> int:
    """The layer of a module (the root package ``infrepro`` itself: below everything)."""
    parts = module.split(".")
    if len(parts) == 1:
        return -1
    for i, names in enumerate(LAYERS):
        if parts[1] in names:
            return i
    raise AssertionError(f"{module} is in no layer of LAYERS: add its sub-package there")


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph()


def test_no_module_at_the_package_root() -> None:
    loose = sorted(p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py")
    assert loose == [], f"modules at the package root: {loose}; put each in its sub-package"


def test_every_module_imports_only_its_own_or_lower_layers(graph) -> None:
    upward = sorted(
        f"{a} -> {b}" for a, targets in graph.items() for b in targets if layer_of(b) > layer_of(a)
    )
    assert upward == []


def test_the_import_graph_has_no_cycle(graph) -> None:
    assert cycles(graph) == []


def test_the_checks_see_a_violation(graph) -> None:
    """The checks can fail: an edge from the lowest layer up, and one back, are both found."""
    core = next(m for m in graph if m.startswith("infrepro.core."))
    report = next(m for m in graph if m.startswith("infrepro.report."))
    broken = {**graph, core: graph[core] | {report}, report: graph[report] | {core}}
    assert layer_of(report) > layer_of(core)
    assert any(core in c and report in c for c in cycles(broken))


def test_the_layers_in_the_docs_are_these() -> None:
    """docs/architecture.md's layer table names the sub-packages in this order."""
    text = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    order = [m.group(1) for m in re.finditer(r"^\| (\d+) \|", text, flags=re.M)]
    assert order == [str(i) for i in range(len(LAYERS))]
    for i, names in enumerate(LAYERS):
        row = re.search(rf"^\| {i} \|(.*)$", text, flags=re.M)
        assert row is not None
        for name in names:
            assert f"`infrepro/{name}/`" in row.group(1), (i, name)


def test_the_presentation_imports_no_statistics(graph) -> None:
    """The plots and the report render claims that an analysis decided (docs/architecture.md,
    "Where a claim is made"): they import nothing that tests, fits or adjusts."""
    presentation = ("infrepro.plots", "infrepro.report")
    statistics = ("infrepro.stats", "infrepro.lmm", "infrepro.analyses")
    found = sorted(
        f"{a} -> {b}"
        for a, targets in graph.items()
        if a.startswith(presentation)
        for b in targets
        if b.startswith(statistics)
    )
    assert found == []
