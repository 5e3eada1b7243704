"""The decision: its words, its estimands and its record, spelled once (docs/method.md §4c).

Every claim the report states about a pair of systems is one :class:`PairDecision`, made by the
``summary`` analysis (``infrepro/analyses/decision/summary.py``) and written to ``decisions.csv``;
the
report reads the rows back into the same records (``infrepro/report/decisions.py``) and renders
them. The verdict words, the estimands, the families and the adjustment methods are spelled
here and nowhere else.

Import-light on purpose (standard library and infrepro.core.vocabulary only): the report and the
workflow read it without the analyses.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from decimal import Decimal

# -- verdicts (docs/method.md §4c.5) ------------------------------------------------------------
BETTER = "better"
WORSE = "worse"
NOT_SHOWN = "no difference shown"
DIRECTIONAL = (BETTER, WORSE)

# best vs best against the verdict, with dev-selected best runs (§4b.6)
SURVIVES = "survives retraining"
REVERSED = "reversed over retraining"
NOT_SHOWN_TO_SURVIVE = "not shown to survive"

# the facet-aware reading beside the verdict (§4c.5): does it generalise to other levels of the
# shared facets? Never a downgrade of the verdict.
GENERALISES = "generalises"
NOT_SHOWN_BEYOND = "not shown"
NOT_JUDGED = "not judged"
JUDGED_DF = 4.0  # below: a facet-aware non-significance cannot tell (docs/method.md §4b.6)

# the assumption a directional verdict rests on, when it rests on one (§4c.5, issue 41): the
# calibrated test's band of run-mean SD ratios, where Berger and Boos' test (any ratio) does not
# reach the same verdict; '' when the verdict holds at any ratio


def band_assumption(band: float) -> str:
    """``run-mean SDs within a factor of 2``: what a verdict of the calibrated test assumes
    where the test valid at any ratio does not confirm it."""
    return f"run-mean SDs within a factor of {band:g}"


# -- estimands (docs/method.md §4c.4): the values of the ``comparison`` column -------------------
SYSTEMS = "systems"
VS_OUTPUT = "vs single output"
OUTPUTS = "outputs"
ONE_RUN = "one run: its output's mean; how it varies with retraining is unknown"


def comparison_of(runs_reference: int, runs_system: int) -> str:
    """The estimand a pair's run counts allow (§4c.4)."""
    single = (runs_reference < 2) + (runs_system < 2)
    return (SYSTEMS, VS_OUTPUT, OUTPUTS)[single]


def estimand_text(comparison: str, reference: str, system: str, runs_reference: int) -> str:
    """The estimand in words, naming the systems; for a "vs single output" pair the side with
    one run is the reference when ``runs_reference`` < 2, the system otherwise."""
    if comparison == SYSTEMS:
        return f"{system} vs {reference}: means over retraining"
    if comparison == OUTPUTS:
        return f"{system}'s vs {reference}'s single outputs, on these segments"
    single, other = (reference, system) if runs_reference < 2 else (system, reference)
    return f"{other}'s mean over retraining vs {single}'s single output"


# -- families and adjustment (docs/method.md §4c.5, §4c.10) ----------------------------------------
FAMILY_BASELINE = "baseline"  # analyses.comparisons
FAMILY_ALL = "all_pairs"
FAMILIES = (FAMILY_BASELINE, FAMILY_ALL)
PAIRS_OF_FAMILY = "family"  # analyses.conditional_pairs: the family's pairs, or FAMILY_ALL
CONDITIONAL_PAIRS = (PAIRS_OF_FAMILY, FAMILY_ALL)


def choice(option: str, value: object, allowed: tuple[str, ...]) -> str:
    """``value`` of the option as text, refused unless one of ``allowed`` (the API's check of
    what the config schema's enum checks for the workflow)."""
    chosen = str(value)
    if chosen not in allowed:
        raise ValueError(f"{option}: {chosen!r}; choose from {allowed}")
    return chosen


