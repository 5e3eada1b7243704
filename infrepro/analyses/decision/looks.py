"""Sequential looks in the decision: verdicts that keep their level when the analysis is rerun
as batches of runs arrive (docs/method.md §4e.10, §4e.11).

The runs carry a look (``look``, §4e.1). The fixed-look decision (``summary.decide``) is made on
all runs as before; this module wraps it: model M is fitted on the runs of looks 1 ... k for
every earlier look k, and each ``systems`` record of the decision is replaced by the sequential
verdict of its pair, from a declared plan (``analyses.sequential.max_runs``: error-spending
boundaries on the decision's own calibrated test at every look,
``infrepro.stats.sequential_plan.analyse_looks``) or, without a maximum, from the anytime-valid
confidence sequence on runs paired in arrival order. Each pair of a family of m comparisons
spends α / m (§4e.11). The look history of every revised record is the ``looks``
table. Pure functions of the data and the fits.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from infrepro.analyses.common.data import MetricData, run_means
from infrepro.analyses.common.fitlog import FitLog
from infrepro.analyses.decision.model import (
    DecisionModel,
    calibrate,
    fit_decision_model,
    run_counts,
)
from infrepro.analyses.decision.pairtests import BAND, PairTest
from infrepro.core.decisions import (
    ANYTIME,
    ANYTIME_VALID,
    BETTER,
    CONTINUE,
    DECLARED_LOOKS,
    DIRECTIONAL,
    NOT_SHOWN,
    NOT_SHOWN_TO_SURVIVE,
    PLAN,
    RECORDED_LOOKS,
    REPEATED,
    REVERSED,
    SPENDING_WORDS,
    STOP_SIGNIFICANT,
    SURVIVES,
    SYSTEMS,
    TARGET_CONDITIONAL_POWER,
    WORSE,
    PairDecision,
    band_assumption,
    interval_label,
    runs_phrase,
)
from infrepro.core.vocabulary import (
    LOOK,
    LOOKS_TABLE,
    NOT_CONVERGED,
    RECORDED_LOOK,
    RUN,
    SEGMENT,
    SYSTEM,
    columns,
)
from infrepro.io.looks import look_numbers
from infrepro.stats.anytime import (
    ConfidenceSequence,
    anytime_p,
    confidence_sequence,
    paired_differences,
    pairs_for_a_bound,
    t_boundary,
)
from infrepro.stats.group_sequential import BAND_LOOK_ALPHA_FACTOR, Spending
from infrepro.stats.pvalues import format_p
from infrepro.stats.sequential_plan import (
    LookData,
    LookResult,
    LookTest,
    SequentialAnalysis,
    SequentialPlan,
    analyse_looks,
    repeated_p_value,
)

ONE_LOOK_ROW = "one look of its runs: the fixed-sample verdict"  # its looks.csv note, §4e.12
# the columns of a look's row that a record holds under the same name (§4e.10)
RECORD_LOOK_COLUMNS = ("improvement", "se", "df", "p_value", "log10_p", "lower", "upper")

ANYTIME_NOTE = (
    "no maximum declared (analyses.sequential.max_runs): the anytime-valid confidence sequence, "
    "valid however often the analysis is rerun"
)


# -- options ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SequentialOptions:
    """``analyses.sequential`` (docs/method.md §4e.2): the maximum runs (one for every system,
    one per system, or None: anytime-valid), the spending function, the non-binding futility
    threshold, whether the latest look is declared final, the anytime mixture scale."""

    max_runs: int | Mapping[str, int] | None
    spending: Spending
    futility: float | None
    final: bool
    scale: float

    @classmethod
    def of(cls, options: Mapping[str, object]) -> SequentialOptions:
        max_runs = options.get("max_runs")
        futility = options.get("futility")
        return cls(
            max_runs=None
            if max_runs is None
            else (dict(max_runs) if isinstance(max_runs, Mapping) else int(max_runs)),  # type: ignore[call-overload]
            spending=str(options["spending"]),  # type: ignore[arg-type]
            futility=None if futility is None else float(futility),  # type: ignore[arg-type]
            final=bool(options["final"]),
            scale=float(options["mixture_scale"]),  # type: ignore[arg-type]
        )

    def maximum(self, system: str) -> int | None:
        """The declared maximum runs of a system (None: no plan)."""
        if self.max_runs is None:
            return None
        if isinstance(self.max_runs, Mapping):
            return int(self.max_runs[system])
        return int(self.max_runs)


# -- the looks of the runs -------------------------------------------------------------------------
def look_source(runs: pd.DataFrame) -> str:
    """Where the runs' looks come from: a declared look column (§4e.1), the ledger (§4e.12),
    or nowhere ('': one look)."""
    if LOOK in runs.columns:
        return DECLARED_LOOKS
    return RECORDED_LOOKS if RECORDED_LOOK in runs.columns else ""


def looks_of(runs: pd.DataFrame) -> dict[str, int] | None:
    """Each run's look number (1, 2, ...: ``look_numbers`` of the declared look values, else
    the looks the ledger recorded), None when the runs are one look."""
    source = look_source(runs)
    if not source:
        return None
    numbers = look_numbers(list(runs[LOOK if source == DECLARED_LOOKS else RECORDED_LOOK]))
    return {str(r): int(k) for r, k in zip(runs[RUN], numbers, strict=True)}


def data_at(data: MetricData, kept: set[str]) -> MetricData:
    """The data of the runs ``kept`` only (categorical columns without the others' levels)."""
    evaluation = data.evaluation[data.evaluation[RUN].astype(str).isin(kept)].copy()
    for column in evaluation.columns:
        if isinstance(evaluation[column].dtype, pd.CategoricalDtype):
            evaluation[column] = evaluation[column].cat.remove_unused_categories()
    runs = data.runs[data.runs[RUN].astype(str).isin(kept)].reset_index(drop=True)
    return replace(data, evaluation=evaluation.reset_index(drop=True), runs=runs)


@dataclass(frozen=True)
class LookFit:
    """Model M fitted on the runs of looks 1 ... ``look`` (None, with the reason, when it could
    not be fitted; None without one when the anytime-valid mode needs no fit), with its
    calibrated tests, and the runs per system there."""

    look: int
    runs: dict[str, int]
    model: DecisionModel | None
    reason: str = ""


def look_runs(look: int) -> str:
    """How the diagnostics name the runs of looks 1 ... ``look``."""
    return f"runs of looks 1-{look}"


def look_subset(look: int) -> str:
    """The diagnostics' ``subset`` of a look's fit."""
    return f"all systems, {look_runs(look)}"


# -- one pair's looks -----------------------------------------------------------------------------
@dataclass(frozen=True)
class PairLook:
    """One look of a pair: the experiment's look number, the pair's runs, and its test there
    (None with the reason when not tested)."""

    look: int
    n_a: int
    n_b: int
    data: LookData | None
    test: PairTest | None
    formula: str = ""
    method: str = ""
    reason: str = ""


def pair_looks(fits: list[LookFit], reference: str, system: str, sign: int) -> list[PairLook]:
    """The looks at which the pair's runs changed (§4e.1), each with the decision's test of the
    pair in that look's fit: tested when both systems have two or more runs, the fit converged
    and the pair is a ``systems`` comparison there."""
    out: list[PairLook] = []
    for fit in fits:
        n_a, n_b = fit.runs.get(reference, 0), fit.runs.get(system, 0)
        if out and (n_a, n_b) == (out[-1].n_a, out[-1].n_b):
            continue
        if n_a + n_b == 0:
            continue
        base = PairLook(fit.look, n_a, n_b, None, None)
        if min(n_a, n_b) < 2:
            out.append(replace(base, reason="not tested: a system with fewer than two runs"))
            continue
        model = fit.model
        if model is None and not fit.reason:  # not fitted: the anytime-valid mode (§4e.7)
            out.append(base)
            continue
        if model is None or not bool(model.fit.converged):  # type: ignore[attr-defined]
            why = fit.reason or "the fit did not converge"
            out.append(replace(base, reason=f"not tested: {why}"))
            continue
        contrast = model.pair(reference, system)  # type: ignore[attr-defined]
        if contrast.comparison != SYSTEMS:
            out.append(replace(base, reason="not tested: not a comparison of systems"))
            continue
        test = contrast.test
        data = LookData(sign * contrast.delta.estimate, test.se, contrast.delta.df, n_a, n_b)
        out.append(
            replace(
                base,
                data=data,
                test=test,
                formula=model.formula,  # type: ignore[attr-defined]
                method=model.method,  # type: ignore[attr-defined]
            )
        )
    return out


def look_test(looks: list[PairLook]) -> LookTest:
    """The decision's test at each tested look, as ``analyse_looks`` takes it (looked up by
    the look's run counts, which identify it)."""
    tests = {(lk.n_a, lk.n_b): lk.test for lk in looks if lk.test is not None}

    def p_value(look: LookData) -> float:
        return float(10.0 ** tests[(look.n_a, look.n_b)].log10_p)  # type: ignore[union-attr]

    def critical(level: float, look: LookData) -> float:
        return tests[(look.n_a, look.n_b)].critical(level)  # type: ignore[union-attr]

    return LookTest("the decision's calibrated test", p_value, critical, BAND_LOOK_ALPHA_FACTOR)


# -- the revision of the records -------------------------------------------------------------------
ReadThen = Callable[[MetricData, str], list[PairDecision]]  # an earlier look's fixed-look records


@dataclass
class Sequential:
    """The sequential path of one metric's decision (§4e.10): the fits of M at every look
    before the latest (the latest is the decision's own), the records revised and their look
    history. Call it with a family's records and the decision's model (``summary.decide``).
    ``read_then``: the fixed-look decision of an earlier look's runs (named as the diagnostics
    name them), for the pairs with one look of their own (§4e.12)."""

    data: MetricData
    log: FitLog
    alpha: float
    options: SequentialOptions
    looks: dict[str, int]
    source: str = DECLARED_LOOKS
    read_then: ReadThen | None = None  # None: every pair with an earlier look is looked at again
    rows: list[dict[str, object]] = field(default_factory=list)
    _fits: list[LookFit] | None = None
    _arrival: dict[str, list[float]] | None = None
    _read: dict[int, dict[tuple[str, str, str, str], PairDecision]] = field(default_factory=dict)

    def fits(self, latest: object) -> list[LookFit]:
        """Model M at every look (the last: ``latest``, the decision's fit of all runs)."""
        if self._fits is not None:
            return self._fits
        settings_runs = _run_variance(self.data)
        last = max(self.looks.values())
        fits = []
        for k in range(1, last + 1):
            kept = {r for r, look in self.looks.items() if look <= k}
            part = self.data if k == last else data_at(self.data, kept)
            counts = run_counts(part)
            if k == last:
                fits.append(LookFit(k, counts, latest))
                continue
            if self.options.max_runs is None:  # the confidence sequence needs no fit of M
                fits.append(LookFit(k, counts, None))
                continue
            if self.data.baseline not in counts or counts[self.data.baseline] == 0:
                fits.append(LookFit(k, counts, None, "the baseline has no runs yet"))
                continue
            model = fit_decision_model(part, self.log, subset=look_subset(k))
            if model is None:
                fits.append(LookFit(k, counts, None, "the fit of model M failed"))
                continue
            calibrate(model, part, settings_runs)
            fits.append(LookFit(k, counts, model))
        self._fits = fits
        return fits

    @property
    def looks_word(self) -> str:
        """How the notes name the looks: declared (a look column) or recorded (the ledger)."""
        return "looks declared" if self.source == DECLARED_LOOKS else "looks recorded"

    def __call__(self, records: list[PairDecision], latest: object) -> list[PairDecision]:
        """The family's records, each ``systems`` one with its sequential verdict."""
        fits = self.fits(latest)
        return [self.revise(record, fits) for record in records]

    def revise(self, record: PairDecision, fits: list[LookFit]) -> PairDecision:
        """One record: the sequential verdict of its pair, its look history in ``rows``. A pair
        with one look of its own keeps that look's record (§4e.12): one not tested at looks (a
        single-run side) whatever the mode, one of two multi-run systems without a plan."""
        looks = pair_looks(fits, record.reference, record.system, self.data.sign())
        own = [lk for lk in looks if lk.n_a > 0 and lk.n_b > 0]
        maxima = (self.options.maximum(record.reference), self.options.maximum(record.system))
        planned = maxima[0] is not None and maxima[1] is not None
        tested = record.comparison == SYSTEMS and record.verdict != NOT_CONVERGED
        if len(own) == 1 and record.verdict != NOT_CONVERGED and not (tested and planned):
            read = self._read_then(record, own[0].look, len(fits))
            if read is not None:
                return self._one_look(read, own[0], len(fits))
        if not tested:
            why = (
                "the latest fit did not converge"
                if record.verdict == NOT_CONVERGED
                else "a system with a single run"
            )
            note = f"{self.looks_word}, but not tested at looks ({why}): the single-look verdict"
            return replace(record, looks=len(fits), look=len(fits), note=_joined(record.note, note))
        alpha_j = self.alpha / record.family_size
        if maxima[0] is None or maxima[1] is None:
            return self._anytime(record, looks, alpha_j, len(fits))
        return self._plan(record, looks, alpha_j, (maxima[0], maxima[1]), len(fits))

    # -- one look of its own --
    def _read_then(self, record: PairDecision, k: int, latest: int) -> PairDecision | None:
        """The pair's fixed-look record as read at its one look ``k`` (§4e.12): the decision's
        own at the ``latest`` look, else the decision of look k's runs; None when that look
        decided no verdict of the pair (its fit failed or did not converge: the sequence
        decides)."""
        if k == latest:
            read: PairDecision | None = record
        elif self.read_then is None:
            read = None
        else:
            if k not in self._read:
                kept = {r for r, look in self.looks.items() if look <= k}
                then = self.read_then(data_at(self.data, kept), look_runs(k))
                self._read[k] = {r.key: r for r in then}
            read = self._read[k].get(record.key)
        if read is None or read.verdict == NOT_CONVERGED:
            return None
        return read

    def _one_look(self, read: PairDecision, own: PairLook, total: int) -> PairDecision:
        """A pair whose runs are those of its one look k: the fixed-sample record of look k, as
        read then (the same runs, fit and family; §4e.12), and its one row of the history (the
        record's own estimate, interval and p)."""
        again = "anytime-valid" if read.comparison == SYSTEMS else "again"
        note = (
            f"one look of its runs (look {own.look}, {self.looks_word}; neither system has "
            "gained runs since): the fixed-sample verdict read at that look; a run added to "
            f"either system decides it {again}"
        )
        revised = replace(
            read,
            look_source=self.source,
            looks=total,
            look=own.look,
            look_runs_reference=own.n_a,
            look_runs_system=own.n_b,
            note=_joined(read.note, note),
        )
        row = self._row(revised, replace(own, data=None, test=None))
        row.update({column: getattr(revised, column) for column in RECORD_LOOK_COLUMNS})
        row.update(crossed=revised.directional, note=ONE_LOOK_ROW)
        self.rows.append(row)
        return revised

    # -- a declared plan --
    def _plan(
        self,
        record: PairDecision,
        looks: list[PairLook],
        alpha_j: float,
        maxima: tuple[int, int],
        total: int,
    ) -> PairDecision:
        tested = [lk for lk in looks if lk.data is not None]
        if not tested:
            note = f"{self.looks_word}, but no look could be tested: the single-look verdict"
            return replace(record, looks=total, note=_joined(record.note, note))
        min_effect = None if math.isnan(record.min_effect) else record.min_effect / 100.0
        plan = SequentialPlan(
            maxima[0],
            maxima[1],
            alpha_j,
            self.options.spending,
            min_effect,
            self.options.futility,
            TARGET_CONDITIONAL_POWER,
        )
        test = look_test(tested)
        data = [lk.data for lk in tested]
        analysis = analyse_looks(data, plan, test, final=self.options.final)  # type: ignore[arg-type]
        rows = analysis.looks
        decided = next((r for r in rows if r.crossed), rows[-1])
        p_pair = repeated_p_value(
            [r.p_value for r in rows[: decided.look]],
            [r.fraction for r in rows[: decided.look]],
            self.options.spending,
            len(rows),
            analysis.boundaries.final,
            test.alpha_factor,
        )
        revised = replace(
            _at_look(record, decided, tested[decided.look - 1], self.alpha),
            p_adjusted=format_p(_log10(min(1.0, p_pair * record.family_size))),
            log10_p_adjusted=_log10(min(1.0, p_pair * record.family_size)),
            sequential=PLAN,
            look_source=self.source,
            spending=self.options.spending,
            looks=total,
            max_runs_reference=float(maxima[0]),
            max_runs_system=float(maxima[1]),
            plan_alpha=alpha_j,
            action=analysis.decision.action,
            conditional_power=analysis.decision.conditional_power,
            more_runs=_or_nan(analysis.decision.more_runs),
            note=_joined(record.note, _plan_note(self.options, maxima, analysis.beyond_plan)),
        )
        revised = _readings(record, revised)
        self._plan_rows(revised, looks, tested, analysis)
        return revised

    def _plan_rows(
        self,
        record: PairDecision,
        looks: list[PairLook],
        tested: list[PairLook],
        analysis: SequentialAnalysis,
    ) -> None:
        result = {id(lk): row for lk, row in zip(tested, analysis.looks, strict=False)}
        within = {id(lk) for lk in tested[: len(analysis.looks)]}
        for lk in looks:
            row: LookResult | None = result.get(id(lk))
            out = self._row(record, lk)
            if row is not None:
                out.update(
                    fraction=row.fraction,
                    alpha_spent=row.alpha_spent,
                    boundary=row.z_boundary,
                    nominal=row.nominal,
                    critical=row.critical_t,
                    lower=row.ci_lower,
                    upper=row.ci_upper,
                    crossed=bool(row.crossed),
                )
            elif lk.data is not None and id(lk) not in within:
                out["note"] = "after the final look: not tested"
            self.rows.append(out)

    def _row(self, record: PairDecision, lk: PairLook) -> dict[str, object]:
        """A look's row of the history: the pair, the runs and the look's own test."""
        out: dict[str, object] = dict.fromkeys(columns(LOOKS_TABLE), math.nan)
        out.update(
            metric=record.metric,
            family=record.family,
            reference=record.reference,
            system=record.system,
            sequential=record.sequential,
            look=lk.look,
            runs_reference=lk.n_a,
            runs_system=lk.n_b,
            p_value="",
            crossed=False,
            note=lk.reason,
        )
        if lk.data is not None and lk.test is not None:
            out.update(
                improvement=lk.data.estimate,
                se=lk.data.se,
                df=lk.data.df,
                p_value=format_p(lk.test.log10_p),
                log10_p=lk.test.log10_p,
            )
        return out

    # -- anytime-valid --
    def _anytime(
        self, record: PairDecision, looks: list[PairLook], alpha_j: float, total: int
    ) -> PairDecision:
        if self._arrival is None:  # once per metric: every pair's sequence reads it
            self._arrival = _arrival_means(self.data, self.looks)
        series = self._arrival
        d = self.data.sign() * paired_differences(
            series.get(record.reference, []), series.get(record.system, [])
        )
        cs = confidence_sequence(d, alpha_j, self.options.scale)
        if cs.n.size == 0:
            note = f"{self.looks_word}, but fewer than two pairs of runs: the single-look verdict"
            return replace(record, looks=total, note=_joined(record.note, note))
        p = anytime_p(d, self.options.scale)
        claimed = self._anytime_rows(record, looks, d, alpha_j, cs, p)
        n = int(cs.n[-1])
        se = _se(d[:n])
        lower, upper, mean = float(cs.lower[-1]), float(cs.upper[-1]), float(cs.mean[-1])
        verdict = NOT_SHOWN
        if lower > 0 or upper < 0:
            verdict = BETTER if lower > 0 else WORSE
        at = claimed or looks[-1]
        p_adj = min(1.0, float(p[-1]) * record.family_size)
        revised = replace(
            record,
            improvement=mean,
            se=se,
            df=float(n - 1),
            df_method="",
            test=(
                f"t confidence sequence on {n} runs paired in arrival order (Lai 1976; "
                f"mixture scale {self.options.scale:g})"
            ),
            statistic=mean / se if se > 0 else math.nan,
            critical=float(t_boundary(n, alpha_j, self.options.scale)),
            lower=lower,
            upper=upper,
            interval=interval_label(ANYTIME_VALID, self.alpha),  # the family's level
            level=alpha_j,
            p_value=format_p(_log10(p[-1])),
            log10_p=_log10(p[-1]),
            p_adjusted=format_p(_log10(p_adj)),
            log10_p_adjusted=_log10(p_adj),
            verdict=verdict,
            assumption="",  # paired run differences: valid at any ratio of run variances
            sequential=ANYTIME,
            look_source=self.source,
            looks=total,
            look=at.look,
            look_runs_reference=at.n_a,
            look_runs_system=at.n_b,
            plan_alpha=alpha_j,
            action=STOP_SIGNIFICANT if verdict in DIRECTIONAL else CONTINUE,
            note=_joined(record.note, ANYTIME_NOTE, self._unbounded(n, alpha_j, lower, upper)),
        )
        return _readings(record, revised)

    def _unbounded(self, n: int, alpha_j: float, lower: float, upper: float) -> str:
        """Why an anytime-valid interval is (−∞, ∞): too few pairs for the sequence at its
        level, however large the difference (§4e.7); '' when it is bounded."""
        if math.isfinite(lower) or math.isfinite(upper):
            return ""
        need = pairs_for_a_bound(alpha_j, self.options.scale)
        return (
            f"the anytime-valid interval is unbounded with {n} pairs of runs: at α = "
            f"{alpha_j:g} it is bounded from {need} pairs (runs of each system), whatever the "
            "difference; a plan declared before the looks (analyses.sequential.max_runs) keeps "
            "nearly the fixed-sample power"
        )

    def _anytime_rows(
        self,
        record: PairDecision,
        looks: list[PairLook],
        d: np.ndarray,
        alpha_j: float,
        cs: ConfidenceSequence,
        p: np.ndarray,
    ) -> PairLook | None:
        """The look history of the confidence sequence ``cs`` of ``d`` (anytime-valid p ``p``);
        the look of the first claim."""
        scale = self.options.scale
        unbounded = f"unbounded below {pairs_for_a_bound(alpha_j, scale)} pairs"
        claimed: PairLook | None = None
        for lk in looks:
            n = min(lk.n_a, lk.n_b)
            row = self._row(replace(record, sequential=ANYTIME), replace(lk, data=None))
            if n < 2:
                row["note"] = "not tested: fewer than two pairs of runs"
                self.rows.append(row)
                continue
            i = n - 2
            excludes = bool(cs.lower[i] > 0 or cs.upper[i] < 0)
            row.update(
                improvement=float(cs.mean[i]),
                se=_se(d[:n]),
                df=float(n - 1),
                nominal=alpha_j,
                critical=float(t_boundary(n, alpha_j, scale)),
                lower=float(cs.lower[i]),
                upper=float(cs.upper[i]),
                p_value=format_p(_log10(p[i])),
                log10_p=_log10(p[i]),
                crossed=excludes,
                note=unbounded if np.isinf(cs.lower[i]) and np.isinf(cs.upper[i]) else "",
            )
            if excludes and claimed is None:
                claimed = lk
            self.rows.append(row)
        return claimed

    def table(self) -> pd.DataFrame:
        """The look history (``looks.csv``)."""
        return pd.DataFrame(self.rows, columns=columns(LOOKS_TABLE))


def _run_variance(data: MetricData):  # type: ignore[no-untyped-def]
    from infrepro.analyses.decision.pairtests import RunVariance

    return RunVariance.of(data.options["run_variance"])


def _at_look(record: PairDecision, row: LookResult, look: PairLook, alpha: float) -> PairDecision:
    """The record's estimate, test, interval and verdict as read at one look of a plan: the
    look's test (its p marginal), the repeated CI (labelled with the family's level 1 − α), the
    nominal level; a directional verdict of the calibrated test rests on its band (a plan's
    boundaries are the band test's, §4c.5)."""
    test = look.test
    assert test is not None
    verdict = NOT_SHOWN
    if row.crossed:
        verdict = BETTER if row.estimate > 0 else WORSE
    assumes = verdict in DIRECTIONAL and test.kind == BAND
    return replace(
        record,
        improvement=row.estimate,
        se=row.se,
        df=row.df,
        df_method=look.method,
        test=f"{test.name}, at look {look.look}",
        statistic=row.estimate / row.se,
        critical=row.critical_t,
        lower=row.ci_lower,
        upper=row.ci_upper,
        interval=interval_label(REPEATED, alpha),
        level=row.nominal,
        p_value=format_p(test.log10_p),
        log10_p=test.log10_p,
        verdict=verdict,
        assumption=band_assumption(record.band) if assumes else "",
        look=look.look,
        look_runs_reference=look.n_a,
        look_runs_system=look.n_b,
        model=look.formula,
    )


def _or_nan(value: int | None) -> float:
    return math.nan if value is None else float(value)


def _se(d: np.ndarray) -> float:
    """s_n / √n of the paired differences (NaN for fewer than two)."""
    return float(d.std(ddof=1) / math.sqrt(d.size)) if d.size >= 2 else math.nan


def _log10(p: float) -> float:
    return math.log10(max(float(p), 1e-300))


def _arrival_means(data: MetricData, looks: Mapping[str, int]) -> dict[str, list[float]]:
    """Each system's run means in arrival order: by look, then within a look by a digest of the
    run's scores (§4e.7): a fixed pseudo-random order that no run id, file name or order of
    listing changes."""
    means = run_means(data)
    keys = score_keys(data)
    means = means.assign(
        _look=[looks[str(r)] for r in means[RUN]], _key=[keys[str(r)] for r in means[RUN]]
    )
    means = means.sort_values(["_look", "_key"], kind="stable")
    return {
        str(s): [float(v) for v in group["mean"]]
        for s, group in means.groupby(SYSTEM, sort=False, observed=True)
    }


def score_keys(data: MetricData) -> dict[str, str]:
    """A digest of each run's scores of the metric (its segment ids and values, by segment):
    the order of runs within a look for the anytime-valid pairing (§4e.7)."""
    rows = data.evaluation[[RUN, SEGMENT, data.metric]].astype({RUN: str, SEGMENT: str})
    rows = rows.sort_values([RUN, SEGMENT], kind="stable")
    keys = {}
    for run, part in rows.groupby(RUN, sort=False):
        digest = hashlib.blake2b("\n".join(part[SEGMENT]).encode(), digest_size=16)
        digest.update(part[data.metric].to_numpy(dtype="float64").tobytes())
        keys[str(run)] = digest.hexdigest()
    return keys


def _readings(old: PairDecision, new: PairDecision) -> PairDecision:
    """The readings that follow the verdict: the facet-aware generalisation (kept only for the
    same directional verdict) and best vs best's survival (§4b.6)."""
    same = new.verdict == old.verdict and new.directional
    survival = old.survival
    if survival:
        if not new.directional:
            survival = NOT_SHOWN_TO_SURVIVE
        else:
            survival = SURVIVES if new.improvement * new.best_vs_best > 0 else REVERSED
    return replace(new, generalises=bool(old.generalises and same), survival=survival)


def _plan_note(options: SequentialOptions, maxima: tuple[int, int], beyond: int) -> str:
    words = SPENDING_WORDS[options.spending]
    note = f"sequential plan: {words} spending, at most {runs_phrase(*maxima)}"
    if options.futility is not None:
        note += f", non-binding futility below {options.futility:.0%} conditional power"
    if beyond:
        note += f"; {beyond} look{'s' if beyond > 1 else ''} after the final one not tested"
    return note


def _joined(*notes: str) -> str:
    return "; ".join(n for n in notes if n)


def sequential_of(
    data: MetricData, log: FitLog, alpha: float, read_then: ReadThen
) -> Sequential | None:
    """The sequential path of a metric's decision, None when the runs declare no looks
    (``read_then``: the fixed-look decision of an earlier look's runs, :class:`Sequential`)."""
    looks = looks_of(data.runs)
    if looks is None:
        return None
    options = SequentialOptions.of(data.options["sequential"])
    return Sequential(data, log, alpha, options, looks, look_source(data.runs), read_then)
