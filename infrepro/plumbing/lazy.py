"""Public names of a package imported on first use (PEP 562).

The workflow parses its rule files on every Snakemake invocation, one with nothing to do
included; the packages it reads from (``io``, ``experiment``, ``report``) load pandas, scipy
or the renderer only when a name that needs them is used.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_getattr(
    package: str, where: Mapping[str, str], namespace: dict[str, Any]
) -> Callable[[str], object]:
    """A module ``__getattr__`` that imports each public name from its module ``where[name]``
    (relative to ``package``) on first use and keeps it in the package's ``namespace``."""

    def __getattr__(name: str) -> object:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{where[name]}", package), name)
        namespace[name] = value
        return value

    return __getattr__