STEP_DOWN = "step-down"  # analyses.adjust (§4c.10)
MAX_T = "max-t"
HOLM = "holm"
BONFERRONI = "bonferroni"  # what a family's sequential verdicts use, α / m each (§4e.11)
SIMULTANEOUS = "simultaneous"  # the kinds of an improvement's interval, before its level
UNADJUSTED = "unadjusted"
STEP_LEVEL = STEP_DOWN  # each interval at its step's level (§4c.10)
REPEATED = "repeated"
ANYTIME_VALID = "anytime-valid"
MEANS_LEVEL = 0.95  # the model means' and ranks' intervals: descriptive, whatever α (§4c.2, §4c.7)


def level_text(confidence: float) -> str:
    """A confidence level as the labels write it: ``95 %``, ``99 %``, ``80 %``, ``99.9 %``
    (decimal, so that 1 − 0.1 reads ``90 %``)."""
    percent = (Decimal(repr(float(confidence))) * 100).normalize()
    return f"{percent:f} %"


def interval_label(kind: str, alpha: float) -> str:
    """An improvement's interval as its record names it: its kind and the level 1 − α it was
    computed at, ``simultaneous 95 %``, ``unadjusted 99 %``, ``repeated 80 %``."""
    return f"{kind} {level_text(1 - Decimal(repr(float(alpha))))}"


def interval_parts(label: str) -> tuple[str, str]:
    """An interval's label (:func:`interval_label`) as its kind and its level: ``simultaneous
    95 %`` → (``simultaneous``, ``95 %``)."""
    kind, _, level = label.partition(" ")
    return kind, level


def family_label(family: str, size: int, adjust: str) -> str:
    """``max-t over 2 comparisons with the baseline`` / ``Holm over 3 pairs``; ``one
    comparison, unadjusted`` when the family has one member (nothing to adjust)."""
    if size == 1:
        return "one comparison, unadjusted"
    scope = "comparisons with the baseline" if family == FAMILY_BASELINE else "pairs"
    return f"{method_name(adjust)} over {size} {scope}"


def method_name(adjust: str) -> str:
    """An adjustment as the labels name it: ``step-down``, ``max-t``, ``Bonferroni``,
    ``Holm``."""
    return {STEP_DOWN: "step-down", MAX_T: "max-t", BONFERRONI: "Bonferroni", HOLM: "Holm"}[adjust]


def interval_kind(adjust: str, alpha: float) -> str:
    """What an improvement's interval is under an adjustment method at level 1 − α: the
    single-step procedures' are simultaneous, the step-down's at their step's level, Holm's
    unadjusted."""
    kinds = {STEP_DOWN: STEP_LEVEL, MAX_T: SIMULTANEOUS, BONFERRONI: SIMULTANEOUS}
    return interval_label(kinds.get(adjust, UNADJUSTED), alpha)


def df_number(df: float, digits: int = 3) -> str:
    """Degrees of freedom as every label prints them: ``digits`` significant digits (``18.9``,
    ``2.41``), a whole number once that would need an exponent (``2282``, not ``2.28e+03``:
    counts are plain digits throughout the report)."""
    if math.isfinite(df) and abs(df) >= 10**digits - 0.5:
        return str(round(df))
    return f"{df:.{digits}g}"


# -- sequential looks (docs/method.md §4e.10): the record's mode, the plan's actions ------------
PLAN = "plan"  # the ``sequential`` field: a declared plan (analyses.sequential.max_runs)
ANYTIME = "anytime-valid"  # no maximum declared: the confidence sequence of §4e.7
# the ``look_source`` field: where the looks come from (§4e.12); '' for a single look
DECLARED_LOOKS = "look column"
RECORDED_LOOKS = "ledger"
STOP_SIGNIFICANT = "stop: significant"  # the ``action`` field (stats.sequential_plan.Action)
STOP_FUTILITY = "stop: futility"
STOP_MAXIMUM = "stop: maximum reached"
STOP_DECLARED = "stop: declared final"  # analyses.sequential.final before the maximum (§4e.3)
CONTINUE = "continue"
TARGET_CONDITIONAL_POWER = 0.8  # what "continue: about N more runs" aims at
FIRST_LOOK = 3  # a proposed sequential design looks at 3, 4, ..., N runs per system (§4e.8)
SPENDING_WORDS = {
    "obrien_fleming": "O'Brien-Fleming type",
    "pocock": "Pocock type",
    "none": "final look only",
}


