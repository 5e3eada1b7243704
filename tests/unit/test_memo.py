"""Content digests of frames (infrepro.plumbing.memo): the keys of the report's kept figures and the
metaparam analysis's kept units. Equal content gives equal keys; any difference of a cell, a
type, a missing value or a column boundary gives another key, for small frames (cells read one
by one) and large ones (pandas' vectorised hash) alike."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from infrepro.plumbing import memo


def frame(**columns: object) -> pd.DataFrame:
    return pd.DataFrame(columns)


@pytest.fixture(params=["small", "large"])
def size(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "large":
        monkeypatch.setattr(memo, "SMALL_FRAME", 0)  # every frame by the vectorised hash
    return request.param


def test_equal_content_equal_digest(size: str) -> None:
    a = frame(metric=["ter", "ter"], estimate=[0.5, np.nan], n=[1, 2])
    b = frame(metric=["ter", "ter"], estimate=[0.5, np.nan], n=[1, 2])
    assert memo.content_digest(a) == memo.content_digest(b)
    moved = b.set_axis([10, 11])  # row labels are not data
    assert memo.content_digest(a) == memo.content_digest(moved)


@pytest.mark.parametrize(
    "other",
    [
        frame(metric=["ter", "tex"], estimate=[0.5, np.nan], n=[1, 2]),  # a cell
        frame(metric=["ter", "ter"], estimate=[0.5, 0.0], n=[1, 2]),  # NaN against a number
        frame(metric=["ter", "ter"], estimate=[0.5, np.nan], n=[1.0, 2.0]),  # a type
        frame(metric=["ter", "ter"], estimate=[0.5, np.nan], m=[1, 2]),  # a name
        frame(metric=["ter", "ter"], estimate=[0.5, np.nan], n=[2, 1]),  # the order
    ],
)
def test_any_difference_another_digest(size: str, other: pd.DataFrame) -> None:
    a = frame(metric=["ter", "ter"], estimate=[0.5, np.nan], n=[1, 2])
    assert memo.content_digest(a) != memo.content_digest(other)


def test_missing_text_and_boundaries(size: str) -> None:
    missing = frame(level=pd.Series(["a", None], dtype=object))
    for text in ("nan", "None", "<NA>", ""):
        assert memo.content_digest(missing) != memo.content_digest(frame(level=["a", text]))
    joined = frame(a=["x;y", ""], b=["z", "w"])
    split = frame(a=["x", "y;"], b=["z", "w"])
    assert memo.content_digest(joined) != memo.content_digest(split)
    assert memo.content_digest(frame(a=["1"])) != memo.content_digest(frame(a=[1]))


def test_series_keep_their_labels(size: str) -> None:
    one = pd.Series([1.0, 2.0], index=["a", "b"])
    assert memo.content_digest(one) != memo.content_digest(one.set_axis(["a", "c"]))
