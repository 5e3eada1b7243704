"""The user who declares nothing, through the workflow's own code (issue 41, acceptance 1;
docs/method.md §4e.12): runs arrive one per system per rerun (3 runs each at the first run, up
to 10), no look column, and the user stops at the first directional verdict.

Each rerun is a look: the look ledger is written by the workflow's functions
(``infrepro.io.ledger``: ``looks_of`` checks it and names the pending runs, ``append_look``
records them as a completed run does; the runs' content digests as scores mode computes them),
and the runs table gets the recorded looks as the ``prepare_runs`` / ``import_scores`` jobs give
them (``with_recorded_looks``). The first look's verdict is the fixed-sample decision on its
runs; from the second look on the decision is the summary analysis' own (``decide`` with its
sequential path, ``sequential_path``), read at the last look: the anytime-valid verdict is
directional at the last look exactly when the confidence sequence left 0 at some earlier look
(its running intersection), which is when the user would have stopped.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from infrepro.analyses.common.data import MetricData
from infrepro.analyses.common.fitlog import FitLog
from infrepro.analyses.decision.summary import Settings, decide, sequential_path
from infrepro.core.decisions import ANYTIME, BETTER, FAMILY_BASELINE, RECORDED_LOOKS, WORSE
from infrepro.core.schema import with_defaults
from infrepro.core.vocabulary import RUN, SYSTEM
from infrepro.experiment.load import run_digests
from infrepro.io.ledger import CurrentRun, append_look, looks_of, run_looks
from infrepro.io.runs import with_recorded_looks
from infrepro.validation.few_runs import ALPHA, METRIC, RANK_DRAWS, pair_experiment

FIRST, LAST = 3, 10  # runs per system at the first look and at the last
PLAN = "anytime-valid, mixture scale 1.5, alpha 0.05"  # the defaults (workflow.ledger.plan_of)
CLAIM = {BETTER: 1, WORSE: -1}


@dataclass(frozen=True)
class UserOutcome:
    """One experiment: the first look's fixed verdict (+1 B better, −1 A better, 0 none), the
    sequential verdict at the last look, the look it was first directional at (0: none),
    whether the record named the undeclared sequence, and whether the first look's verdict
    rests on the band of run-SD ratios (its record's ``assumption``, docs/method.md §4c.5)."""

    first_look: int
    sequential: int
    claimed_at: int
    named: bool
    first_assumes: bool = False

    @property
    def claim(self) -> int:
        """What the user claims: the first look's verdict if directional, else the sequence's."""
        return self.first_look or self.sequential

    @property
    def unmarked_claim(self) -> int:
        """What the user claims with no assumption named: the first look's verdict if it is
        directional and rests on none, else the sequence's (anytime-valid, any ratio), as for a
        user who reads a marked verdict as no claim and reruns on."""
        return (0 if self.first_assumes else self.first_look) or self.sequential


def _runs_at(data: MetricData, n: int) -> MetricData:
    """The first ``n`` runs of each system (run ids ``A_0``, ``A_1``, ...)."""
    kept = {r for r in data.runs[RUN] if int(str(r).rsplit("_", 1)[1]) < n}
    runs = data.runs[data.runs[RUN].isin(kept)].reset_index(drop=True)
    rows = data.evaluation[data.evaluation[RUN].isin(kept)].reset_index(drop=True)
    return replace(data, runs=runs, evaluation=rows)


def _verdict(data: MetricData, sequential: bool) -> tuple[int, int, bool, bool]:
    log = FitLog(METRIC)
    settings = Settings(alpha=ALPHA, draws=RANK_DRAWS)
    revise = sequential_path(data, log, settings) if sequential else None
    records = decide(data, log, settings, revise).records
    record = next(r for r in records if r.family == FAMILY_BASELINE)
    named = record.sequential == ANYTIME and record.look_source == RECORDED_LOOKS
    direction = CLAIM.get(record.verdict, 0)
    return direction, (record.look if direction else 0), named, bool(record.assumption)


def user_outcome(ratio: float, effect: float, seed: int, segments: int = 100) -> UserOutcome:
    """One experiment of the user above (A's run SD 0.02, B's 0.02 × ``ratio``; B better by
    ``effect`` run-mean SDs of A)."""
    full = pair_experiment(LAST, LAST, ratio, effect, seed, segments)
    full = replace(full, options=with_defaults("analyses", {}))
    digests = run_digests(full.evaluation, [METRIC])
    systems = dict(zip(full.runs[RUN].astype(str), full.runs[SYSTEM].astype(str), strict=True))
    with tempfile.TemporaryDirectory() as folder:
        ledger = Path(folder) / "scores.ledger.tsv"
        for n in range(FIRST, LAST + 1):  # each rerun: the ledger checked, then recorded
            part = _runs_at(full, n)
            current = [
                CurrentRun(systems[str(r)], str(r), str(r), digests[str(r)]) for r in part.runs[RUN]
            ]
            looks = looks_of(ledger, current, PLAN)
            append_look(ledger, {c.run: c for c in current}, looks, "simulated")
    first, _, _, assumes = _verdict(_runs_at(full, FIRST), sequential=False)
    recorded = replace(full, runs=with_recorded_looks(full.runs, run_looks(looks)))
    direction, at, named, _ = _verdict(recorded, sequential=True)
    return UserOutcome(first, direction, at, named, assumes)
