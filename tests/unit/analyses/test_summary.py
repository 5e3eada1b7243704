"""The decision (docs/method.md §4c) on the bundled Kreutzer et al. (2020) TER data and on small
synthetic designs: ranking, estimands by run counts, families, sign convention, letters, the
records and their renderings."""

from __future__ import annotations

import dataclasses
import math
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis.strategies import integers
from optional_tools import LatexTools
from scipy import stats
from synthetic_systems import systems_data
from workflow_helpers import kreutzer_ter

from infrepro.analyses.common.data import MetricData, run_means
from infrepro.analyses.common.fitlog import FitLog
from infrepro.analyses.decision import model as summary_model
from infrepro.analyses.decision import pairtests
from infrepro.analyses.decision.model import Estimate
from infrepro.analyses.decision.summary import MetricDecision, Settings, decide
from infrepro.core.decisions import (
    BETTER,
    FAMILY_ALL,
    FAMILY_BASELINE,
    OUTPUTS,
    SYSTEMS,
    VS_OUTPUT,
    WORSE,
    PairDecision,
)
from infrepro.core.vocabulary import SYSTEM, TABLE_SPECS, columns
from infrepro.io.results import read_result_table
from infrepro.plumbing.atomic import write_csv
from infrepro.report.decisions import PILCROW, book_of, records_of, sentence, verdict_text
from infrepro.report.inputs import ReportSettings
from infrepro.report.paper import latex_table, markdown_table, verdict_cell
from infrepro.report.sections import decision
from infrepro.report.verdict import badge
from infrepro.stats.calibrated import band_log10_p, critical_t, moderated_variances
from infrepro.stats.letters import compact_letters


def against(result: MetricDecision, family: str = FAMILY_BASELINE) -> dict[str, PairDecision]:
    """The records of a family with the baseline (the one system that is never a record's
    ``system``: every pair's reference is the earlier system, the baseline first), by the
    other system."""
    records = [r for r in result.records if r.family == family]
    baseline = set(result.summary[SYSTEM]) - {r.system for r in records}
    return {r.system: r for r in records if r.reference in baseline}


@pytest.fixture(scope="module")
def kreutzer() -> MetricData:
    return kreutzer_ter(with_properties=False)


@pytest.fixture(scope="module")
def kreutzer_decision(kreutzer: MetricData) -> MetricDecision:
    return decide(kreutzer, FitLog(kreutzer.metric), Settings(seed=1))


def test_the_record_is_the_table_schema() -> None:
    """The record's fields are the columns of ``decisions.csv``, in order."""
    own = tuple(f.name for f in dataclasses.fields(PairDecision))
    assert own == TABLE_SPECS["decisions"].names


def test_kreutzer_ranks_and_compares_systems_with_the_single_output(
    kreutzer: MetricData, kreutzer_decision: MetricDecision
) -> None:
    table = kreutzer_decision.summary
    assert list(table.columns) == columns("summary")
    assert list(table["system"]) == ["Marking", "PostEdit", "Baseline"]  # lower TER first
    assert list(table["rank"]) == [1, 2, 3]
    assert (np.diff(table["model_mean"]) > 0).all()
    records = against(kreutzer_decision)
    assert set(records) == {"Marking", "PostEdit"}
    for record in records.values():  # Baseline has one run: systems against its one output
        assert record.comparison == VS_OUTPUT and record.reference == "Baseline"
        assert record.estimand.endswith("vs Baseline's single output")
        assert record.improvement > 0  # lower TER = better = positive
        assert record.family_size == 2
    baseline = table[table["system"] == "Baseline"].iloc[0]
    assert baseline["note"].startswith("one run: its output's mean")
    assert math.isnan(baseline["model_lower"]) and math.isnan(baseline["model_upper"])
    assert baseline["output_group"] == "" and baseline["group"] == ""  # no system-level letter
    assert set(table.loc[table["system"] != "Baseline", "group"]) <= {"a", "ab", "b"}


