"""Each metrics test scores from scratch: the pairs other tests scored are forgotten first
(`pair_memo.PAIRS` remembers scores across calls within a process)."""

from __future__ import annotations

import pytest

from infrepro.metrics import pair_memo


@pytest.fixture(autouse=True)
def _forget_scored_pairs() -> None:
    pair_memo.PAIRS.clear()
