"""`infrepro.metrics.score_segments`: interface, validation, deduplication, threads, fast-path use,
fallbacks, and BLEU/chrF against sacrebleu."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from rouge_score.rouge_scorer import RougeScorer
from sacrebleu.metrics import BLEU, CHRF, TER

from infrepro.metrics import (
    BETTER,
    KNOWN_METRICS,
    TER_BACKEND,
    _jit,
    api,
    rouge,
    rouge_kernel,
    score_segments,
    ter,
    ter_kernel,
)

HYPS = [
    "the cat sat on the mat",
    "a dog ran in the park today",
    "The cat sat on the mat",
    "",
    "completely different words here",
    "the cat sat on the mat",
]
REFS = [
    ["the cat is on the mat"],
    ["today a dog ran in the park", "a dog was running in a park"],
    ["the mat had a cat on it"],
    ["an empty hypothesis"],
    [""],
    ["the cat is on the mat"],
]


def _sacrebleu(metric, hyps, refs) -> np.ndarray:
    return np.array(
        [metric.sentence_score(h, list(r)).score / 100 for h, r in zip(hyps, refs, strict=True)]
    )


def test_known_metrics_and_directions() -> None:
    assert KNOWN_METRICS == ("ter", "rouge1", "rouge2", "rougeL", "rougeLsum", "bleu", "chrf")
    assert set(BETTER) == set(KNOWN_METRICS)
    assert BETTER["ter"] == "lower"
    assert all(BETTER[m] == "higher" for m in KNOWN_METRICS if m != "ter")


def test_output_frame_shape_and_values() -> None:
    df = score_segments(HYPS, REFS, list(KNOWN_METRICS))
    assert list(df.columns) == list(KNOWN_METRICS)
    assert len(df) == len(HYPS)
    assert isinstance(df.index, pd.RangeIndex)
    assert all(df[c].dtype == np.float64 for c in df.columns)
    np.testing.assert_array_equal(df["ter"].to_numpy(), _sacrebleu(TER(), HYPS, REFS))
    np.testing.assert_array_equal(
        df["bleu"].to_numpy(), _sacrebleu(BLEU(effective_order=True), HYPS, REFS)
    )
    np.testing.assert_array_equal(df["chrf"].to_numpy(), _sacrebleu(CHRF(), HYPS, REFS))
    scorer = RougeScorer(["rouge1", "rougeLsum"], use_stemmer=True)
    for i, (h, r) in enumerate(zip(HYPS, REFS, strict=True)):
        best = scorer.score_multi(r, h)
        assert df["rouge1"].iloc[i] == best["rouge1"].fmeasure
        assert df["rougeLsum"].iloc[i] == best["rougeLsum"].fmeasure


def test_metric_subset_order_and_duplicates() -> None:
    df = score_segments(HYPS, REFS, ["rougeL", "ter", "rougeL"])
    assert list(df.columns) == ["rougeL", "ter"]


def test_reference_implementation_matches_fast() -> None:
    fast = score_segments(HYPS, REFS, list(KNOWN_METRICS))
    ref = score_segments(HYPS, REFS, list(KNOWN_METRICS), implementation="reference")
    pd.testing.assert_frame_equal(fast, ref, check_exact=True)


def test_threads_give_identical_results() -> None:
    rng = np.random.default_rng(3)
    words = np.array("a b c d e the cat dog runs ran , .".split())
    hyps = [" ".join(rng.choice(words, rng.integers(0, 25))) for _ in range(300)]
    refs = [[" ".join(rng.choice(words, rng.integers(0, 25)))] for _ in range(300)]
    metrics = ["ter", "rouge1", "rouge2", "rougeL", "rougeLsum"]
    one = score_segments(hyps, refs, metrics, threads=1)
    two = score_segments(hyps, refs, metrics, threads=2)
    pd.testing.assert_frame_equal(one, two, check_exact=True)


def test_empty_input() -> None:
    df = score_segments([], [], ["ter", "rouge1", "bleu"])
    assert list(df.columns) == ["ter", "rouge1", "bleu"]
    assert len(df) == 0


@pytest.mark.parametrize("bad", ["bleurt", "ROUGE1", "rouge3"])
def test_unknown_metric_is_named(bad: str) -> None:
    with pytest.raises(ValueError, match=bad):
        score_segments(HYPS, REFS, ["ter", bad])


def test_invalid_inputs() -> None:
    with pytest.raises(ValueError, match="same length"):
        score_segments(HYPS, REFS[:-1], ["ter"])
    with pytest.raises(ValueError, match="no reference"):
        score_segments(["a"], [[]], ["ter"])
    with pytest.raises(TypeError):
        score_segments(["a"], ["a"], ["ter"])  # a bare string is not a list of references
    with pytest.raises(ValueError, match="implementation"):
        score_segments(HYPS, REFS, ["ter"], implementation="slow")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="threads"):
        score_segments(HYPS, REFS, ["ter"], threads=0)


def test_fast_path_is_in_use(monkeypatch: pytest.MonkeyPatch) -> None:
    """TER_BACKEND is numba, and score_segments runs the compiled kernels, not the packages."""
    assert TER_BACKEND == "numba"
    assert rouge.ROUGE_BACKEND == "numba"
    calls: dict[str, int] = {"ter": 0, "rouge": 0}
    ter_batch = ter_kernel.ter_edits_batch
    rouge_batch = rouge_kernel.rouge_counts

    def ter_spy(*args):
        calls["ter"] += args[-1] - args[-2]  # pairs k0..k1
        return ter_batch(*args)

    def rouge_spy(*args):
        calls["rouge"] += args[1] - args[0]
        return rouge_batch(*args)

    def forbidden(*args, **kwargs):
        raise AssertionError("the reference package was called on the fast path")

    monkeypatch.setattr(ter_kernel, "ter_edits_batch", ter_spy)
    monkeypatch.setattr(rouge_kernel, "rouge_counts", rouge_spy)
    monkeypatch.setattr(TER, "sentence_score", forbidden)
    monkeypatch.setattr(RougeScorer, "score", forbidden)
    df = score_segments(HYPS, REFS, ["ter", "rouge1", "rougeLsum"])
    assert df.notna().all().all()
    # deduplication: segments 0 and 5 are the same pair; segment 1 has two references
    n_pairs = sum(len(r) for r in REFS) - 1
    assert calls == {"ter": n_pairs, "rouge": n_pairs}


def test_duplicates_scored_once_and_copied() -> None:
    hyps = ["x y z"] * 5 + ["y x z"]
    refs = [["x y z w"]] * 5 + [["x y z w"]]
    df = score_segments(hyps, refs, ["ter", "rougeL"])
    assert df.iloc[:5].nunique().eq(1).all()
    assert df["ter"].iloc[0] == TER().sentence_score("x y z", ["x y z w"]).score / 100


def test_sacrebleu_fallback_when_numba_is_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    fast = score_segments(HYPS, REFS, ["ter", "rouge2"])

    def forbidden(*args):
        raise AssertionError("kernel called on the fallback path")

    monkeypatch.setattr(ter, "TER_BACKEND", "sacrebleu")
    monkeypatch.setattr(rouge, "ROUGE_BACKEND", "rouge-score")
    monkeypatch.setattr(ter_kernel, "ter_edits_batch", forbidden)
    monkeypatch.setattr(rouge_kernel, "rouge_counts", forbidden)
    slow = score_segments(HYPS, REFS, ["ter", "rouge2"])
    pd.testing.assert_frame_equal(fast, slow, check_exact=True)


def test_kernel_failure_defers_to_sacrebleu(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pair the kernel flags (-1: undefined trace cell) is recomputed by sacrebleu."""
    batch = ter_kernel.ter_edits_batch

    def flag_first(tokens, offsets, pair_h, pair_r, out, k0, k1):
        batch(tokens, offsets, pair_h, pair_r, out, k0, k1)
        if k0 == 0 and k1 > 0:
            out[0] = -1

    monkeypatch.setattr(ter_kernel, "ter_edits_batch", flag_first)
    df = score_segments(HYPS, REFS, ["ter"])
    np.testing.assert_array_equal(df["ter"].to_numpy(), _sacrebleu(TER(), HYPS, REFS))


