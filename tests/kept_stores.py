"""Helpers for the tests of values kept across runs (infrepro.plumbing.kept.KeptStore and its
stores)."""

from __future__ import annotations

import json
from pathlib import Path


def written_by_other_code(path: Path) -> None:
    """Make a saved store look as if another version of the code had written it."""
    saved = json.loads(path.read_text())
    saved["code"] = "another version"
    path.write_text(json.dumps(saved))