def test_a_single_output_is_compared_with_the_model_mean_not_a_picked_run(
    kreutzer: MetricData, kreutzer_decision: MetricDecision
) -> None:
    """§4c.4 (issue 27, acceptance 2): improvement = sign · (model mean − the single output's
    mean over the same segments), whatever run scores best on the test set."""
    means = kreutzer.evaluation.groupby("system")[kreutzer.metric].mean()
    model = kreutzer_decision.summary.set_index(SYSTEM)["model_mean"]
    for system, record in against(kreutzer_decision).items():
        expected = -(model[system] - means["Baseline"])  # lower is better
        assert record.improvement == pytest.approx(expected, rel=1e-6)
    # move Marking's best test run without moving its mean over runs: nothing changes
    runs = run_means(kreutzer)
    marking = runs[runs[SYSTEM] == "Marking"].sort_values("mean")
    best, worst = marking["run_id"].iloc[0], marking["run_id"].iloc[-1]
    gap = float(marking["mean"].iloc[-1] - marking["mean"].iloc[0])
    evaluation = kreutzer.evaluation.copy()
    evaluation.loc[evaluation["run_id"] == best, kreutzer.metric] += 0.6 * gap
    evaluation.loc[evaluation["run_id"] == worst, kreutzer.metric] -= 0.6 * gap
    moved = dataclasses.replace(kreutzer, evaluation=evaluation)
    after = against(decide(moved, FitLog(kreutzer.metric), Settings(seed=1)))
    assert after["Marking"].improvement == pytest.approx(
        against(kreutzer_decision)["Marking"].improvement, rel=1e-6
    )


def test_intervals_contain_estimates(kreutzer_decision: MetricDecision) -> None:
    table = kreutzer_decision.summary.dropna(subset=["model_lower"])
    assert (table["model_lower"] < table["model_mean"]).all()
    assert (table["model_mean"] < table["model_upper"]).all()
    for record in kreutzer_decision.records:
        assert record.lower < record.improvement < record.upper
    assert (
        kreutzer_decision.summary["rank_lower"] <= kreutzer_decision.summary["rank_upper"]
    ).all()


def _synthetic(sign: int, runs: dict[str, int], shift: dict[str, float]) -> MetricData:
    return systems_data(runs, shift, seed=7, segments=30, sign=sign)


RUNS = {"A": 4, "B": 3, "C": 5, "D": 1}
SHIFT = {"A": 0.0, "B": 0.01, "C": 0.08, "D": -0.05}


def test_improvement_sign_follows_the_metric_direction() -> None:
    """Negating the scores and flipping the direction changes no improvement, rank or letter."""
    up = decide(_synthetic(1, RUNS, SHIFT), FitLog("y"), Settings())
    down = decide(_synthetic(-1, RUNS, SHIFT), FitLog("y"), Settings())
    assert list(up.summary["system"]) == list(down.summary["system"]) == ["C", "B", "A", "D"]
    for a, b in zip(up.records, down.records, strict=True):
        assert (a.reference, a.system, a.verdict) == (b.reference, b.system, b.verdict)
        assert a.improvement == pytest.approx(b.improvement, rel=1e-5)
        assert a.lower == pytest.approx(b.lower, rel=1e-5)
        assert a.statistic == pytest.approx(b.statistic, rel=1e-5)
    assert list(up.summary["group"]) == list(down.summary["group"])
    c = against(up)["C"]
    assert c.improvement > 0 and c.statistic > 0 and c.verdict == BETTER
    assert c.comparison == SYSTEMS
    assert against(up)["D"].comparison == VS_OUTPUT


def test_the_estimand_names_the_competitor_when_the_competitor_has_the_single_run() -> None:
    """Issue 41: D has one run and the baseline A four; the estimand text said "D's mean over
    retraining vs A's single output", the other way round."""
    records = against(decide(_synthetic(1, RUNS, SHIFT), FitLog("y"), Settings()))
    assert records["D"].comparison == VS_OUTPUT
    assert records["D"].estimand == "A's mean over retraining vs D's single output"
    single_baseline = {"A": 1, "B": 3}
    result = decide(_synthetic(1, single_baseline, {"A": 0.0, "B": 0.01}), FitLog("y"), Settings())
    assert against(result)["B"].estimand == "B's mean over retraining vs A's single output"


def test_a_vs_single_output_df_is_at_most_the_runs_less_one_when_the_run_variance_is_zero() -> None:
    """Issue 41: B's five runs have equal means (fitted run variance 0), so M's df for B vs
    A's single output is the residual's; the interval must still describe retraining: the t of
    B's run means, with B's runs − 1 = 4 df (§4c.4)."""
    data = _synthetic(1, {"A": 1, "B": 5}, {"A": 0.0, "B": 0.01})
    frame = data.evaluation
    b = frame["system"] == "B"
    run_mean = frame[b].groupby("run_id")["y"].transform("mean")
    frame.loc[b, "y"] = frame.loc[b, "y"] - run_mean + frame.loc[b, "y"].mean()
    fitted = summary_model.fit_decision_model(data, FitLog("y"))
    assert fitted is not None and fitted.pairs[0].comparison == VS_OUTPUT
    record = against(decide(data, FitLog("y"), Settings()))["B"]
    assert fitted.pairs[0].delta.df > 40  # M's own df: the residual's
    assert record.df == 4.0 and record.test == "t on the run means, df 4"
    # B's run-mean variance from M: its run variance (0) + the residual over 30 segments
    residual = float(fitted.fit.reported_components["Residual"])
    assert record.se == pytest.approx(math.sqrt(residual / 30 / 5), rel=1e-9)
    half = record.critical * record.se
    assert record.critical == pytest.approx(stats.t.ppf(0.975, 4.0), rel=1e-6)
    assert record.upper - record.lower == pytest.approx(2 * half)
    assert record.log10_p == pytest.approx(
        math.log10(2 * stats.t.sf(abs(record.statistic), 4.0)), rel=1e-9
    )


