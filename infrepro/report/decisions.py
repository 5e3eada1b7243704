"""The decision records as the report reads and words them (docs/method.md §4c.11).

``decisions.csv`` is read back into :class:`~infrepro.core.decisions.PairDecision` records once
(:func:`book`); every view of a pair (the decision table, the headline card, the forest plot,
the groups diagram, the sentence to quote, the LaTeX and Markdown rows, the planning cards)
renders a record with the functions here, so that every place says the same thing. Nothing here
tests, adjusts or decides: the ``summary`` analysis did.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

import pandas as pd

from infrepro.core.decisions import (
    ANYTIME,
    FAMILY_BASELINE,
    NOT_SHOWN,
    OUTPUTS,
    PLAN,
    RECORDED_LOOKS,
    SPENDING_WORDS,
    SYSTEMS,
    VS_OUTPUT,
    PairDecision,
    df_number,
    family_label,
    interval_parts,
    look_phrase,
    runs_phrase,
)
from infrepro.core.schema import with_defaults
from infrepro.core.vocabulary import NOT_CONVERGED
from infrepro.report.formatting import points, significant
from infrepro.report.inputs import ReportSettings

DECISIONS = "decisions"


@dataclass
class Book:
    """Every decision record, by (metric, family, reference, system), and the family the
    experiment names (``analyses.comparisons``)."""

    family: str
    records: dict[tuple[str, str, str, str], PairDecision] = field(default_factory=dict)

    def pair(self, metric: str, reference: str, system: str) -> PairDecision | None:
        """The named family's record of ``system`` against ``reference``."""
        return self.records.get((metric, self.family, reference, system))

    def family_records(self, metric: str, family: str | None = None) -> list[PairDecision]:
        """One family's records of a metric (the named one by default), in table order."""
        chosen = family or self.family
        return [r for k, r in self.records.items() if k[0] == metric and k[1] == chosen]

    def __bool__(self) -> bool:
        return bool(self.records)


def named_family(settings: ReportSettings) -> str:
    """The family the config names (its schema default when the config gives none)."""
    return str(with_defaults("analyses", settings.config.get("analyses"))["comparisons"])


def records_of(frame: pd.DataFrame) -> list[PairDecision]:
    """The records of ``decisions.csv`` (read with its declared types), in file order."""
    return [PairDecision.from_row(row) for row in frame.to_dict("records")] if len(frame) else []


def book(tables: dict[str, pd.DataFrame], settings: ReportSettings) -> Book:
    """Every record of ``decisions.csv``, with the family the config names."""
    return book_of(records_of(tables.get(DECISIONS, pd.DataFrame())), named_family(settings))


def book_of(records: Iterable[PairDecision], family: str = FAMILY_BASELINE) -> Book:
    """A book of given records (tests, the paper files)."""
    out = Book(family)
    for record in records:
        out.records[record.key] = record
    return out


# -- wording ---------------------------------------------------------------------------------------
def interval(record: PairDecision) -> str:
    """``−3.84 [−7.08, −0.61]``: the improvement and its interval, as the report shows scores
    (points, or a raw scale's units: both stored / 100)."""
    if math.isnan(record.improvement):
        return "–"
    return (
        f"{points(record.improvement, sign=True)} [{points(record.lower)}, {points(record.upper)}]"
    )


def size_interval(record: PairDecision) -> str:
    """``3.84 [0.61, 7.08]``: the size of a directional difference with the interval of the
    size (the interval of −improvement for a ``worse`` verdict)."""
    if record.improvement >= 0:
        return f"{points(record.improvement)} [{points(record.lower)}, {points(record.upper)}]"
    return f"{points(-record.improvement)} [{points(-record.upper)}, {points(-record.lower)}]"


PILCROW = "\u00b6"  # the mark of a verdict that rests on the band of run-SD ratios (§4c.5)


def verdict_text(record: PairDecision, spelled: bool = False) -> str:
    """The verdict cell: the word, qualified by what the pair estimates (§4c.4), whether it
    generalises (§4c.5), a pilcrow when it rests on the band (§4c.5: the table's caption says
    what it assumes, as the paste-ready tables' do; ``spelled``: the assumption in words, for
    text read without the caption) and, for a sequential verdict, where it was read (§4e.10)."""
    assumes = PILCROW if record.assumption else ""
    if record.assumption and spelled:
        assumes = f" ({assuming(record)})"
    return _verdict_word(record) + assumes + _sequential_mark(record)


