"""The sequential verdict in the decision (docs/method.md §4e.10, §4e.11): each look's test is
the decision's test on the runs so far, the record's verdict, interval and p agree, the repeated
p-value is what it is defined to be, the anytime-valid mode is the confidence sequence of runs
paired in arrival order, a family spends α / m, and no look column changes nothing."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from infrepro.analyses.common.data import MetricData
from infrepro.analyses.common.fitlog import FitLog
from infrepro.analyses.decision.looks import score_keys
from infrepro.analyses.decision.summary import Settings, decide, summary_tables
from infrepro.core.decisions import (
    ANYTIME,
    FAMILY_ALL,
    FAMILY_BASELINE,
    PLAN,
    STOP_MAXIMUM,
    STOP_SIGNIFICANT,
    PairDecision,
)
from infrepro.core.schema import with_defaults
from infrepro.core.vocabulary import LOOK, RUN, SYSTEM
from infrepro.report.decisions import interval_heading, p_heading, p_text, records_of
from infrepro.report.paper import caption, header, paper_rows
from infrepro.stats.anytime import (
    anytime_p,
    confidence_sequence,
    pairs_for_a_bound,
    t_boundary,
)
from infrepro.stats.group_sequential import BAND_LOOK_ALPHA_FACTOR, efficacy_boundaries
from infrepro.stats.sequential_plan import plan_alpha
from infrepro.validation.few_runs import METRIC, RUN_SD, _frame
from infrepro.validation.looks import look_experiment

ALPHA = 0.05


def with_options(data: MetricData, sequential: dict, min_effect: float | None = None) -> MetricData:
    options = with_defaults(
        "analyses", {"sequential": sequential, "planning": {"min_effect": min_effect}}
    )
    options["alpha"] = ALPHA
    return replace(data, options=options)


def tables(data: MetricData) -> dict[str, pd.DataFrame]:
    return summary_tables(data, FitLog(METRIC))


def baseline_record(found: dict[str, pd.DataFrame]) -> PairDecision:
    return next(r for r in records_of(found["decisions"]) if r.family == FAMILY_BASELINE)


def up_to(data: MetricData, look: int) -> MetricData:
    """The data of looks 1 ... look, without the look column (one look: today's decision)."""
    kept = set(data.runs.loc[data.runs[LOOK].astype(int) <= look, RUN])
    runs = data.runs[data.runs[RUN].isin(kept)].drop(columns=[LOOK]).reset_index(drop=True)
    rows = data.evaluation[data.evaluation[RUN].isin(kept)].reset_index(drop=True)
    return replace(data, runs=runs, evaluation=rows)


@pytest.fixture(scope="module")
def planned() -> tuple[MetricData, dict[str, pd.DataFrame]]:
    """A and B with 6 runs each, looks at 3, 4, 5, 6 runs, B better by 2 run-mean SDs, a plan
    of at most 8 runs per system."""
    data = with_options(look_experiment(3, 6, 1.0, 2.0, 11), {"max_runs": 8}, min_effect=1.0)
    return data, tables(data)


def test_each_looks_test_is_the_decisions_test_on_the_runs_so_far(planned) -> None:
    data, found = planned
    looks = found["looks"]
    mine = looks[looks["family"] == FAMILY_BASELINE].sort_values("look")
    assert list(mine["look"]) == [1, 2, 3, 4]
    assert list(mine["runs_system"]) == [3, 4, 5, 6]
    settings = Settings(alpha=ALPHA, draws=10)
    for _, row in mine.iterrows():
        today = decide(up_to(data, int(row["look"])), FitLog(METRIC), settings).records[0]
        assert row["improvement"] == pytest.approx(today.improvement, rel=1e-9)
        assert row["se"] == pytest.approx(today.se, rel=1e-9)
        assert row["df"] == pytest.approx(today.df, rel=1e-9)
        assert row["p_value"] == today.p_value


def test_the_record_reads_the_first_crossing_look(planned) -> None:
    _, found = planned
    record = baseline_record(found)
    looks = found["looks"]
    mine = looks[looks["family"] == FAMILY_BASELINE].sort_values("look")
    crossed = mine[mine["crossed"].astype(bool)]
    assert record.sequential == PLAN
    assert record.looks == 4 and record.max_runs_system == 8
    if crossed.empty:
        assert not record.directional and record.look == 4
    else:
        first = crossed.iloc[0]
        assert record.look == int(first["look"]) and record.action == STOP_SIGNIFICANT
        assert record.lower == pytest.approx(float(first["lower"]))
        assert record.look_runs_system == int(first["runs_system"])
    assert record.interval == "repeated 95 %"


@pytest.mark.parametrize("effect", [0.0, 1.5, 3.0])
@pytest.mark.parametrize("mode", [{"max_runs": 7}, {}])
def test_directional_exactly_when_the_interval_excludes_zero_and_p_is_below_alpha(
    effect: float, mode: dict
) -> None:
    data = with_options(look_experiment(3, 7, 1.0, effect, 5), mode)
    record = baseline_record(tables(data))
    assert record.sequential == (PLAN if mode else ANYTIME)
    excludes = record.lower > 0 or record.upper < 0
    assert excludes == record.directional == (record.log10_p_adjusted < math.log10(ALPHA))
    if record.directional:
        assert (record.improvement > 0) == (record.verdict == "better")


def test_the_repeated_p_value_is_the_smallest_alpha_at_which_a_look_crosses(planned) -> None:
    _, found = planned
    record = baseline_record(found)
    looks = found["looks"]
    mine = looks[looks["family"] == FAMILY_BASELINE].sort_values("look")
    mine = mine[mine["look"] <= record.look]
    p = 10.0 ** mine["log10_p"].to_numpy()
    fractions = list(mine["fraction"])
    used = 4  # every look of the plan is tested, none reaches the maximum (t < 1)

    def crosses(alpha: float) -> bool:
        z_alpha = plan_alpha(alpha, "obrien_fleming", used, False, BAND_LOOK_ALPHA_FACTOR)
        nominal = efficacy_boundaries(fractions, z_alpha, "obrien_fleming", 2, False).nominal
        return bool(np.any(p <= nominal))

    repeated = 10.0**record.log10_p_adjusted
    assert crosses(repeated * (1 + 1e-4))
    assert not crosses(repeated * (1 - 1e-4))


def test_the_anytime_mode_is_the_sequence_of_runs_paired_in_arrival_order() -> None:
    data = with_options(look_experiment(3, 6, 1.0, 3.0, 7), {})
    record = baseline_record(tables(data))
    means = data.evaluation.groupby(RUN)[METRIC].mean()
    keys = score_keys(data)  # within a look by the runs' scores, not their ids (§4e.7)
    runs = data.runs.assign(
        order=data.runs[LOOK].astype(int), key=[keys[r] for r in data.runs[RUN]]
    ).sort_values(["order", "key"])
    a = [means[r] for r in runs.loc[runs[SYSTEM] == "A", RUN]]
    b = [means[r] for r in runs.loc[runs[SYSTEM] == "B", RUN]]
    d = np.asarray(b) - np.asarray(a)  # higher is better: the improvement of B
    cs = confidence_sequence(d, ALPHA, 1.5)
    assert record.improvement == pytest.approx(d.mean())
    assert (record.lower, record.upper) == pytest.approx((cs.lower[-1], cs.upper[-1]))
    assert 10.0**record.log10_p == pytest.approx(anytime_p(d, 1.5)[-1], rel=1e-6)
    assert record.conditional_power != record.conditional_power  # NaN: no plan, no power


def test_an_unbounded_sequence_says_how_many_pairs_it_needs() -> None:
    """A user trial: 3 seeds, then a fourth for a few systems, and every "better" of look 1
    (t ≈ 20) became "no difference shown" with the interval (−∞, ∞): with 3 pairs the
    sequence has no bound at α = 0.05 whatever the difference. The record and the look history
    say so, with the pairs it needs (4)."""
    data = with_options(look_experiment(2, 3, 1.0, 20.0, 7), {})
    found = tables(data)
    record = baseline_record(found)
    assert (record.lower, record.upper) == (-math.inf, math.inf)
    assert record.verdict == "no difference shown"
    assert "unbounded with 3 pairs of runs: at α = 0.05 it is bounded from 4 pairs" in record.note
    looks = found["looks"]
    last = looks[(looks["family"] == FAMILY_BASELINE) & (looks[LOOK] == 2)]
    assert list(last["note"]) == ["unbounded below 4 pairs"]
    bounded = baseline_record(tables(with_options(look_experiment(2, 4, 1.0, 20.0, 7), {})))
    assert math.isfinite(bounded.lower) and "unbounded" not in bounded.note


@pytest.mark.parametrize("alpha", [0.2, 0.05, 0.0125, 0.01, 0.001])
def test_pairs_for_a_bound_is_where_the_boundary_becomes_finite(alpha: float) -> None:
    n = pairs_for_a_bound(alpha, 1.5)
    assert np.isinf(t_boundary(n - 1, alpha, 1.5)) and np.isfinite(t_boundary(n, alpha, 1.5))


def _family(seed: int) -> MetricData:
    rng = np.random.default_rng(seed)
    data = _frame([("A", 5, RUN_SD, 0.5), ("B", 5, RUN_SD, 0.5), ("C", 5, RUN_SD, 0.5)], rng)
    runs = data.runs.copy()
    runs[LOOK] = [str(max(int(r.rsplit("_", 1)[1]) - 2, 0) + 1) for r in runs[RUN]]
    return replace(data, runs=runs)


@pytest.mark.parametrize(("family", "m"), [(FAMILY_BASELINE, 2), (FAMILY_ALL, 3)])
def test_a_family_of_m_comparisons_spends_alpha_over_m_on_each(family: str, m: int) -> None:
    data = with_options(_family(3), {"max_runs": 8})
    data.options["comparisons"] = family
    found = tables(data)
    records = records_of(found["decisions"])
    assert len(records) == m and {r.family for r in records} == {family}  # the named family's
    for record in records:
        assert record.family_size == m
        assert record.plan_alpha == pytest.approx(ALPHA / m)
    assert set(found["looks"]["family"]) == {family}


def test_without_a_look_column_the_decision_is_todays() -> None:
    data = with_options(look_experiment(3, 5, 1.0, 2.0, 3), {"max_runs": 8})
    plain = replace(data, runs=data.runs.drop(columns=[LOOK]))
    found = tables(plain)
    assert found["looks"].empty
    record = baseline_record(found)
    today = decide(plain, FitLog(METRIC), Settings(alpha=ALPHA, draws=2000, seed=1)).records[0]
    pd.testing.assert_series_equal(pd.Series(record.row()), pd.Series(today.row()))
    assert (record.sequential, record.looks, record.look) == ("", 1, 1)


def test_an_added_look_leaves_the_history_of_earlier_looks_as_it_was() -> None:
    """What an incremental rerun relies on: looks 1-2 read the same with or without look 3."""
    data = with_options(look_experiment(3, 5, 2.0, 1.0, 9), {"max_runs": 8})
    later = tables(data)["looks"]
    kept = set(data.runs.loc[data.runs[LOOK].astype(int) <= 2, RUN])
    earlier = tables(
        replace(
            data,
            runs=data.runs[data.runs[RUN].isin(kept)].reset_index(drop=True),
            evaluation=data.evaluation[data.evaluation[RUN].isin(kept)].reset_index(drop=True),
        )
    )["looks"]
    head = later[later["look"] <= 2].reset_index(drop=True)
    pd.testing.assert_frame_equal(head, earlier.reset_index(drop=True))


def test_the_planned_maximum_ends_the_plan() -> None:
    data = with_options(look_experiment(3, 6, 1.0, 0.0, 21), {"max_runs": 5})
    found = tables(data)
    record = baseline_record(found)
    looks = found["looks"]
    mine = looks[looks["family"] == FAMILY_BASELINE].sort_values("look")
    assert list(mine["note"].fillna(""))[-1] == "after the final look: not tested"
    if not record.directional:
        assert record.action == STOP_MAXIMUM and record.look == 3  # 5 runs: the maximum


def _seed_of_one_system(gains: str) -> MetricData:
    """A (the baseline), B and C with 3 runs at look 1, B 0.8 run SDs better than A; one run
    of ``gains`` arrives at look 2 (nothing declared but the looks)."""
    rng = np.random.default_rng(5)
    systems = [("A", 3, RUN_SD, 0.5), ("B", 3, RUN_SD, 0.5 + 0.8 * RUN_SD), ("C", 3, RUN_SD, 0.5)]
    data = _frame([(s, n + (s == gains), sd, mean) for s, n, sd, mean in systems], rng)
    runs = data.runs.copy()
    runs[LOOK] = ["2" if r == f"{gains}_3" else "1" for r in runs[RUN]]
    return with_options(replace(data, runs=runs), {})


# what a verdict read at its one look keeps (§4e.12): everything but where the looks are counted
READ_THEN = ("verdict", "improvement", "se", "df", "lower", "upper", "interval", "p_adjusted")


@pytest.mark.parametrize("family", [FAMILY_BASELINE, FAMILY_ALL])
def test_a_pair_whose_runs_did_not_change_keeps_the_verdict_of_its_one_look(family: str) -> None:
    """A new seed of C looks again at the pairs with C only: A vs B keeps the fixed-sample
    record of look 1, as read then (look 1's fit and family), in decisions.csv and in
    looks.csv; A vs C (and B vs C) are decided by the confidence sequence (§4e.12). Before,
    one new seed of one system turned every pair anytime-valid."""
    data = _seed_of_one_system("C")
    data.options["comparisons"] = family
    records = {(r.reference, r.system): r for r in records_of(tables(data)["decisions"])}
    first = up_to(data, 1)
    first.options["comparisons"] = family
    then = {(r.reference, r.system): r for r in records_of(tables(first)["decisions"])}
    kept = records[("A", "B")]
    assert [getattr(kept, f) for f in READ_THEN] == [getattr(then["A", "B"], f) for f in READ_THEN]
    assert kept.family_size == then["A", "B"].family_size
    assert (kept.sequential, kept.look, kept.looks, kept.one_look) == ("", 1, 2, True)
    assert "one look of its runs (look 1" in kept.note
    changed = [pair for pair in records if "C" in pair]
    assert changed and all(records[pair].sequential == ANYTIME for pair in changed)
    looks = tables(data)["looks"]
    own = looks[(looks["reference"] == "A") & (looks["system"] == "B")]
    assert list(own[LOOK]) == [1] and list(own["improvement"]) == [kept.improvement]


def test_a_new_seed_of_the_baseline_looks_again_at_every_comparison_with_it() -> None:
    records = records_of(tables(_seed_of_one_system("A"))["decisions"])
    assert {r.system for r in records} == {"B", "C"}
    assert all(r.sequential == ANYTIME and not r.one_look for r in records)


def test_a_family_of_both_kinds_names_each_kind_in_every_heading() -> None:
    """Beside a comparison decided at looks, the one with one look of its own keeps its
    step-down interval and p: the headings of the page and of the paste-ready tables name both
    kinds, the caption says which rows are which (the dagger), never only the first row's."""
    found = tables(_seed_of_one_system("C"))
    records = records_of(found["decisions"])
    assert {r.interval.split(" ")[0] for r in records} == {"step-down", ANYTIME}
    assert interval_heading(records) == "step-down / anytime-valid 95 % CI"
    assert p_heading(records).startswith("p / anytime-valid p (step-down over 2 ")
    titles = [" ".join(h) for h in header(records)]
    assert "Improvement [95 % CI, step-down / anytime-valid]" in titles
    text = caption(found["summary"], records, "score", "higher", ALPHA)
    assert (
        "95 % intervals, anytime-valid for the comparisons decided at looks, step-down for "
        "those marked \u2020 (one look of their runs)"
    ) in text
    assert "\u2020 one look of its runs" in text
    rows = paper_rows(found["summary"], records, "higher")
    cells = {row.system: row.improvement[0] for row in rows}
    assert cells["B"].endswith("\u2020") and not cells["C"].endswith("\u2020")


def test_a_system_that_arrives_later_is_read_at_the_look_it_arrived() -> None:
    """C arrives at look 2 with 3 runs, then a run of B at look 3: A vs C keeps the record read
    at look 2 (the decision of looks 1-2's runs, C's first), A vs B is looked at again."""
    rng = np.random.default_rng(8)
    systems = [("A", 3, RUN_SD, 0.5), ("B", 4, RUN_SD, 0.5), ("C", 3, RUN_SD, 0.5 + RUN_SD)]
    data = _frame(systems, rng)
    runs = data.runs.copy()
    runs[LOOK] = ["3" if r == "B_3" else "2" if r.startswith("C_") else "1" for r in runs[RUN]]
    data = with_options(replace(data, runs=runs), {})
    records = {r.system: r for r in records_of(tables(data)["decisions"])}
    then = {r.system: r for r in records_of(tables(up_to(data, 2))["decisions"])}  # looks 1-2
    kept = records["C"]
    assert [getattr(kept, f) for f in READ_THEN] == [getattr(then["C"], f) for f in READ_THEN]
    assert (kept.sequential, kept.look, kept.looks, kept.one_look) == ("", 2, 3, True)
    assert records["B"].sequential == ANYTIME


def test_a_single_output_pair_that_did_not_change_keeps_its_one_look_too() -> None:
    """S has one run, B gains one at look 2: baseline vs S (a single output, never tested at
    looks) keeps the record read at look 1 instead of being decided again on the latest fit;
    the sentence's p says where it was read."""
    rng = np.random.default_rng(6)
    systems = [("A", 3, RUN_SD, 0.5), ("B", 4, RUN_SD, 0.5), ("S", 1, RUN_SD, 0.5)]
    data = _frame(systems, rng)
    runs = data.runs.copy()
    runs[LOOK] = ["2" if r == "B_3" else "1" for r in runs[RUN]]
    data = with_options(replace(data, runs=runs), {})
    records = {r.system: r for r in records_of(tables(data)["decisions"])}
    then = {r.system: r for r in records_of(tables(up_to(data, 1))["decisions"])}
    kept = records["S"]
    assert [getattr(kept, f) for f in READ_THEN] == [getattr(then["S"], f) for f in READ_THEN]
    assert (kept.look, kept.looks, kept.one_look) == (1, 2, True)
    assert "; read at look 1)" in p_text(kept)
    assert records["B"].sequential == ANYTIME