def test_families_and_determinism() -> None:
    data = _synthetic(1, RUNS, SHIFT)
    baseline = decide(data, FitLog("y"), Settings(seed=3))
    again = decide(data, FitLog("y"), Settings(seed=3))
    pd.testing.assert_frame_equal(baseline.summary, again.summary)
    assert baseline.records == again.records
    pairs = decide(data, FitLog("y"), Settings(family=FAMILY_ALL, seed=3))
    assert {r.family for r in pairs.records} == {FAMILY_ALL}
    assert {(r.family, r.family_size) for r in baseline.records} == {
        (FAMILY_BASELINE, 3),
        (FAMILY_ALL, 6),
    }
    named, everything = against(baseline), against(pairs, FAMILY_ALL)
    for system, record in named.items():  # a larger family adjusts more
        assert everything[system].log10_p_adjusted >= record.log10_p_adjusted
        assert everything[system].log10_p == record.log10_p
    with pytest.raises(ValueError, match="analyses.comparisons"):
        Settings(family="pairs")


def test_all_single_run_systems_compare_outputs() -> None:
    result = decide(
        _synthetic(1, {"A": 1, "B": 1, "C": 1}, {"A": 0, "B": 0.03, "C": 0.0}),
        FitLog("y"),
        Settings(),
    )
    table = result.summary
    assert list(table["runs"]) == [1, 1, 1]
    assert {r.comparison for r in result.records} == {OUTPUTS}
    assert table["note"].str.startswith("one run").all()
    assert table["model"].iloc[0] == "y ~ system + (1|segment_id)"
    assert (table["group"] == "").all() and (table["output_group"] != "").all()
    assert table["output_group"].str.isupper().all()
    assert (table["best_run_selected_by"] == "").all()  # nothing to select from
    records = [r for r in result.records if r.family == FAMILY_BASELINE]
    paired = [
        (row, next((r for r in records if r.system == row.system), None))
        for _, row in table.iterrows()
    ]
    notes = decision._notes(paired)
    assert len(notes) == 1 and notes[0].startswith("Every system: one run")


def test_letters_chain_and_separated_pairs() -> None:
    # means a < b < c < d; a-c, a-d and b-d separated: groups {a, b}, {b, c}, {c, d}
    letters = compact_letters(
        ["d", "c", "b", "a"], ["a", "b", "c", "d"], [("a", "c"), ("a", "d"), ("b", "d")]
    )
    assert letters == {"d": "a", "c": "ab", "b": "bc", "a": "c"}
    assert compact_letters(["x", "y"], ["y", "x"], []) == {"x": "a", "y": "a"}
    assert compact_letters(["x", "y"], ["y", "x"], [("x", "y")]) == {"x": "a", "y": "b"}


def _absorb_pass_by_pass(m: np.ndarray) -> np.ndarray:
    """multcomp's absorb as a loop over the pairs, one pass over the rows each, from the start
    after every removal (stats.letters._absorb before it found containment once, issue 45)."""
    changed = True
    while changed and m.shape[1] > 1:
        changed = False
        for j in range(m.shape[1] - 1):
            for k in range(j + 1, m.shape[1]):
                if np.all(m[m[:, k], j]):
                    m, changed = np.delete(m, k, axis=1), True
                elif np.all(m[m[:, j], k]):
                    m, changed = np.delete(m, j, axis=1), True
                if changed:
                    break
            if changed:
                break
    return m


def test_absorb_removes_the_columns_the_pass_by_pass_loop_removes() -> None:
    """Random letter matrices with duplicate, nested and empty columns: the same columns go."""
    from infrepro.stats.letters import _absorb

    rng = np.random.default_rng(45)
    for _ in range(500):
        rows, cols = int(rng.integers(1, 10)), int(rng.integers(1, 12))
        m = rng.random((rows, cols)) < rng.uniform(0.2, 0.95)
        extra = [m[:, : int(rng.integers(0, cols + 1))], np.zeros((rows, 1), dtype=bool)]
        m = np.hstack([m, *extra])[:, rng.permutation(cols + extra[0].shape[1] + 1)]
        assert np.array_equal(_absorb(m.copy()), _absorb_pass_by_pass(m.copy()))


