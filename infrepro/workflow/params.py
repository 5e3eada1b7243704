"""Snakemake's check of changed params without importing pandas for it.

To decide whether a job's params changed, Snakemake 9 serializes each param, and it imports
pandas for that whenever pandas is installed (``PersistenceBase._serialize_param``), so that a
DataFrame param is hashed by content. Every run pays that import, a run with nothing to do
included: 0.3 s of the bundled example's no-op in README's install (issue 31, goal 3), where
nothing else in Snakemake's process needs pandas. A param can only be a pandas object if pandas
has been imported; :func:`serialize_params_lazily` makes Snakemake call its own pandas-aware
serializer when it has been and its built-in one otherwise: the same text for every param,
without the import. Left alone when Snakemake's methods are not the ones this was written for.
"""

from __future__ import annotations

import sys
from typing import Any

METHODS = ("_serialize_param", "_serialize_param_pandas", "_serialize_param_builtin")


def serialize_params_lazily() -> bool:
    """Install the lazy choice on Snakemake's ``PersistenceBase`` (once; its file and database
    stores inherit it); whether it is installed."""
    from snakemake.persistence import PersistenceBase

    current = PersistenceBase.__dict__.get("_serialize_param")
    if isinstance(current, property) and current.fget is _serializer:
        return True
    if not isinstance(current, property) or not all(hasattr(PersistenceBase, m) for m in METHODS):
        return False
    PersistenceBase._serialize_param = property(_serializer)  # type: ignore[assignment]
    return True


def _serializer(persistence: Any) -> Any:
    """Snakemake's pandas-aware serializer once pandas is imported, its built-in one before."""
    if "pandas" in sys.modules:
        return persistence._serialize_param_pandas
    return persistence._serialize_param_builtin