def test_jit_falls_back_without_a_writable_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """numba raises RuntimeError at decoration when no cache folder is usable: compile uncached."""
    seen: list[bool] = []

    class FakeNumba:
        @staticmethod
        def njit(cache: bool, nogil: bool):
            seen.append(cache)
            if cache:
                raise RuntimeError("cannot cache function: no locator available")
            return lambda fn: fn

    monkeypatch.setattr(_jit, "_numba", FakeNumba)

    def fn(x: int) -> int:
        return x + 1

    assert _jit.jit()(fn)(1) == 2
    assert seen == [True, False]


def test_public_names() -> None:
    import infrepro.metrics as m

    assert m.score_segments is api.score_segments
    assert set(m.__all__) == {"BETTER", "KNOWN_METRICS", "TER_BACKEND", "score_segments"}


def test_pairs_scored_in_an_earlier_call_are_not_scored_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A worker scores run after run: a pair another run had is looked up, not scored, with
    the same score; `implementation="reference"` (verification) always scores."""
    first = score_segments(HYPS, REFS, ["ter", "rougeL", "bleu"])
    calls = {"ter": 0, "rouge": 0}
    ter_batch, rouge_batch = ter_kernel.ter_edits_batch, rouge_kernel.rouge_counts

    def ter_spy(*args):
        calls["ter"] += args[-1] - args[-2]
        return ter_batch(*args)

    def rouge_spy(*args):
        calls["rouge"] += args[1] - args[0]
        return rouge_batch(*args)

    monkeypatch.setattr(ter_kernel, "ter_edits_batch", ter_spy)
    monkeypatch.setattr(rouge_kernel, "rouge_counts", rouge_spy)
    hyps = [*HYPS, "a new hypothesis"]
    refs = [*REFS, ["one reference"]]
    second = score_segments(hyps, refs, ["ter", "rougeL", "bleu"])
    assert calls == {"ter": 1, "rouge": 1}  # only the new pair
    pd.testing.assert_frame_equal(second.iloc[: len(HYPS)], first, check_exact=True)
    again = score_segments(hyps, refs, ["ter", "rougeL", "bleu"], implementation="reference")
    pd.testing.assert_frame_equal(again, second, check_exact=True)
    assert calls == {"ter": 1, "rouge": 1}


def test_pair_keys_separate_hypothesis_and_references() -> None:
    from infrepro.metrics.pair_memo import digest

    keys = {
        digest("a b", ["c"]),
        digest("a", ["b", "c"]),
        digest("a", ["b c"]),
        digest("a\0b", ["c"]),
        digest("", ["a b", "c"]),
    }
    assert len(keys) == 5 and all(len(k) == 16 for k in keys)