def test_systems_and_outputs_get_letters_apart() -> None:
    """Output-level separations never split the systems' groups (§4c.6)."""
    runs = {"A": 3, "B": 3, "C": 1, "D": 1}
    shift = {"A": 0.0, "B": 0.0, "C": 0.0, "D": 0.3}
    table = decide(_synthetic(1, runs, shift), FitLog("y"), Settings()).summary.set_index(SYSTEM)
    assert table.loc["A", "group"] == table.loc["B", "group"] == "a"
    assert table.loc["C", "group"] == table.loc["D", "group"] == ""
    assert table.loc["C", "output_group"] != table.loc["D", "output_group"]  # 30 points apart


def _kreutzer_view(result: MetricDecision) -> tuple[pd.DataFrame, list[PairDecision]]:
    return result.summary.assign(metric="TER"), list(against(result).values())


def test_latex_table_compiles_and_fits_the_page(
    kreutzer_decision: MetricDecision, tmp_path: Path, latex: LatexTools
) -> None:
    """The paste-ready table compiles with booktabs and fits a 5.5 in text width (NeurIPS,
    ICLR) without overfull boxes; the PDF page is rendered to PNG with pdftoppm where it is
    installed (the page was looked at when the test was written)."""
    table, records = _kreutzer_view(kreutzer_decision)
    tex = latex_table(table, records, label="TER", stem="ter", better="lower", alpha=0.05)
    assert "\\toprule" in tex and "\\textbf{" in tex and "\\ddag{}" in tex
    assert "Kenward-Roger" in tex and "over 2 comparisons" in tex and "$\\alpha$ = 0.05" in tex
    assert "TER in points" in tex and "+" in tex  # the metric's label, signed improvements
    document = (
        "\\documentclass{article}\n\\usepackage{booktabs}\n\\setlength{\\textwidth}{5.5in}\n"
        "\\begin{document}\n" + tex + "\\end{document}\n"
    )
    log = latex.compile(document, tmp_path, "pdflatex", timeout=120)
    assert "Overfull \\hbox" not in log, log[-3000:]
    if shutil.which("pdftoppm"):
        subprocess.run(
            ["pdftoppm", "-png", "-r", "60", "-f", "1", "-l", "1", "table.pdf", "page"],
            cwd=tmp_path,
            check=True,
            timeout=60,
        )
        assert list(tmp_path.glob("page*.png"))


def test_markdown_table(kreutzer_decision: MetricDecision) -> None:
    table, records = _kreutzer_view(kreutzer_decision)
    md = markdown_table(table, records, label="TER", better="lower", alpha=0.05)
    lines = md.splitlines()
    assert lines[0].startswith("| Rank (95 %) | System |") and "| Verdict |" in lines[0]
    assert "| p (step-down, 2 vs baseline) |" in lines[0]
    assert lines[2].startswith("| 1 (1–2) | Marking | 3 | **")
    assert "(baseline)" in lines[4] and "(one output)" in lines[4]
    marking = against(kreutzer_decision)["Marking"]
    assert f"| {marking.p_adjusted} | better\u2021 |" in lines[2]
    assert "Kenward-Roger" in md and "α = 0.05" in md


def test_paper_tables_mark_a_verdict_that_rests_on_the_band(
    kreutzer_decision: MetricDecision,
) -> None:
    """A record with the band as its assumption is marked ¶ in the Markdown and LaTeX tables,
    and the caption says what the mark means; without one neither appears."""
    table, records = _kreutzer_view(kreutzer_decision)
    caption = "Berger and Boos' test, valid at any ratio of run SDs, does not reach α"
    plain = markdown_table(table, records, label="TER", better="lower", alpha=0.05)
    assert PILCROW not in plain and caption not in plain
    assumed = [dataclasses.replace(records[0], assumption="run-mean SDs within a factor of 2")]
    marked = assumed + records[1:]
    md = markdown_table(table, marked, label="TER", better="lower", alpha=0.05)
    assert f"| {records[0].verdict}\u2021{PILCROW} |" in md and caption in md
    tex = latex_table(table, marked, label="TER", stem="ter", better="lower", alpha=0.05)
    assert "\\ddag{}\\P{}" in tex and "does not reach $\\alpha$" in tex


def test_t_p_is_finite_far_below_the_float_range() -> None:
    value = summary_model.t_log10_p(Estimate(100.0, 1.0, 1000.0))
    assert math.isfinite(value) and value < -500


def test_sentences_name_model_df_and_family() -> None:
    records = against(decide(_synthetic(1, RUNS, SHIFT), FitLog("y"), Settings()))
    text = sentence(records["C"], "Y")
    assert text.startswith("C better than A by ")
    assert "model M (REML)" in text and "t = " in text and "calibrated over run-mean SD" in text
    assert "over 3 comparisons with the baseline)" in text
    assert "over retraining" in text
    d = sentence(records["D"], "Y")  # one run against four: vs its single output
    assert d.startswith("D's single output") or d.startswith("No difference shown between D's")
    assert "how it varies with retraining is unknown" in d or "D's single output" in d


