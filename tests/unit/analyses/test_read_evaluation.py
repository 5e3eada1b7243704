"""The analyses' view of the evaluation table (infrepro.analyses.common.data.read_evaluation): lean
columns, text as categoricals in string order, and the file decoded once per version."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from infrepro.analyses.common import data
from infrepro.plumbing.atomic import write_parquet


def evaluation(ter: list[float]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "run_id": ["b_s10", "b_s2", "c_s1"][: len(ter)],
            "system": ["b", "b", "c"][: len(ter)],
            "segment_id": ["s1"] * len(ter),
            "ter": ter,
            "bleu": [1.0] * len(ter),
        }
    )


def read(path: Path) -> pd.DataFrame:
    return data.read_evaluation(str(path), metric="ter", facets=[], properties=[])


def test_lean_categorical_view(tmp_path: Path) -> None:
    path = tmp_path / "evaluation.parquet"
    write_parquet(evaluation([1.0, 2.0, 3.0]), path)
    frame = read(path)
    assert "bleu" not in frame.columns
    assert list(frame["run_id"].cat.categories) == ["b_s10", "b_s2", "c_s1"]
    assert frame["ter"].tolist() == [1.0, 2.0, 3.0]


def test_a_new_version_of_the_file_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "evaluation.parquet"
    write_parquet(evaluation([1.0, 2.0, 3.0]), path)
    reads = []
    monkeypatch.setattr(data, "_TABLES", {})
    real = pq.read_table
    monkeypatch.setattr(pq, "read_table", lambda *a, **k: reads.append(a) or real(*a, **k))
    first, again = read(path), read(path)
    assert len(reads) == 1 and first.equals(again)
    again.loc[0, "ter"] = 99.0  # a job's frame is its own
    assert read(path)["ter"].tolist() == [1.0, 2.0, 3.0]
    write_parquet(evaluation([4.0, 5.0]), path)  # a rerun's table: atomically replaced
    assert read(path)["ter"].tolist() == [4.0, 5.0] and len(reads) == 2


@pytest.fixture
def fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An evaluation table in a process that has read none (no kept table or frames)."""
    path = tmp_path / "evaluation.parquet"
    write_parquet(evaluation([1.0, 2.0, 3.0]), path)
    monkeypatch.setattr(data, "_TABLES", {})
    monkeypatch.setattr(data, "_FRAMES", {})
    return path


def test_a_metrics_frame_is_built_once_per_version_and_copied_per_job(
    fresh: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = fresh
    built = []
    real = pd.DataFrame.copy
    first = read(path)
    kept, _ = next(iter(data._FRAMES.values()))
    monkeypatch.setattr(
        pd.DataFrame, "copy", lambda self, deep=True: built.append(self) or real(self, deep)
    )
    again = read(path)
    assert built == [kept] and again is not kept and again.equals(first)
    other = data.read_evaluation(str(path), metric="bleu", facets=[], properties=[])
    assert "bleu" in other and len(data._FRAMES) == 2
    write_parquet(evaluation([4.0, 5.0]), path)  # a new version: the old frames are dropped
    assert read(path)["ter"].tolist() == [4.0, 5.0] and len(data._FRAMES) == 1


def test_kept_frames_stay_under_their_bound(fresh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = fresh
    one = read(path)
    monkeypatch.setattr(data, "KEPT_FRAME_BYTES", int(one.memory_usage().sum()) + 1)
    data.read_evaluation(str(path), metric="bleu", facets=[], properties=[])
    assert [key[1] for key in data._FRAMES] == ["bleu"]  # the least recent went first
    monkeypatch.setattr(data, "KEPT_FRAME_BYTES", 0)
    assert read(path)["ter"].tolist() == [1.0, 2.0, 3.0] and data._FRAMES == {}
