"""The decision table (docs/method.md §4c) on the bundled Kreutzer et al. (2020) TER data and
on small synthetic designs: ranking, families, single-run systems, sign convention, letters."""

from __future__ import annotations

import math
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from workflow_helpers import kreutzer_ter

from infrepro.analyses import summary
from infrepro.analyses.data import MetricData
from infrepro.analyses.fitlog import FitLog
from infrepro.analyses.letters import compact_letters
from infrepro.analyses.summary import (
    OUTPUTS_BEST,
    Estimate,
    Settings,
    critical_ratio,
    critical_run_sd,
    decision_table,
)
from infrepro.io import write_csv
from infrepro.io.results import read_result_table
from infrepro.report.inputs import ReportSettings
from infrepro.report.paper import latex_table, markdown_table
from infrepro.report.sections import decision
from infrepro.report.sections.decision import sentence
from infrepro.vocabulary import columns


@pytest.fixture(scope="module")
def kreutzer() -> MetricData:
    return kreutzer_ter(with_properties=False)


@pytest.fixture(scope="module")
def kreutzer_table(kreutzer: MetricData) -> pd.DataFrame:
    return decision_table(kreutzer, FitLog(kreutzer.metric), Settings(seed=1))


def test_kreutzer_ranks_names_family_and_flags_baseline(kreutzer_table: pd.DataFrame) -> None:
    table = kreutzer_table
    assert list(table.columns) == columns("summary")
    assert list(table["system"]) == ["Marking", "PostEdit", "Baseline"]  # lower TER first
    assert list(table["rank"]) == [1, 2, 3]
    assert (np.diff(table["model_mean"]) > 0).all()
    competitors = table[table["system"] != "Baseline"]
    assert set(competitors["family"]) == {"Holm over 2, vs baseline"}
    assert set(competitors["comparison"]) == {OUTPUTS_BEST}  # Baseline has one run
    assert (competitors["improvement"] > 0).all()  # lower TER = better = positive
    # the borrowed-variance test is a sensitivity line (tests.csv's raw 0.02781 for Marking)
    marking = competitors.iloc[0]
    assert marking["sensitivity_p"] == "0.02781"
    assert "sensitivity, not a verdict" in marking["note"]
    assert "Baseline" in marking["note"]
    baseline = table[table["system"] == "Baseline"].iloc[0]
    assert baseline["note"].startswith("one run: this compares these outputs")
    assert baseline["verdict"] == "baseline"
    assert baseline["group"] != marking["group"]


def test_intervals_contain_estimates(kreutzer_table: pd.DataFrame) -> None:
    table = kreutzer_table
    assert (table["model_lower"] < table["model_mean"]).all()
    assert (table["model_mean"] < table["model_upper"]).all()
    rows = table.dropna(subset=["improvement"])
    assert (rows["improvement_lower"] < rows["improvement"]).all()
    assert (rows["improvement"] < rows["improvement_upper"]).all()
    assert (table["rank_lower"] <= table["rank_upper"]).all()


def _synthetic(sign: int, runs: dict[str, int], shift: dict[str, float]) -> MetricData:
    rng = np.random.default_rng(7)
    segments = rng.normal(0, 0.2, 30)
    rows, run_rows = [], []
    for system, n in runs.items():
        for r in range(n):
            run = f"{system}_{r}"
            run_rows.append({"run_id": run, "system": system})
            values = 0.4 + shift[system] + segments + rng.normal(0, 0.02) + rng.normal(0, 0.05, 30)
            for s, value in enumerate(values):
                rows.append({"run_id": run, "system": system, "segment_id": f"s{s}", "y": value})
    evaluation = pd.DataFrame(rows)
    evaluation["y"] *= sign
    return MetricData(
        metric="y",
        better="higher" if sign > 0 else "lower",
        baseline="A",
        evaluation=evaluation,
        runs=pd.DataFrame(run_rows),
        facets=[],
        properties=[],
    )