def test_report_section_from_the_csv(tmp_path: Path) -> None:
    """summary.csv and decisions.csv, written and read back as the report reads them, give the
    section: the table best first, the p header naming the family, the forest plot, the
    sentences and LaTeX, each with the records' numbers."""
    result = decide(_synthetic(1, RUNS, SHIFT), FitLog("y"), Settings())
    write_csv(result.summary, tmp_path / "summary.csv")
    frame = pd.DataFrame([r.row() for r in result.records], columns=columns("decisions"))
    write_csv(frame, tmp_path / "decisions.csv")
    tables = {
        "summary": read_result_table("summary", tmp_path / "summary.csv"),
        "decisions": read_result_table("decisions", tmp_path / "decisions.csv"),
    }
    for read, record in zip(records_of(tables["decisions"]), result.records, strict=True):
        for name, value in record.row().items():  # the CSV keeps 10 significant digits
            if isinstance(value, float):
                assert getattr(read, name) == pytest.approx(value, rel=1e-9, nan_ok=True)
            else:
                assert getattr(read, name) == value, name
    settings = ReportSettings(
        name="toy", baseline="A", systems=list("ABCD"), metrics=["y"], better={"y": "higher"}
    )
    (section,) = decision.build(tables, settings)
    assert [row[1].text for row in section.table.rows] == ["C", "B", "A", "D"]
    labels = [c.label for c in section.table.headers]
    assert "p (step-down over 3 comparisons with the baseline)" in labels
    assert len(section.forest) == 1 and "<svg" in section.forest[0].svg
    assert len(section.sentences) == 3
    assert section.latex.startswith("% Engine: pdflatex") and "\\begin{table*}" in section.latex
    c = against(result)["C"]
    row = next(r for r in section.table.rows if r[1].text == "C")
    assert [cell.text for cell in row[6:9]] == [
        decision.interval(c),
        c.p_adjusted,
        decision.verdict_text(c),
    ]


def test_best_run_orders_confirmed_by_the_model() -> None:
    table = decide(_synthetic(1, RUNS, SHIFT), FitLog("y"), Settings()).summary
    k = len(table)
    assert sorted(table["best_run_rank"]) == list(range(1, k + 1))
    assert table["best_run_wins"].sum() == k * (k - 1) // 2  # no ties
    assert (table["best_run_wins_confirmed"] <= table["best_run_wins"]).all()
    c = table[table["system"] == "C"].iloc[0]  # 8 points above the rest: every order confirmed
    assert c["best_run_wins"] == c["best_run_wins_confirmed"] == 3
    text = decision.best_run_orders(table, 0.05)
    assert f"of the {k * (k - 1) // 2} pairwise orders" in text


def test_shared_facets_need_the_facet_aware_reading_for_a_general_claim() -> None:
    """The bundled example's TER (tests/golden/data/example_ter.csv.gz): per-system p 0.02228
    (lmerTest, fixtures_ddf/example_ter_persys), facet-aware p 0.46: no general claim."""
    evaluation = pd.read_csv(
        Path(__file__).parents[2] / "golden" / "data" / "example_ter.csv.gz",
        dtype={"lambda": str, "noise": str, "seed": str},
    )
    facets = ["lambda", "noise", "seed"]
    runs = evaluation[["run_id", "system", *facets]].drop_duplicates().reset_index(drop=True)
    data = MetricData(
        metric="ter",
        better="lower",
        baseline="baseline",
        evaluation=evaluation,
        runs=runs,
        facets=facets,
        properties=[],
    )
    competitor = against(decide(data, FitLog("ter"), Settings()))["competitor"]
    # M's t is lmerTest's (p 0.02228 at KR df 18.87); its p is the calibrated test's (§4b.11)
    assert abs(competitor.statistic) == pytest.approx(stats.t.isf(0.02228 / 2, 18.87), rel=1e-3)
    calibrated = band_log10_p(competitor.statistic, 6, 18, 2.0)
    assert competitor.log10_p == pytest.approx(calibrated, rel=1e-9)
    assert 0.02228 < 10**calibrated < 0.05
    assert competitor.improvement == pytest.approx(-0.038447, abs=1e-6)  # TER 3.84 worse
    assert float(competitor.facet_aware_p) == pytest.approx(0.46, abs=0.005)
    assert competitor.verdict == WORSE and not competitor.generalises  # §4b.6
    text = sentence(competitor, "TER")
    assert text.startswith("competitor worse than baseline by 3.84")
    assert "over retraining at these meta-parameter settings" in text
    assert "lies outside the band" in competitor.note  # run-SD ratio 7 (95 % CI 2.8-13)
    # the size's interval has the size's sign: worse by 3.84 [0.6, 7.1], not [-7.1, -0.6]
    interval = text.split(" [", 1)[1].split("]", 1)[0]
    low, high = (float(v.replace("\u2212", "-")) for v in interval.split(", "))
    assert 0 < low < 3.84 < high
    assert "treating the shared facets' levels as draws: p = 0.4622" in text