def runs_text(n_a: float, n_b: float) -> str:
    """``5`` (both systems) or ``6 + 18`` (reference + system)."""
    a, b = int(n_a), int(n_b)
    return str(a) if a == b else f"{a} + {b}"


def runs_phrase(n_a: float, n_b: float) -> str:
    """``10 runs per system`` or ``6 + 18 runs`` (reference + system)."""
    per_system = " per system" if int(n_a) == int(n_b) else ""
    return f"{runs_text(n_a, n_b)} runs{per_system}"


def plan_sentence(
    action: str,
    winner: str,
    look: int,
    runs: tuple[float, float],
    maxima: tuple[float, float],
    conditional_power: float,
    more_runs: float | None,
    target_power: float = TARGET_CONDITIONAL_POWER,
) -> str:
    """A declared plan's decision in words (§4e.6), e.g. ``stop: B better (look 2, 5 of 10 runs
    per system)``, ``continue (look 3, 6 of 10 runs per system): about 3 more runs per system
    for 80 % conditional power at the minimum effect``."""
    where = f"look {look}, {runs_text(*runs)} of {runs_phrase(*maxima)}"
    target = f"{target_power:.0%}"
    if action == STOP_SIGNIFICANT:
        return f"stop: {winner} better ({where})"
    if action == STOP_FUTILITY:
        return (
            f"stop for futility ({where}): conditional power {conditional_power:.0%} at the "
            "minimum effect"
        )
    if action == STOP_MAXIMUM:
        return f"stop: no difference shown at the planned maximum ({where})"
    if action == STOP_DECLARED:
        return (
            f"stop: no difference shown at the look declared final ({where}; "
            "analyses.sequential.final)"
        )
    if math.isnan(conditional_power):
        return f"continue ({where})"
    if more_runs is None or math.isnan(more_runs):
        return (
            f"continue ({where}): conditional power {conditional_power:.0%} at the minimum "
            f"effect; more than {MAX_MORE_RUNS} runs per system for {target}"
        )
    return (
        f"continue ({where}): about {int(more_runs)} more runs per system for {target} "
        "conditional power at the minimum effect"
    )


MAX_MORE_RUNS = 200  # how far "runs still needed" looks (stats.group_sequential.MAX_EXTRA_RUNS)


def look_phrase(look: int, source: str) -> str:
    """``look 3``, or ``look 3 of an undeclared sequence`` for looks the ledger recorded."""
    return f"look {look} of an undeclared sequence" if source == RECORDED_LOOKS else f"look {look}"


def anytime_sentence(action: str, winner: str, look: int, pairs: int, source: str = "") -> str:
    """The anytime-valid mode's decision in words (§4e.7)."""
    at = look_phrase(look, source)
    if action == STOP_SIGNIFICANT:
        return f"stop: {winner} better (anytime-valid, from {at}, {pairs} pairs of runs)"
    return (
        f"continue (anytime-valid, {at}, {pairs} pairs of runs): valid however often "
        "the analysis is rerun"
    )


def single_look(runs_reference: int, runs_system: int) -> dict[str, object]:
    """The sequential fields of a record read at one look (no look column, §4e.10)."""
    return {
        "sequential": "",
        "look_source": "",
        "spending": "",
        "looks": 1,
        "look": 1,
        "look_runs_reference": runs_reference,
        "look_runs_system": runs_system,
        "max_runs_reference": math.nan,
        "max_runs_system": math.nan,
        "plan_alpha": math.nan,
        "action": "",
        "conditional_power": math.nan,
        "more_runs": math.nan,
    }