RUNS = {"A": 4, "B": 3, "C": 5, "D": 1}
SHIFT = {"A": 0.0, "B": 0.01, "C": 0.08, "D": -0.05}


def test_improvement_sign_follows_the_metric_direction() -> None:
    """Negating the scores and flipping the direction changes no improvement, rank or letter."""
    up = decision_table(_synthetic(1, RUNS, SHIFT), FitLog("y"), Settings())
    down = decision_table(_synthetic(-1, RUNS, SHIFT), FitLog("y"), Settings())
    assert list(up["system"]) == list(down["system"]) == ["C", "B", "A", "D"]
    np.testing.assert_allclose(up["improvement"], down["improvement"], rtol=1e-5)
    np.testing.assert_allclose(up["improvement_lower"], down["improvement_lower"], rtol=1e-5)
    assert list(up["group"]) == list(down["group"])
    c = up[up["system"] == "C"].iloc[0]
    assert c["improvement"] > 0 and c["verdict"] == "better" and c["comparison"] == "run-aware"


def test_families_and_determinism() -> None:
    data = _synthetic(1, RUNS, SHIFT)
    baseline = decision_table(data, FitLog("y"), Settings(seed=3))
    again = decision_table(data, FitLog("y"), Settings(seed=3))
    pd.testing.assert_frame_equal(baseline, again)
    pairs = decision_table(data, FitLog("y"), Settings(family="all_pairs", seed=3))
    assert set(pairs["family"].dropna()) - {""} == {"Holm over 6, all pairs"}
    assert set(baseline["family"].dropna()) - {""} == {"Holm over 3, vs baseline"}
    rows = baseline["p_adjusted"] != ""
    assert (pairs.loc[rows, "log10_p_adjusted"] >= baseline.loc[rows, "log10_p_adjusted"]).all()
    pd.testing.assert_series_equal(baseline["log10_p"], pairs["log10_p"])
    with pytest.raises(ValueError, match="analyses.comparisons"):
        Settings(family="pairs")


def test_all_single_run_systems_compare_outputs() -> None:
    table = decision_table(
        _synthetic(1, {"A": 1, "B": 1, "C": 1}, {"A": 0, "B": 0.03, "C": 0.0}),
        FitLog("y"),
        Settings(),
    )
    assert list(table["runs"]) == [1, 1, 1]
    assert set(table["comparison"]) - {""} == {"outputs"}
    assert table["note"].str.startswith("one run").all()
    assert table["model"].iloc[0] == "y ~ system + (1|segment_id)"
    # the report says the shared one-run note once, not once per system
    notes = decision._notes(table)
    assert len(notes) == 1 and notes[0].startswith("Every system: one run")
    mixed = decision_table(_synthetic(1, RUNS, SHIFT), FitLog("y"), Settings())
    assert decision._notes(mixed) == ["D: " + mixed.loc[mixed["system"] == "D", "note"].iloc[0]]


def test_critical_run_sd_is_where_significance_ends() -> None:
    """At the returned threshold the t statistic equals the critical value."""
    delta = Estimate(0.02, 0.006, 12.0)
    run_var = 0.0001
    ratio = critical_ratio(delta, run_var, 0.05)
    sd = critical_run_sd(delta, run_var, 0.05)
    assert sd**2 == pytest.approx(ratio * run_var)
    variance = delta.se**2 + (ratio - 1.0) * run_var
    t = delta.estimate / math.sqrt(variance)
    assert t == pytest.approx(stats.t.ppf(0.975, 12.0))
    assert math.isnan(critical_ratio(Estimate(0.001, 0.006, 12.0), run_var, 0.05))
    assert math.isinf(critical_ratio(delta, 0.0, 0.05))