def test_few_runs_are_judged_by_the_calibrated_test() -> None:
    """10 vs 2 runs (refused before issue 28): a clear difference is judged by Welch's t
    calibrated over run-mean SD ratios within 2 (§4b.11), its interval from the same test, the
    ratio and its interval in the record; no verdict is withheld for lack of runs."""
    shift = {"A": 0.0, "B": 0.6}
    few = decide(_synthetic(1, {"A": 10, "B": 2}, shift), FitLog("y"), Settings())
    b = against(few)["B"]
    assert b.verdict == BETTER and b.lower > 0 and "calibrated over run-mean SD ratio" in b.test
    assert b.critical == pytest.approx(critical_t(0.05, 10, 2, 2.0))  # one comparison: at α
    assert 0 < b.run_sd_ratio_lower <= b.run_sd_ratio <= b.run_sd_ratio_upper
    assert b.band == 2.0 and math.isnan(b.prior_df)  # two multi-run systems: no moderation
    assert set(few.summary["group"]) == {"a", "b"}


@pytest.mark.parametrize("shift", [0.06, 0.08, 0.15])
def test_a_verdict_that_rests_on_the_band_says_so_on_every_surface(shift: float) -> None:
    """3 vs 3 runs (§4c.5, issue 41): a directional verdict of the calibrated test carries the
    band as its assumption exactly when Berger and Boos' test of the same data (the option
    ``berger_boos: true``, valid at any ratio) gives no directional verdict; the cell, the
    sentence to quote, the badge and the paper table's mark say it."""
    data = systems_data({"A": 3, "B": 3}, {"A": 0.0, "B": shift}, seed=7, segments=30)
    b = against(decide(data, FitLog("y"), Settings()))["B"]
    any_ratio = Settings(runs=dataclasses.replace(Settings().runs, berger_boos=True))
    checked = against(decide(data, FitLog("y"), any_ratio))["B"]
    assert b.verdict == BETTER and checked.assumption == ""
    assert bool(b.assumption) == (checked.verdict != BETTER)
    texts = (sentence(b, "Y"), badge(b, "").badge)
    if b.assumption:
        assert b.assumption == "run-mean SDs within a factor of 2"
        assert all("assuming run-mean SDs within a factor of 2" in t for t in texts)
        assert verdict_cell(b) == verdict_text(b) == BETTER + PILCROW
        assert verdict_text(b, spelled=True) == f"{BETTER} (assuming {b.assumption})"
    else:
        assert not any("assuming" in t for t in texts)
        assert verdict_cell(b) == verdict_text(b) == BETTER


def test_the_band_assumption_is_found_across_shifts() -> None:
    """Between the band test's threshold and Berger-Boos' there are verdicts that rest on the
    band (shift 0.06 of 3 vs 3 runs), and beyond both none do (0.15): the parametrised test
    above sees both branches."""
    marks = []
    for shift in (0.06, 0.15):
        data = systems_data({"A": 3, "B": 3}, {"A": 0.0, "B": shift}, seed=7, segments=30)
        marks.append(against(decide(data, FitLog("y"), Settings()))["B"].assumption)
    assert marks[0] and not marks[1]


def test_many_systems_moderate_their_run_variances() -> None:
    """Three or more systems with two or more runs: the run-mean variances borrow strength
    (limma's fit, prior df at most 4); the records say the prior df; pairs with a single-run
    side keep M's t test."""
    result = decide(_synthetic(1, RUNS, SHIFT), FitLog("y"), Settings())
    records = against(result)
    assert 0 <= records["C"].prior_df <= 4 and "moderated (prior df" in records["C"].test
    assert records["D"].comparison == VS_OUTPUT and records["D"].test.startswith("t on the run")
    off = decide(
        _synthetic(1, RUNS, SHIFT),
        FitLog("y"),
        Settings(runs=dataclasses.replace(Settings().runs, moderate=False)),
    )
    assert math.isnan(against(off)["C"].prior_df) and "moderated" not in against(off)["C"].test


