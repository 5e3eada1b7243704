"""`score_segments`: per-segment metric scores for (hypothesis, references) pairs.

Identical (hypothesis, references) pairs are scored once, across calls too (`pair_memo`: a worker
process scores run after run). `implementation="fast"` uses the compiled
TER and ROUGE scorers (bit-identical to the packages; see `ter.py`, `rouge.py`),
`implementation="reference"` plain loops over sacrebleu and rouge-score (`reference.py`), and
`implementation="auto"` the compiled scorers once they are compiled, the reference loops before
that within a budget (`kernels.py`: no first-run compile stall).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from infrepro.core.catalog import KNOWN_METRICS
from infrepro.metrics import kernels, pair_memo, reference, rouge, sacre, ter

Implementation = Literal["fast", "reference", "auto"]


@dataclass(frozen=True)
class _Scoring:
    """What a `score_segments` call scores with, passed on to each of its steps: the metrics'
    names, the implementation and the compiled kernels' threads."""

    names: list[str]
    implementation: Implementation
    threads: int


def _check_metrics(metrics: Sequence[str]) -> list[str]:
    """Requested metric names, deduplicated in order; ValueError naming any unknown one."""
    if isinstance(metrics, str):
        metrics = [metrics]
    out: list[str] = []
    for m in metrics:
        if m not in KNOWN_METRICS:
            raise ValueError(f"unknown metric {m!r}; known metrics: {', '.join(KNOWN_METRICS)}")
        if m not in out:
            out.append(m)
    return out


def _check_pairs(
    hypotheses: Sequence[str], references: Sequence[Sequence[str]]
) -> list[tuple[str, ...]]:
    """Validate the inputs; returns each segment's references as a tuple."""
    if len(hypotheses) != len(references):
        raise ValueError(
            f"{len(hypotheses)} hypotheses but {len(references)} reference lists; "
            "they must have the same length"
        )
    refs_out = []
    for i, (h, refs) in enumerate(zip(hypotheses, references, strict=True)):
        if not isinstance(h, str):
            raise TypeError(f"hypothesis {i} is {type(h).__name__}, not str")
        if isinstance(refs, str):
            raise TypeError(f"references[{i}] is a str; pass a list of reference strings")
        refs_t = tuple(refs)
        if not refs_t:
            raise ValueError(f"segment {i} has no reference")
        for r in refs_t:
            if not isinstance(r, str):
                raise TypeError(f"a reference of segment {i} is {type(r).__name__}, not str")
        refs_out.append(refs_t)
    return refs_out


def score_segments(
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str]],
    metrics: Sequence[str],
    *,
    implementation: Implementation = "fast",
    threads: int = 1,
) -> pd.DataFrame:
    """Score each segment; one row per input segment, one float64 column per requested metric.

    Scales follow docs/method.md §2: `ter` is sacrebleu's TER / 100 (may exceed 1), `rouge*`
    rouge-score F-measures with stemming, `bleu`/`chrf` sacrebleu sentence scores / 100.
    `threads > 1` runs the compiled kernels over that many numba threads (same results).
    """
    names = _check_metrics(metrics)
    refs = _check_pairs(hypotheses, references)
    if implementation not in ("fast", "reference", "auto"):
        raise ValueError(
            f"implementation must be 'fast', 'reference' or 'auto', not {implementation!r}"
        )
    if int(threads) < 1:
        raise ValueError(f"threads must be >= 1, not {threads!r}")

    distinct: dict[tuple[str, tuple[str, ...]], int] = {}
    inverse = np.fromiter(
        (distinct.setdefault((h, r), len(distinct)) for h, r in zip(hypotheses, refs, strict=True)),
        dtype=np.int64,
        count=len(refs),
    )
    d_hyp = [k[0] for k in distinct]
    d_refs = [k[1] for k in distinct]

    how = _Scoring(names, implementation, threads)
    if implementation == "reference":  # verification: every pair scored by the packages
        scores = _score_distinct(d_hyp, d_refs, how)
    else:
        scores = _score_remembered(d_hyp, d_refs, how)

    return pd.DataFrame(
        {m: np.asarray(scores[m], dtype=np.float64)[inverse] for m in names},
        index=pd.RangeIndex(len(refs)),
        columns=names,
    )