def test_letters_chain_and_separated_pairs() -> None:
    # means a < b < c < d; a-c, a-d and b-d separated: groups {a, b}, {b, c}, {c, d}
    letters = compact_letters(
        ["d", "c", "b", "a"], ["a", "b", "c", "d"], [("a", "c"), ("a", "d"), ("b", "d")]
    )
    assert letters == {"d": "a", "c": "ab", "b": "bc", "a": "c"}
    assert compact_letters(["x", "y"], ["y", "x"], []) == {"x": "a", "y": "a"}
    assert compact_letters(["x", "y"], ["y", "x"], [("x", "y")]) == {"x": "a", "y": "b"}


def _pdflatex() -> str:
    """pdflatex's path; skip without it, unless in CI (.ci/run installs it) where it must run."""
    found = shutil.which("pdflatex")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("pdflatex is not installed, but the LaTeX test must run in CI")
        pytest.skip("pdflatex is not installed: apt-get install texlive-latex-recommended")
    return found


def test_latex_table_compiles_and_fits_the_page(
    kreutzer_table: pd.DataFrame, tmp_path: Path
) -> None:
    """The paste-ready table compiles with booktabs and fits a 5.5 in text width (NeurIPS,
    ICLR) without overfull boxes; the PDF page is rendered to PNG with pdftoppm where it is
    installed (the page was looked at when the test was written)."""
    table = kreutzer_table.assign(metric="TER")
    tex = latex_table(table, metric="TER", better="lower", alpha=0.05)
    assert "\\toprule" in tex and "\\textbf{" in tex and "\\ddag{}" in tex
    assert "Kenward-Roger" in tex and "Holm over 2" in tex and "$\\alpha$ = 0.05" in tex
    document = (
        "\\documentclass{article}\n\\usepackage{booktabs}\n\\setlength{\\textwidth}{5.5in}\n"
        "\\begin{document}\n" + tex + "\\end{document}\n"
    )
    (tmp_path / "table.tex").write_text(document)
    run = subprocess.run(
        [_pdflatex(), "-interaction=nonstopmode", "-halt-on-error", "table.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    log = (tmp_path / "table.log").read_text(errors="replace")
    assert run.returncode == 0, log[-3000:]
    assert "Overfull \\hbox" not in log, log[-3000:]
    if shutil.which("pdftoppm"):
        subprocess.run(
            ["pdftoppm", "-png", "-r", "60", "-f", "1", "-l", "1", "table.pdf", "page"],
            cwd=tmp_path,
            check=True,
            timeout=60,
        )
        assert list(tmp_path.glob("page*.png"))


def test_markdown_table(kreutzer_table: pd.DataFrame) -> None:
    md = markdown_table(kreutzer_table, metric="TER", better="lower", alpha=0.05)
    lines = md.splitlines()
    assert (
        lines[0].startswith("| Rank (95 %) | System |")
        and "p (Holm over 2, vs baseline)" in lines[0]
    )
    assert lines[2].startswith("| 1 (1–2) | Marking | 3 | **")
    assert "(baseline)" in lines[4]
    assert "Kenward-Roger" in md and "α = 0.05" in md


@pytest.mark.parametrize("t, df", [(3.0, 10.0), (30.0, 1000.0), (8.0, 3.0), (50.0, 5.0)])
def test_t_p_series_equals_scipy_where_scipy_is_finite(monkeypatch, t: float, df: float) -> None:
    """The underflow-free tail (the incomplete-beta series) agrees with scipy; p never 0."""
    exact = (stats.t.logsf(t, df) + math.log(2.0)) / math.log(10.0)
    monkeypatch.setattr(summary.stats.t, "logsf", lambda *args: -math.inf)
    assert summary._t_log10_p(Estimate(t, 1.0, df)) == pytest.approx(exact, rel=1e-12)


def test_t_p_is_finite_far_below_the_float_range() -> None:
    value = summary._t_log10_p(Estimate(100.0, 1.0, 1000.0))
    assert math.isfinite(value) and value < -500


def test_sentences_name_model_df_and_family() -> None:
    table = decision_table(_synthetic(1, RUNS, SHIFT), FitLog("y"), Settings())
    rows = list(table.astype(object).itertuples(index=False))
    c = next(r for r in rows if r.system == "C")
    text = sentence(c, "Y", "A")
    assert text.startswith("C better than A by ")
    assert "run-aware model (REML, Kenward-Roger df), t(" in text
    assert "(Holm over 3, vs baseline)" in text
    d = next(r for r in rows if r.system == "D")  # one run against four
    assert sentence(d, "Y", "A").startswith("D's outputs ")
    assert "how it varies with retraining is unknown" in sentence(d, "Y", "A")


def test_report_section_from_the_csv(tmp_path: Path) -> None:
    """summary.csv, written and read back as the report reads it, gives the section: the
    table best first, the p header naming the family, the forest plot, sentences and LaTeX."""
    table = decision_table(_synthetic(1, RUNS, SHIFT), FitLog("y"), Settings())
    write_csv(table, tmp_path / "summary.csv")
    tables = {"summary": read_result_table("summary", tmp_path / "summary.csv")}
    settings = ReportSettings(
        name="toy", baseline="A", systems=list("ABCD"), metrics=["y"], better={"y": "higher"}
    )
    (section,) = decision.build(tables, settings)
    assert [row[1].text for row in section.table.rows] == ["C", "B", "A", "D"]
    assert "p (Holm over 3, vs baseline)" in [c.label for c in section.table.headers]
    assert len(section.forest) == 1 and "<svg" in section.forest[0].svg
    assert len(section.sentences) == 3
    assert section.latex.startswith("% Engine: pdflatex") and "\\begin{table*}" in section.latex


def test_best_run_orders_confirmed_by_the_model() -> None:
    table = decision_table(_synthetic(1, RUNS, SHIFT), FitLog("y"), Settings())
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
    table = decision_table(data, FitLog("ter"), Settings())
    competitor = table[table["system"] == "competitor"].iloc[0]
    assert competitor["p_value"] == "0.02228"
    assert competitor["improvement"] == pytest.approx(-0.038447, abs=1e-6)  # TER 3.84 worse
    assert float(competitor["facet_aware_p"]) == pytest.approx(0.46, abs=0.005)
    assert competitor["verdict"] == "worse"  # the per-system reading decides (§4b.6)
    row = next(r for r in table.astype(object).itertuples(index=False) if r.system == "competitor")
    text = sentence(row, "TER", "baseline")
    assert text.startswith(
        "competitor worse than baseline for these meta-parameter settings by 3.84"
    )
    # the size's CI has the size's sign: worse by 3.84 [0.6, 7.1], not [-7.1, -0.6]
    interval = text.split(" TER points [", 1)[1].split("]", 1)[0]
    low, high = (float(v.replace("\u2212", "-")) for v in interval.split(", "))
    assert 0 < low < 3.84 < high
    assert "treating the shared facets' levels as draws: p = 0.4622" in text


def test_too_few_runs_name_no_winner_separate_no_group_and_confirm_no_order() -> None:
    """10 vs 2 runs cannot hold the level (§4b.6, run counts): a clear difference is 'not
    judged' with the runs that would settle it; with 10 vs 4 the same difference is claimed."""
    shift = {"A": 0.0, "B": 0.6}
    few = decision_table(_synthetic(1, {"A": 10, "B": 2}, shift), FitLog("y"), Settings())
    b = few[few["system"] == "B"].iloc[0]
    assert b["log10_p_adjusted"] < math.log10(0.05)
    assert b["verdict"] == summary.NOT_JUDGED
    assert "not judged: with 10 runs of A and 2 of B" in b["note"]
    assert "4 runs of B would hold it" in b["note"]
    assert set(few["group"]) == {"a"} and few["best_run_wins_confirmed"].sum() == 0
    assert "not judged (too few runs)" in sentence(b, "Y", "A")
    enough = decision_table(_synthetic(1, {"A": 10, "B": 4}, shift), FitLog("y"), Settings())
    b = enough[enough["system"] == "B"].iloc[0]
    assert b["verdict"] == "better" and b["note"] == ""
    assert set(enough["group"]) == {"a", "b"}
