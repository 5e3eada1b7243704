"""Issue 19: no package function over 80 lines (def to end), except the numba kernels."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[3] / "infrepro"
MAX_LINES = 80
# numba kernels: one loop nest each, kept whole so numba compiles it as one function
KERNEL_MODULES = {"metrics/ter_kernel.py"}


def _is_numba_kernel(node: ast.FunctionDef) -> bool:
    names = {
        getattr(d.func if isinstance(d, ast.Call) else d, "id", None) for d in node.decorator_list
    }
    return bool(names & {"jit", "njit"})


def long_functions(root: Path = PACKAGE) -> list[str]:
    """Every function of the package over MAX_LINES lines, as 'path:line name (n lines)'."""
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            n = node.end_lineno - node.lineno + 1
            if n <= MAX_LINES or (rel in KERNEL_MODULES and _is_numba_kernel(node)):
                continue
            found.append(f"infrepro/{rel}:{node.lineno} {node.name} ({n} lines)")
    return found


def test_no_package_function_over_80_lines() -> None:
    assert long_functions() == []


def test_the_check_sees_a_long_function(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_LINES))
    (tmp_path / "m.py").write_text(f"def long():\n{body}\n\n\ndef short():\n    return 1\n")
    assert long_functions(tmp_path) == [f"infrepro/m.py:1 long ({MAX_LINES + 1} lines)"]