def test_moderation_does_not_shrink_a_system_whose_run_variance_the_prior_does_not_support() -> (
    None
):
    """Seven 3-run systems, one with a run SD ten times the others' (the baseline's a quarter):
    the prior does not support its run-mean variance, so moderation leaves it at its own; its
    pair with the baseline has an SE no smaller than unmoderated, and a note names it on every
    record of its pairs and on no other (docs/method.md §4b.12)."""
    wild = "Système-É 🎲"
    runs = dict.fromkeys(["A", "B", "C", "D", "E", "F", wild], 3)
    data = systems_data(
        runs, dict.fromkeys(runs, 0.0), seed=2, segments=30, run_sd={"A": 0.005, wild: 0.2}
    )
    moderated = decide(data, FitLog("y"), Settings())
    plain = decide(
        data, FitLog("y"), Settings(runs=dataclasses.replace(Settings().runs, moderate=False))
    )
    record, unmoderated = against(moderated)[wild], against(plain)[wild]
    assert "moderated (prior df" in record.test
    assert record.se >= unmoderated.se
    for r in moderated.records:
        mentioned = wild in (r.reference, r.system)
        assert (
            f"the run-mean variance of {wild} lies above the 80 % quantile" in r.note
        ) == mentioned
        assert ("not shrunk below its own" in r.note) == mentioned


def test_moderation_with_a_supported_prior_shrinks_as_before_and_notes_nothing() -> None:
    """Seven 3-run systems with the same run SD (a seed where every variance is within the
    prior's 80 % range; under the prior a fifth of them are not): the tests use limma's capped
    posterior variances (``moderated_variances``), some shrunk, and no record carries the
    moderation's note."""
    runs = dict.fromkeys(["A", "B", "C", "D", "E", "F", "G"], 3)
    data = systems_data(runs, dict.fromkeys(runs, 0.0), seed=1, segments=30)
    result = decide(data, FitLog("y"), Settings())
    assert all("moderated (prior df" in r.test for r in result.records)
    assert not any("moderation's prior" in r.note for r in result.records)
    model = summary_model.fit_decision_model(data, FitLog("y"))
    assert model is not None
    var = pairtests.variances(model.fit, data, model.runs, Settings().runs)
    assert var.unsupported == ()
    names = list(var.observed)
    expected = moderated_variances([var.observed[s] for s in names], 2.0)
    assert [var.used[s] for s in names] == pytest.approx(list(expected.var_post), rel=1e-12)
    assert [var.df[s] for s in names] == pytest.approx(list(expected.df_post), rel=1e-12)
    assert any(var.used[s] < var.observed[s] for s in names)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(
    n_a=integers(min_value=2, max_value=8),
    n_b=integers(min_value=2, max_value=8),
    side=integers(min_value=0, max_value=1),
)
def test_adding_a_run_never_withholds_a_verdict(n_a: int, n_b: int, side: int) -> None:
    """Issue 28, acceptance 4: with a clear difference, any run counts of two or more a side
    and one more run on either side, the verdict names the better system: no design is 'not
    judged' for lack of runs."""
    shift = {"A": 0.0, "B": 0.6}
    for runs in ({"A": n_a, "B": n_b}, {"A": n_a + (side == 0), "B": n_b + (side == 1)}):
        record = against(decide(_synthetic(1, runs, shift), FitLog("y"), Settings()))["B"]
        assert record.verdict == BETTER, (runs, record.p_value)


@pytest.mark.parametrize("adjust", ["step-down", "max-t"])
@pytest.mark.parametrize("family", [FAMILY_BASELINE, FAMILY_ALL])
def test_an_interval_excludes_zero_exactly_when_the_verdict_is_directional(
    family: str, adjust: str
) -> None:
    """Issue 27, acceptance 3; issue 43, acceptance 3: every record's interval and verdict come
    from one procedure, t tests and calibrated tests alike, in both families: the default
    step-down (each interval at its step's level) and single-step max-t (Bonferroni where a
    family holds a calibrated test, §4c.10)."""
    shifts = {"A": 0.0, "B": 0.03, "C": 0.08, "D": -0.05, "E": 0.012, "F": 0.0}
    runs = {"A": 4, "B": 3, "C": 5, "D": 1, "E": 2, "F": 1}
    settings = Settings(family=family, adjust=adjust)
    result = decide(_synthetic(1, runs, shifts), FitLog("y"), settings)
    records = [r for r in result.records if r.family == family]
    assert {r.comparison for r in records} >= {SYSTEMS, VS_OUTPUT}
    assert any(r.directional for r in records) and not all(r.directional for r in records)
    method, kind = {
        "step-down": ("step-down", "step-down"),
        "max-t": ("bonferroni", "simultaneous"),
    }[adjust]
    for r in records:
        assert r.adjust == method and r.interval == f"{kind} 95 %"
        assert (r.lower > 0 or r.upper < 0) == r.directional, r
        assert (r.log10_p_adjusted < math.log10(0.05)) == r.directional, r


