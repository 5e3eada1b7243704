"""Values remembered per DataFrame object while it lives.

The analyses count the same rows' segments and runs for every fit, and the report looks up the
same tables thousands of times; neither changes a frame in place (they derive new ones), so what
is computed from a frame stays valid for the frame's lifetime.
"""

from __future__ import annotations

import weakref
from typing import Any

import pandas as pd


class FrameMemo:
    """``memo.of(frame)``: a dict kept for ``frame`` while it lives (keyed by its id, dropped
    with it through a weak reference, so a new frame at a reused id never sees old values)."""

    def __init__(self) -> None:
        self._entries: dict[int, tuple[weakref.ref, dict[str, Any]]] = {}

    def of(self, frame: pd.DataFrame) -> dict[str, Any]:
        key = id(frame)
        entry = self._entries.get(key)
        if entry is None or entry[0]() is not frame:
            entry = (weakref.ref(frame, lambda _, key=key: self._entries.pop(key, None)), {})
            self._entries[key] = entry
        return entry[1]
