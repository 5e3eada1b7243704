"""`implementation="auto"` (infrepro/metrics/kernels.py): the reference packages while the kernels
are not compiled, within a CPU budget, then the kernels; a background compile; ready markers.

Whichever path scores a segment, the scores are the same: every split of a batch between the
reference loops and the kernels gives the reference packages' values exactly.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from infrepro.metrics import api, kernels, reference, rouge_kernel, score_segments, ter_kernel

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_metrics_exact import random_segments  # noqa: E402

METRICS = ["ter", "rouge1", "rougeL", "rougeLsum", "chrf"]


@pytest.fixture
def not_compiled(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Kernels not ready, a fresh budget, and background compiles recorded instead of started."""
    started: list[str] = []
    monkeypatch.setattr(kernels, "ready", lambda kernel: False)
    monkeypatch.setattr(kernels, "_spent", 0.0)
    monkeypatch.setattr(kernels, "start_background", lambda: started.append("compile"))
    return started


@pytest.fixture(scope="module")
def segments() -> tuple[list[str], list[list[str]]]:
    return random_segments(40, seed=31)


@pytest.fixture(scope="module")
def expected(segments) -> pd.DataFrame:
    hyps, refs = segments
    return score_segments(hyps, refs, METRICS, implementation="reference")


def forbid(monkeypatch: pytest.MonkeyPatch, why: str, *names: tuple[object, str]) -> None:
    """Each (module, name) of ``names`` fails the test, saying ``why``, if it runs."""

    def forbidden(*args):
        raise AssertionError(why)

    for module, name in names:
        monkeypatch.setattr(module, name, forbidden)


def assert_auto_is_the_reference(segments, expected: pd.DataFrame) -> None:
    hyps, refs = segments
    got = score_segments(hyps, refs, METRICS, implementation="auto")
    pd.testing.assert_frame_equal(got, expected, check_exact=True)


@pytest.mark.parametrize("k", [0, 1, 17, 40])
def test_any_split_gives_the_reference_scores(
    k: int, segments, expected, not_compiled, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first k distinct segments by the reference loops, the rest by the kernels."""
    real = reference.reference_prefix
    calls: list[int] = []

    def first_k(hyps, refs, metrics, budget):
        calls.append(len(hyps))
        scores, done, spent = real(hyps[:k], refs[:k], metrics, float("inf"))
        return scores, done, spent

    monkeypatch.setattr(reference, "reference_prefix", first_k)
    assert_auto_is_the_reference(segments, expected)
    assert calls == [40] and not_compiled == ["compile"]


def test_small_job_never_touches_the_kernels(
    segments, expected, not_compiled, monkeypatch: pytest.MonkeyPatch
) -> None:
    kernels_used = ((ter_kernel, "ter_edits_batch"), (rouge_kernel, "rouge_counts"))
    forbid(monkeypatch, "a kernel ran while the reference budget lasts", *kernels_used)
    assert_auto_is_the_reference(segments, expected)
    assert kernels.reference_budget() < kernels.RENT_SECONDS


def test_spent_budget_goes_to_the_kernels(
    segments, expected, not_compiled, monkeypatch: pytest.MonkeyPatch
) -> None:
    forbid(
        monkeypatch, "the reference loops ran with no budget left", (reference, "reference_prefix")
    )
    kernels.charge(kernels.RENT_SECONDS)
    assert_auto_is_the_reference(segments, expected)
    assert not_compiled == []  # nothing left to wait for


def test_ready_kernels_are_used_at_once(
    segments, expected, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kernels, "ready", lambda kernel: True)
    why = "the reference loops ran although the kernels are ready"
    forbid(monkeypatch, why, (reference, "reference_prefix"))
    assert_auto_is_the_reference(segments, expected)


def test_reference_prefix_stops_on_its_budget(segments, expected) -> None:
    hyps, refs = segments
    scores, done, spent = reference.reference_prefix(hyps, refs, ["ter", "rougeL"], 0.0)
    assert done == 1 and spent > 0  # one segment, then the budget is gone
    scores, done, _ = reference.reference_prefix(hyps, refs, ["ter", "rougeL"], 1e9)
    assert done == len(hyps)
    for m in ("ter", "rougeL"):
        np.testing.assert_array_equal(scores[m], expected[m].to_numpy())


def test_ready_marker(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A kernel not compiled in this process is ready once its marker is in the cache folder;
    the marker's name carries the kernel's fingerprint (its sources, numba, Python)."""
    monkeypatch.setattr(kernels, "cache_dir", lambda: tmp_path)
    monkeypatch.setattr(kernels, "compiled_here", lambda kernel: False)
    assert not kernels.ready("ter")
    kernels.mark_ready("ter")
    assert kernels.ready("ter")
    (marker,) = tmp_path.glob("infrepro-ter-*.ready")
    assert kernels.fingerprint("ter") in marker.name
    assert kernels.fingerprint("ter") != kernels.fingerprint("rouge")


def test_background_compile_starts_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    spawned: list[list[str]] = []
    monkeypatch.setattr(kernels, "cache_dir", lambda: tmp_path)
    monkeypatch.setattr(kernels, "_started", False)
    monkeypatch.setattr(kernels.subprocess, "Popen", lambda args, **kw: spawned.append(args))
    kernels.start_background()
    kernels.start_background()
    assert spawned == [[sys.executable, "-m", "infrepro.metrics.kernels"]]


def test_no_background_compile_while_one_runs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The compile lock is held (another process compiles): neither a new background process
    nor `main` compiles."""
    spawned: list[object] = []
    compiled: list[object] = []
    monkeypatch.setattr(kernels, "cache_dir", lambda: tmp_path)
    monkeypatch.setattr(kernels, "_started", False)
    monkeypatch.setattr(kernels.subprocess, "Popen", lambda args, **kw: spawned.append(args))
    monkeypatch.setattr(kernels, "compile_all", lambda: compiled.append(1))
    monkeypatch.setattr(kernels.os, "nice", lambda n: 0)
    monkeypatch.setattr(kernels, "AUTOGROUP", tmp_path / "autogroup")  # never this session's
    with kernels._compile_lock(blocking=False) as held:
        assert held
        kernels.start_background()
        # flock locks belong to the open file: a second open of the file in this process
        # contends like another process would
        kernels.main()
    assert spawned == [] and compiled == []
    kernels.main()
    assert compiled == [1]


def test_auto_is_a_valid_implementation_and_others_are_not(not_compiled) -> None:
    with pytest.raises(ValueError, match="'fast', 'reference' or 'auto'"):
        score_segments(["a"], [["a"]], ["ter"], implementation="slow")  # type: ignore[arg-type]
    assert api.score_segments(["a b"], [["b a"]], ["ter"], implementation="auto")["ter"][0] == 0.5


@pytest.mark.parametrize("leader", [True, False])
def test_the_background_compile_is_low_priority_in_its_own_session_only(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, leader: bool
) -> None:
    """nice 19, and the session's scheduling group at nice 19 only when the compile leads its
    own session (as `start_background` starts it), never a shell's session."""
    niced: list[int] = []
    monkeypatch.setattr(kernels.os, "nice", niced.append)
    monkeypatch.setattr(kernels.os, "getsid", lambda pid: 41 if leader else 7)
    monkeypatch.setattr(kernels.os, "getpid", lambda: 41)
    monkeypatch.setattr(kernels, "AUTOGROUP", tmp_path / "autogroup")
    kernels._lowest_priority()
    assert niced == [19]
    assert (tmp_path / "autogroup").exists() is leader
    if leader:
        assert (tmp_path / "autogroup").read_text() == "19"