def _score_remembered(
    hypotheses: list[str], references: list[tuple[str, ...]], how: _Scoring
) -> dict[str, np.ndarray]:
    """`_score_distinct` for the pairs this process has not scored yet (`pair_memo.PAIRS`)."""
    keys = [pair_memo.digest(h, r) for h, r in zip(hypotheses, references, strict=True)]
    scores = pair_memo.PAIRS.lookup(keys, how.names)
    todo = np.flatnonzero(~scores.pop(""))
    if len(todo):
        new = _score_distinct([hypotheses[i] for i in todo], [references[i] for i in todo], how)
        pair_memo.PAIRS.store([keys[i] for i in todo], new)
        for m in how.names:
            scores[m][todo] = new[m]
    return scores


def _score_distinct(
    hypotheses: list[str], references: list[tuple[str, ...]], how: _Scoring
) -> dict[str, np.ndarray]:
    """Every metric of `how.names` for distinct pairs."""
    scores: dict[str, np.ndarray] = {}
    done = 0  # segments the auto implementation scored with the reference packages
    if how.implementation == "auto":
        scores, done = _reference_while_compiling(hypotheses, references, how.names)
    if done < len(hypotheses) or not hypotheses:
        rest = _ter_rouge(hypotheses[done:], references[done:], how)
        for m, values in rest.items():
            scores[m] = np.concatenate([scores[m], values]) if m in scores else values
    if "bleu" in how.names:
        scores["bleu"] = sacre.bleu_scores(hypotheses, references)
    if "chrf" in how.names:
        scores["chrf"] = sacre.chrf_scores(hypotheses, references)
    return scores


def _ter_rouge(
    hypotheses: list[str], references: list[tuple[str, ...]], how: _Scoring
) -> dict[str, np.ndarray]:
    """TER and ROUGE (those of `how.names`) with the compiled scorers or, for the reference
    implementation, the packages."""
    names, threads = how.names, how.threads
    fast = how.implementation != "reference"
    out: dict[str, np.ndarray] = {}
    rouge_types = [m for m in names if m.startswith("rouge")]
    if "ter" in names:
        out["ter"] = (
            ter.ter_scores(hypotheses, references, threads)
            if fast
            else reference.ter_reference(hypotheses, references)
        )
    if rouge_types:
        out.update(
            rouge.rouge_scores(hypotheses, references, rouge_types, threads)
            if fast
            else reference.rouge_reference(hypotheses, references, rouge_types)
        )
    if fast:
        for kernel in {kernels.kernel_for(m) for m in out}:
            kernels.mark_ready(kernel)  # type: ignore[arg-type]
    return out


def _reference_while_compiling(
    hypotheses: list[str], references: list[tuple[str, ...]], names: list[str]
) -> tuple[dict[str, np.ndarray], int]:
    """`implementation="auto"` before the kernels are compiled: the first segments' TER and ROUGE
    with the reference packages, within this process' remaining budget (`kernels.py`), while a
    background process compiles the kernels. Returns their scores and how many segments."""
    metrics = [m for m in names if kernels.kernel_for(m)]
    needed = {kernels.kernel_for(m) for m in metrics}
    if all(kernels.ready(k) for k in needed):  # type: ignore[arg-type]
        return {}, 0
    budget = kernels.reference_budget()
    if budget <= 0:
        return {}, 0
    kernels.start_background()
    scores, done, spent = reference.reference_prefix(hypotheses, references, metrics, budget)
    kernels.charge(spent)
    return scores, done