# -- the record (decisions.csv, docs/method.md §4c.11) --------------------------------------------
@dataclass(frozen=True)
class PairDecision:
    """One claim about one pair in one family: improvement of ``system`` over ``reference``
    (positive = better in the metric's direction), its interval and adjusted p from the
    family's procedure, the verdict and what it rests on."""

    metric: str
    family: str
    family_size: int
    adjust: str
    reference: str
    system: str
    runs_reference: int
    runs_system: int
    comparison: str
    estimand: str
    improvement: float
    se: float
    df: float
    df_method: str
    test: str
    statistic: float
    critical: float
    lower: float
    upper: float
    interval: str
    level: float
    p_value: str
    log10_p: float
    p_adjusted: str
    log10_p_adjusted: float
    verdict: str
    assumption: str
    generalises: bool
    facet_aware_p: str
    log10_facet_aware_p: float
    facet_aware_df: float
    run_sd_ratio: float
    run_sd_ratio_lower: float
    run_sd_ratio_upper: float
    band: float
    prior_df: float
    survival: str
    best_vs_best: float
    min_effect: float
    power: float
    sequential: str
    look_source: str
    spending: str
    looks: int
    look: int
    look_runs_reference: int
    look_runs_system: int
    max_runs_reference: float
    max_runs_system: float
    plan_alpha: float
    action: str
    conditional_power: float
    more_runs: float
    few_runs: str
    model: str
    note: str

    @property
    def directional(self) -> bool:
        """Whether the verdict names a winner."""
        return self.verdict in DIRECTIONAL

    @property
    def winner(self) -> str:
        """The system the verdict names better ('' when it names none)."""
        if not self.directional:
            return ""
        return self.system if self.verdict == BETTER else self.reference

    @property
    def generalisation(self) -> str:
        """The facet-aware reading (§4c.5): it generalises, it is not shown, or it is not judged
        (a non-significance on fewer than JUDGED_DF df cannot tell); '' without one."""
        if not self.facet_aware_p:
            return ""
        if self.generalises:
            return GENERALISES
        df = self.facet_aware_df
        return NOT_SHOWN_BEYOND if math.isfinite(df) and df >= JUDGED_DF else NOT_JUDGED

    @property
    def one_look(self) -> bool:
        """Whether the verdict is the fixed-sample one read at the pair's one look, among later
        looks of other systems' runs (§4e.12)."""
        return not self.sequential and bool(self.look_source)

    @property
    def family_adjust(self) -> str:
        """The adjustment the verdict's p comes from: the family's, or Bonferroni's α / m for
        a sequential verdict (§4e.11)."""
        return BONFERRONI if self.sequential else self.adjust

    @property
    def decision(self) -> str:
        """The sequential decision in words (§4e.10); '' for a single look."""
        if self.sequential == PLAN:
            winner = self.winner if self.directional else ""
            return plan_sentence(
                self.action,
                winner,
                self.look,
                (self.look_runs_reference, self.look_runs_system),
                (self.max_runs_reference, self.max_runs_system),
                self.conditional_power,
                self.more_runs,
            )
        if self.sequential == ANYTIME:
            pairs = min(self.look_runs_reference, self.look_runs_system)
            return anytime_sentence(self.action, self.winner, self.look, pairs, self.look_source)
        return ""

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.metric, self.family, self.reference, self.system)

    def row(self) -> dict[str, object]:
        """The record as a row of ``decisions.csv``."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_row(cls, row: Mapping[str, object]) -> PairDecision:
        """A row of ``decisions.csv`` (as the table readers give it) as a record."""
        values = {}
        for f in fields(cls):
            value = row[f.name]
            if f.type == "int":
                value = int(float(value))  # type: ignore[arg-type]
            elif f.type == "float":
                value = float(value)  # type: ignore[arg-type]
            elif f.type == "bool":
                value = bool(value) if not _missing(value) else False
            else:
                value = "" if _missing(value) else str(value)
            values[f.name] = value
        return cls(**values)


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))
