"""The researcher of issue 29 through the decision (docs/method.md §4e.9, §4e.10): simulated
experiments of per-segment scores whose runs arrive one per system per look, decided as the
``summary`` analysis decides them.

A and B get ``last`` runs each (``infrepro.validation.few_runs``' design: 1,000 segments,
segment SD 0.2, residual SD 0.1, A's run SD 0.02, B's 0.02 × the run-SD ratio; B better by
``effect`` run-mean SDs of A); the first ``first`` runs of each are look 1, then one run per
system per look. One call of ``decide`` on all runs with the sequential path of §4e.10 gives:

- the plan's verdict (``analyses.sequential.max_runs`` = ``last``; O'Brien-Fleming and Pocock
  type) and the runs per system when it was reached (the look it was read at: the first
  crossing stops the researcher, and the boundaries of a look never depend on later ones, so
  the analysis at the last look holds every earlier look's outcome);
- the anytime-valid verdict (no maximum) on the same runs;
- today's single-look verdict at every look (the decision's test of the pair in each look's
  fit of model M, p < α: what ``decide`` on the runs so far says for a family of one), hence
  the naive researcher's first claim; and the fixed ``last``-run design's verdict.

The benchmark's driver is ``benchmarks/sequential_decision.py``; a quick version is in
tests/unit/validation/test_looks_quick.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from infrepro.analyses.common.data import MetricData
from infrepro.analyses.common.fitlog import FitLog
from infrepro.analyses.decision.looks import Sequential, SequentialOptions, looks_of
from infrepro.analyses.decision.summary import Settings, decide
from infrepro.core.decisions import BETTER, FAMILY_BASELINE, WORSE, PairDecision
from infrepro.core.schema import with_defaults
from infrepro.core.vocabulary import LOOK, RUN
from infrepro.validation.few_runs import ALPHA, METRIC, RANK_DRAWS, pair_experiment

CLAIM = {BETTER: 1, WORSE: -1}


@dataclass(frozen=True)
class Claim:
    """A rule's outcome in one experiment: the direction claimed (+1 B better, −1 A better, 0
    none) and the runs per system when the researcher stopped (``last`` without a claim)."""

    direction: int
    runs: int


@dataclass(frozen=True)
class LookOutcome:
    """Every rule's outcome in one experiment."""

    naive: Claim
    obrien_fleming: Claim
    pocock: Claim
    anytime: Claim
    fixed: Claim


def look_experiment(first: int, last: int, ratio: float, effect: float, seed: int) -> MetricData:
    """A pair experiment of ``last`` runs per system with a look per run after the first
    ``first`` (the runs sheet's look column)."""
    data = pair_experiment(last, last, ratio, effect, seed)
    runs = data.runs.copy()
    index = [int(str(r).rsplit("_", 1)[1]) for r in runs[RUN]]  # run i of its system, from 0
    runs[LOOK] = [str(max(i + 1 - first, 0) + 1) for i in index]
    return replace(data, runs=runs)


def _claim(record: PairDecision, last: int) -> Claim:
    direction = CLAIM.get(record.verdict, 0)
    runs = record.look_runs_system if direction else last
    return Claim(direction, int(runs))


def outcome(first: int, last: int, ratio: float, effect: float, seed: int) -> LookOutcome:
    """Every rule's outcome in one experiment (see the module docstring)."""
    data = look_experiment(first, last, ratio, effect, seed)
    options = with_defaults("analyses", {"sequential": {"max_runs": last}})
    data = replace(data, options=options)
    log = FitLog(METRIC)
    settings = Settings(alpha=ALPHA, draws=RANK_DRAWS)
    looks = looks_of(data.runs)
    assert looks is not None
    plan = Sequential(data, log, ALPHA, SequentialOptions.of(options["sequential"]), looks)
    fixed: list[PairDecision] = []

    def revise(records: list[PairDecision], model: object) -> list[PairDecision]:
        if not fixed:
            fixed.extend(r for r in records if r.family == FAMILY_BASELINE)
        return plan(records, model)  # type: ignore[arg-type]

    made = decide(data, log, settings, revise)
    record = next(r for r in made.records if r.family == FAMILY_BASELINE)
    pocock = replace(plan, options=replace(plan.options, spending="pocock"), rows=[])
    anytime = replace(plan, options=replace(plan.options, max_runs=None), rows=[])
    fits = plan.fits(None)
    naive = Claim(0, last)
    for fit in fits:
        model = fit.model
        if model is None or not bool(model.fit.converged):  # type: ignore[attr-defined]
            continue
        contrast = model.pair("A", "B")  # type: ignore[attr-defined]
        if contrast.test.log10_p < math.log10(ALPHA):
            naive = Claim(1 if contrast.delta.estimate > 0 else -1, fit.runs["B"])
            break
    return LookOutcome(
        naive=naive,
        obrien_fleming=_claim(record, last),
        pocock=_claim(pocock.revise(fixed[0], fits), last),
        anytime=_claim(anytime.revise(fixed[0], fits), last),
        fixed=Claim(CLAIM.get(fixed[0].verdict, 0), last),
    )


def naive_by_decide(first: int, last: int, ratio: float, effect: float, seed: int) -> Claim:
    """The naive researcher's first claim with ``decide`` itself run on the runs of each look
    (the check that the fits' p above is what the decision says)."""
    data = look_experiment(first, last, ratio, effect, seed)
    settings = Settings(alpha=ALPHA, draws=RANK_DRAWS)
    looks = looks_of(data.runs)
    assert looks is not None
    for k in range(1, max(looks.values()) + 1):
        kept = [r for r, look in looks.items() if look <= k]
        runs = data.runs[data.runs[RUN].isin(kept)].reset_index(drop=True)
        rows = data.evaluation[data.evaluation[RUN].isin(kept)].reset_index(drop=True)
        part = replace(data, runs=runs.drop(columns=[LOOK]), evaluation=rows)
        records = decide(part, FitLog(METRIC), settings).records
        record = next(r for r in records if r.family == FAMILY_BASELINE)
        if record.directional:
            return Claim(CLAIM[record.verdict], record.runs_system)
    return Claim(0, last)


def as_row(result: LookOutcome) -> dict[str, dict[str, int]]:
    """An outcome as plain data (the benchmark's store)."""
    return {
        name: {"direction": claim.direction, "runs": claim.runs}
        for name, claim in (
            ("naive", result.naive),
            ("obrien_fleming", result.obrien_fleming),
            ("pocock", result.pocock),
            ("anytime", result.anytime),
            ("fixed", result.fixed),
        )
    }
