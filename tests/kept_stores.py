"""Helpers for the tests of values kept across runs (infrepro.plumbing.kept.KeptStore and its
stores)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

# What a store must ignore: files that are no store's JSON, and (None) a store that another
# version of the code wrote (``unusable_store``).
UNUSABLE = ("", "{not json", "[]", None)


def written_by_other_code(path: Path) -> None:
    """Make a saved store look as if another version of the code had written it."""
    saved = json.loads(path.read_text())
    saved["code"] = "another version"
    path.write_text(json.dumps(saved))


def unusable_store(path: Path, content: str | None, save: Callable[[], None]) -> None:
    """Leave at ``path`` a store to ignore: ``content`` as it is, or with None the store
    ``save`` writes there, then marked as written by another version of the code."""
    if content is None:
        save()
        written_by_other_code(path)
    else:
        path.write_text(content)