def assuming(record: PairDecision) -> str:
    """``assuming run-mean SDs within a factor of 2``: the assumption a directional verdict
    rests on (§4c.5); '' when it holds at any ratio of run variances."""
    return f"assuming {record.assumption}" if record.assumption else ""


def _verdict_word(record: PairDecision) -> str:
    word = record.verdict
    if not record.directional:
        return word
    if record.comparison == OUTPUTS:
        return f"outputs {word}"
    if record.comparison == VS_OUTPUT:  # the row or the record names the single-run system
        return f"{word} (vs single output)" if record.runs_reference < 2 else f"output {word}"
    return f"{word}, generalises" if record.generalises else word


def _sequential_mark(record: PairDecision) -> str:
    """`` (plan, look 2)`` / `` (anytime-valid, look 3)`` / `` (fixed-sample, look 1)`` (one
    look of its own among later looks, §4e.12); '' for a single look."""
    if record.sequential == PLAN:
        return f" (plan, look {record.look})"
    if record.sequential == ANYTIME:
        return f" (anytime-valid, {look_phrase(record.look, record.look_source)})"
    if record.one_look:
        return f" (fixed-sample, {look_phrase(record.look, record.look_source)})"
    return ""


def alternatives(values: Iterable[str]) -> str:
    """``step-down / anytime-valid``: the distinct values, first seen first (what a heading over
    rows of several kinds names, §4e.12)."""
    return " / ".join(dict.fromkeys(values))


def interval_kinds(records: list[PairDecision]) -> str:
    """``step-down``, or ``step-down / anytime-valid`` when the records' intervals differ in
    kind (one look of its own or a single-run side beside sequential verdicts, §4e.12): what a
    column of their intervals is."""
    return alternatives(interval_parts(r.interval)[0] for r in records)


def interval_heading(records: list[PairDecision]) -> str:
    """``step-down 95 % CI`` / ``step-down / anytime-valid 95 % CI``: a column of the records'
    intervals, every kind in it named (each row's verdict names its own)."""
    if not records:
        return "CI"
    return f"{interval_kinds(records)} {interval_parts(records[0].interval)[1]} CI"


def p_heading(records: list[PairDecision]) -> str:
    """``p (step-down over 5 comparisons with the baseline)``; with verdicts of several kinds
    every p and family named: ``p / anytime-valid p (step-down over 5 ...; Bonferroni over 5
    ...)``."""
    if not records:
        return "p"
    families = list(dict.fromkeys(family_text(r) for r in records if r.family_size > 1))
    names = alternatives(p_name(r) for r in records)
    return f"{names} ({'; '.join(families)})" if families else names


def family_text(record: PairDecision) -> str:
    """``max-t over 2 comparisons with the baseline`` (``Bonferroni over ...`` for sequential
    verdicts, §4e.11)."""
    return family_label(record.family, record.family_size, record.family_adjust)


def p_name(record: PairDecision) -> str:
    """What the record's adjusted p is: ``p``, ``repeated p`` (a plan, §4e.10) or
    ``anytime-valid p``."""
    return {PLAN: "repeated p", ANYTIME: "anytime-valid p"}.get(record.sequential, "p")


def p_text(record: PairDecision) -> str:
    """``p = 0.02228 (max-t over 2 comparisons with the baseline)``: never a p without its
    family (or its kind: ``repeated p = ...`` for a sequential verdict), nor without the look it
    was read at when that is one look of its own (``; read at look 1``, §4e.12)."""
    read = f"read at {look_phrase(record.look, record.look_source)}" if record.one_look else ""
    where = "; ".join(w for w in (family_text(record) if record.family_size > 1 else "", read) if w)
    return f"{p_name(record)} = {record.p_adjusted}" + (f" ({where})" if where else "")


def test_text(record: PairDecision) -> str:
    """``t = 2.49, t with Kenward-Roger df 18.9, model M (REML)``: the statistic and the test
    that gives its p, as the record names it (the anytime-valid sequence is on run means)."""
    model = "" if record.sequential == ANYTIME else ", model M (REML)"
    return f"t = {significant(record.statistic)}, {record.test}{model}"


