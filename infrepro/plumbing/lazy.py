"""Public names of a package imported on first use (PEP 562).

The workflow parses its rule files on every Snakemake invocation, one with nothing to do
included; the packages it reads from (``io``, ``experiment``, ``report``) load pandas, scipy
or the renderer only when a name that needs them is used.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any


def lazy_package(
    package: str, source: str, namespace: dict[str, Any]
) -> tuple[Callable[[str], object], list[str]]:
    """The ``__getattr__`` and ``__all__`` of a package whose public names are the imports of
    the ``if TYPE_CHECKING:`` block of its ``__init__.py`` (``source``): one list, which type
    checkers read as it is; at run time each name is imported from its module on first use and
    kept in the package's ``namespace``."""
    tree = ast.parse(Path(source).read_text(encoding="utf-8"))
    where = {
        alias.asname or alias.name: str(node.module)
        for block in tree.body
        if isinstance(block, ast.If) and ast.unparse(block.test) == "TYPE_CHECKING"
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }

    def __getattr__(name: str) -> object:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(where[name]), name)
        namespace[name] = value
        return value

    return __getattr__, sorted(where)