def test_max_t_where_every_contrast_is_ms_t_bonferroni_where_a_test_is_calibrated() -> None:
    """§4c.10: single outputs' comparisons are all M's t tests, so their family is max-t
    (emmeans' mvt); a single-run baseline's comparisons with multi-run systems are t tests of
    run means, and B vs C is calibrated, so those families are Bonferroni: p̃ = m · p, each
    interval at α / m."""
    shift = {"A": 0.0, "B": 0.02, "C": 0.04}
    single = Settings(adjust="max-t")
    outputs = decide(_synthetic(1, dict.fromkeys(shift, 1), shift), FitLog("y"), single)
    assert {r.adjust for r in outputs.records} == {"max-t"}
    result = decide(_synthetic(1, {"A": 1, "B": 3, "C": 4}, shift), FitLog("y"), single)
    named = [r for r in result.records if r.family == FAMILY_BASELINE]
    assert {r.adjust for r in named} == {"bonferroni"}
    pairs = [r for r in result.records if r.family == FAMILY_ALL]
    assert {r.adjust for r in pairs} == {"bonferroni"} and len(pairs) == 3
    for r in pairs:
        assert r.level == pytest.approx(0.05 / 3)
        assert r.log10_p_adjusted == pytest.approx(min(0.0, r.log10_p + math.log10(3)))
        assert (r.lower > 0 or r.upper < 0) == r.directional


def test_the_default_step_down_is_holm_on_calibrated_tests_and_max_t_first_on_ms_t() -> None:
    """§4c.10: with no M's t test in the family the step-down is Holm's procedure on the same
    marginal p, verdict for verdict; on single outputs (every pair M's t) its first step is the
    single-step max-t and no adjusted p exceeds max-t's or Holm's."""
    shift = {"A": 0.0, "B": 0.02, "C": 0.04}
    data = _synthetic(1, {"A": 1, "B": 3, "C": 4}, shift)
    step = decide(data, FitLog("y"), Settings())
    holm = decide(data, FitLog("y"), Settings(adjust="holm"))
    for a, b in zip(step.records, holm.records, strict=True):
        assert a.adjust == "step-down" and b.adjust == "holm"
        assert a.log10_p_adjusted == pytest.approx(b.log10_p_adjusted, abs=1e-12)
        assert a.verdict == b.verdict
    outputs = _synthetic(1, dict.fromkeys(shift, 1), shift)
    step = decide(outputs, FitLog("y"), Settings())
    single = decide(outputs, FitLog("y"), Settings(adjust="max-t"))
    holm = decide(outputs, FitLog("y"), Settings(adjust="holm"))
    for family in (FAMILY_BASELINE, FAMILY_ALL):
        trio = [[r for r in d.records if r.family == family] for d in (step, single, holm)]
        first = min(range(len(trio[0])), key=lambda i: trio[0][i].log10_p)
        assert trio[0][first].log10_p_adjusted == pytest.approx(trio[1][first].log10_p_adjusted)
        for a, b, c in zip(*trio, strict=True):
            assert a.log10_p_adjusted <= b.log10_p_adjusted + 1e-12
            assert a.log10_p_adjusted <= c.log10_p_adjusted + 0.01  # Holm reads the unrounded df


def test_the_report_reads_the_records_back_exactly() -> None:
    result = decide(_synthetic(1, RUNS, SHIFT), FitLog("y"), Settings())
    book = book_of(result.records)
    for record in result.records:
        if record.family == FAMILY_BASELINE:
            assert book.pair("y", record.reference, record.system) == record


def test_the_tables_name_m_by_its_rule_and_the_diagnostics_spell_each_term() -> None:
    """decisions.csv's and summary.csv's ``model`` do not grow with the systems (at 62 systems
    M's spelled formula was 80 % of decisions.csv, at 200 systems 93 % of summary.csv); the
    fit's diagnostics row holds M's exact lme4 formula."""
    log = FitLog("y")
    result = decide(_synthetic(1, RUNS, SHIFT), log, Settings())
    rule = (
        "y ~ system + (1|segment_id) + "
        "<(0 + dummy(system, s)|run_id) for each system s with two or more runs>"
    )
    assert {r.model for r in result.records} == {rule}
    assert set(result.summary["model"]) == {rule}
    fits = log.diagnostics()
    spelled = list(fits.loc[(fits["subset"] == "all systems") & (fits["model"] != ""), "model"])
    assert len(spelled) == 1
    assert all(f'dummy(system, "{s}")|run_id' in spelled[0] for s in ("A", "B", "C"))
    assert 'dummy(system, "D")' not in spelled[0]  # D has one run