def plan_text(record: PairDecision) -> str:
    """The declared plan or mode of a sequential verdict, in words ('' for one look)."""
    if record.sequential == PLAN:
        maxima = runs_phrase(record.max_runs_reference, record.max_runs_system)
        return (
            f"sequential plan, {SPENDING_WORDS.get(record.spending, record.spending)} "
            f"spending, at most {maxima}, α = {record.plan_alpha:.3g} for "
            "this comparison"
        )
    if record.sequential == ANYTIME:
        looks = (
            f"{look_phrase(record.look, record.look_source)}, looks recorded in the ledger"
            if record.look_source == RECORDED_LOOKS
            else "no maximum declared"
        )
        return (
            f"anytime-valid confidence sequence ({looks}), α = "
            f"{record.plan_alpha:.3g} for this comparison"
        )
    return ""


def decision_line(record: PairDecision) -> str:
    """``Looks (sequential plan, ...): stop: competitor better (look 2, 5 of 10 runs per
    system).``: the sequential decision with its plan ('' for one look)."""
    if not record.sequential:
        return ""
    return f"Looks ({plan_text(record)}): {record.decision}."


def interval_name(record: PairDecision) -> str:
    """``simultaneous 95 % CI`` / ``unadjusted 95 % CI``."""
    return f"{record.interval} CI"


def scope(record: PairDecision) -> str:
    """What a directional claim is about, after the sizes."""
    if record.comparison == SYSTEMS:
        where = "over retraining"
        if record.facet_aware_p and not record.generalises:
            where += " at these meta-parameter settings"
        return where
    if record.comparison == VS_OUTPUT:
        return "one output of a single-run system: how it varies with retraining is unknown"
    return (
        "one run each: these outputs on these segments; how either varies with retraining is "
        "unknown"
    )


FEW_DF = 3.0  # below this many df an interval is said to be very uncertain


def few_df_note(record: PairDecision) -> str:
    """``the interval is very uncertain: ...``: why an interval on fewer than :data:`FEW_DF`
    df says little (the t reference's heavy tails put its bounds many SEs from the estimate);
    '' otherwise."""
    if not record.df < FEW_DF:
        return ""
    far = (
        f"{significant(record.critical)} SEs from the estimate (about 2 with many df)"
        if math.isfinite(record.critical)
        else "infinitely far from the estimate"
    )
    return (
        f"the interval is very uncertain: on df {df_number(record.df)} (few runs) its test's "
        f"reference distribution has tails so heavy that its bounds lie {far}, so it says little "
        "about the size of the difference; more runs narrow it"
    )


def scale_words(unit: str) -> str:
    """How a size is said after the metric's label: ``points``, or ``(as given)`` for a raw
    scale (ratings shown as they are)."""
    return unit if unit == "points" else f"({unit})"


def _assumed(record: PairDecision) -> str:
    """``, assuming …: a test valid at any ratio does not reach α`` or ''."""
    if not record.assumption:
        return ""
    return f", {assuming(record)} (a test valid at any ratio of run SDs does not reach α)"


def sentence(record: PairDecision, label: str, unit: str = "points") -> str:
    """A sentence to quote: the verdict, the size with its interval, the test, the df method
    and the one p (adjusted, with its family)."""
    subject, other = record.system, record.reference
    if record.comparison == OUTPUTS:
        subject, other = f"{record.system}'s output", f"{record.reference}'s"
    elif record.comparison == VS_OUTPUT:
        if record.runs_reference < 2:
            other = f"{record.reference}'s single output"
        else:
            subject = f"{record.system}'s single output"
    how = f"{test_text(record)}, {p_text(record)}"
    facet = ""
    if record.facet_aware_p:
        facet = f"; treating the shared facets' levels as draws: p = {record.facet_aware_p}"
    few = few_df_note(record)
    after = f" {few[0].upper()}{few[1:]}." if few else ""
    ci = interval_name(record)
    if record.directional:
        word = record.verdict  # BETTER or WORSE, the record's own word
        return (
            f"{subject} {word} than {other} by {size_interval(record)} {label} "
            f"{scale_words(unit)} ({ci}), "
            f"{scope(record)}{_assumed(record)}; {how}{facet}.{after}"
        )
    if record.verdict == NOT_CONVERGED:
        return f"{subject} against {other}: not judged (the model did not converge)."
    assert record.verdict == NOT_SHOWN
    return (
        f"No difference shown between {subject} and {other}: improvement {interval(record)} "
        f"{label} {scale_words(unit)} ({ci}); {how}{facet}.{after}"
    )
