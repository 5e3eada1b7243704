"""The page rendered from small hand-made tables: headline verdict, links, no network, and a
page that still renders when an experiment's analyses wrote nothing."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from decision_records import COMP_BETTER, NO_FACET_AWARE, record
from markupsafe import escape

from infrepro.core.vocabulary import columns
from infrepro.plumbing.atomic import write_csv
from infrepro.report import (
    REPORT_TABLES,
    ReportSettings,
    build_context,
    render,
    render_report,
    table_paths,
)
from infrepro.report.assets import TEMPLATE_DIR
from infrepro.report.context import SECTIONS
from infrepro.report.decisions import sentence

TEMPLATES = TEMPLATE_DIR  # package data
SUBSET = "bl vs comp"


def settings(**changes) -> ReportSettings:
    base = {
        "name": "Toy <experiment>",
        "baseline": "bl",
        "systems": ["bl", "comp"],
        "metrics": ["ter"],
        "better": {"ter": "lower"},
        "config": {"experiment": "toy"},
    }
    return ReportSettings(**{**base, **changes})


RUN_AWARE = {  # analysis: p text, log10 p, dendf, note of the run-aware t tests
    "all_runs_per_system": ("0.0223", -1.652, 18.87, "run variance per system"),
    "all_runs_facet_aware": (
        "0.46",
        -0.337,
        2.37,
        "facet levels as draws from their population (comp: lambda)",
    ),
}


def comparison_tables(headline: tuple[str, float] = ("0.0223", -1.652)) -> dict[str, pd.DataFrame]:
    """Best vs best: competitor better (TER 0.40 vs 0.45); all runs: baseline better, the paper's
    GLRT at p = 2.5e-40, the run-aware test (the verdict) at ``headline``."""
    tables = {name: pd.DataFrame() for name in REPORT_TABLES}
    run_aware = {
        **RUN_AWARE,
        "all_runs_per_system": (*headline, *RUN_AWARE["all_runs_per_system"][2:]),
    }
    rows = [
        # analysis, baseline mean, competitor mean, p text, log10 p
        ("best_vs_best", 0.45, 0.40, "3.1e-06", -5.509),
        ("all_runs", 0.46, 0.50, "2.5e-40", -39.6),
        ("all_runs_run_aware", 0.46, 0.50, "0.21", -0.678),
        *((a, 0.46, 0.50, p, lg) for a, (p, lg, _, _) in run_aware.items()),
    ]
    tables["contrasts"] = pd.DataFrame(
        [
            {
                "metric": "ter",
                "analysis": a,
                "subset": SUBSET,
                "property": "",
                "bin": "",
                "level1": "bl",
                "level2": "comp",
                "estimate": b - c,
                "se": 0.01,
                "p_value": p,
                "p_holm": p,
                "log10_p": lg,
                "log10_p_holm": lg,
                "p_method": "GLRT" if a not in run_aware else "t (Kenward-Roger)",
                "df": run_aware[a][2] if a in run_aware else float("nan"),
                "effect_size": (b - c) / 0.1,
                "effect_sd": 0.1,
                "effect_label": "small",
            }
            for a, b, c, p, lg in rows
        ]
    )
    tables["tests"] = pd.DataFrame(
        [
            {
                "metric": "ter",
                "analysis": a,
                "subset": SUBSET,
                "property": "",
                "facet": "",
                "hypothesis": "bl - comp = 0",
                "model": 'ter ~ system + (1|segment_id) + (0 + dummy(system, "bl")|run_id)',
                "method": "Kenward-Roger",
                "estimate": -0.04,
                "se": 0.015,
                "statistic": -2.5,
                "numdf": 1,
                "dendf": df,
                "n_obs": 200,
                "n_segments": 100,
                "n_runs": 24,
                "p_value": p,
                "p_holm": p,
                "log10_p": lg,
                "log10_p_holm": lg,
                "note": note,
            }
            for a, (p, lg, df, note) in run_aware.items()
        ]
    )
    tables["means"] = pd.DataFrame(
        [
            {
                "metric": "ter",
                "analysis": a,
                "subset": SUBSET,
                "property": "",
                "bin": "",
                "group": g,
                "kind": "model",
                "x": float("nan"),
                "estimate": m,
                "se": 0.01,
                "n_obs": 100,
            }
            for a, b, c, _, _ in rows
            for g, m in (("bl", b), ("comp", c))
        ]
    )
    tables["glrt"] = pd.DataFrame(
        [
            {
                "metric": "ter",
                "analysis": a,
                "property": "",
                "subset": SUBSET,
                "facet": "",
                "h1": "ter ~ system + (1|segment_id)",
                "h0": "ter ~ 1 + (1|segment_id)",
                "n_obs": 200,
                "n_segments": 100,
                "n_runs": 2,
                "loglik_h1": 1.0,
                "loglik_h0": 0.0,
                "lr_stat": 2.0,
                "df": 1,
                "p_value": p,
                "p_holm": p,
                "log10_p": lg,
                "log10_p_holm": lg,
                "note": "best run per system by dev_score",
            }
            for a, _, _, p, lg in rows
            if a not in run_aware
        ]
    )
    for name, frame in tables.items():
        for column in ("p_value", "p_holm"):
            if column in frame:
                frame[column] = frame[column].astype(str)
        tables[name] = frame
    return tables


def with_record(tables: dict[str, pd.DataFrame], **changes) -> dict[str, pd.DataFrame]:
    """The tables with one decision record of bl vs comp (and its summary rows)."""
    one = record(**changes)
    out = dict(tables)
    out["decisions"] = pd.DataFrame([one.row()], columns=columns("decisions"))
    return out


def headline_of(html: str) -> str:
    return html.split('<section id="headline">')[1].split("</section>")[0]


def test_headline_renders_the_record_with_the_tests_beside_it() -> None:
    html = render(build_context(with_record(comparison_tables()), settings()), TEMPLATES)
    headline = headline_of(html)
    said = sentence(record(), "TER")
    assert str(escape(said)) in headline  # the record's sentence, as in the table
    assert ">bl better<" in headline  # the badge: the record's verdict
    assert "comp worse than bl by 4.00 [0.86, 7.14] TER points (simultaneous 95 % CI)" in said
    assert (
        "Best vs best (dev-selected runs): comp&#39;s best run ahead by 5.00 TER points; over "
        "retraining the order is reversed"
    ) in headline
    assert (
        "Generalising to other levels of the shared facets: not judged (comp&#39;s runs share "
        "levels of lambda; facet-aware model, df 2.4, p = 0.46)"
    ) in headline
    assert "paper&#39;s model, conditional on these trained runs (ML GLRT)" in headline
    assert "p = 2.5e-40; this test rejects identical systems in 41-54 %" in headline
    assert "<strong>2.5e-40" not in headline and "p-sig" not in headline  # no bold p beside it
    assert "d = improvement / the SD of a run&#39;s mean score" in headline
    assert "Δ = " not in headline and "baseline − competitor" not in headline
    for text in ("+5.00", "\u22124.00 [\u22127.14, \u22120.86]", "\u22120.40", "+0.50"):
        assert f">{text}<" in headline, text
    assert "Toy &lt;experiment&gt;" in html  # names are escaped


def test_a_model_that_did_not_converge_gives_no_verdict() -> None:
    tables = with_record(comparison_tables(), verdict="not converged", survival="")
    headline = headline_of(render(build_context(tables, settings()), TEMPLATES))
    assert ">not converged<" in headline and "did not converge" in headline
    assert "bl better" not in headline and "surviv" not in headline


def test_the_verdict_is_the_records_not_the_paper_glrt() -> None:
    # paper's GLRT: p = 2.5e-40 (baseline better); the record: not significant
    tables = with_record(
        comparison_tables(),
        verdict="no difference shown",
        p_adjusted="0.21",
        log10_p_adjusted=-0.678,
        survival="not shown to survive",
        lower=-0.09,
        upper=0.01,
    )
    headline = headline_of(render(build_context(tables, settings()), TEMPLATES))
    assert ">no difference shown<" in headline and "bl better" not in headline
    assert "No difference shown between comp and bl" in headline
    assert "over retraining no difference is shown" in headline


def test_a_single_output_is_named_in_the_badge_and_the_sentence() -> None:
    tables = with_record(
        comparison_tables(),
        runs_reference=1,
        **COMP_BETTER,
        survival="",
        **NO_FACET_AWARE,
    )
    headline = headline_of(render(build_context(tables, settings()), TEMPLATES))
    assert ">comp better (vs bl&#39;s single output)<" in headline
    assert "comp better than bl&#39;s single output by 4.00" in headline
    assert "could not be fitted" not in headline and "not tested" not in headline


def test_page_is_offline_and_links_only_to_tables() -> None:
    html = render(build_context(comparison_tables(), settings()), TEMPLATES)
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    assert not re.search(r"<(script|link|img|iframe)[^>]+(src|href)=", html)
    links = set(re.findall(r'href="([^"#][^"]*)"', html))
    assert links and all(re.fullmatch(r"tables/[a-z_]+\.csv", link) for link in links)


def test_custom_links_and_date_are_used() -> None:
    html = render(
        build_context(
            with_record(comparison_tables()),
            settings(links={"decisions": "../t/decisions.csv"}, date="2024-05-01"),
        ),
        TEMPLATES,
    )
    assert 'href="../t/decisions.csv"' in html
    assert "date: 2024-05-01" in html


def test_an_experiment_without_tables_still_renders() -> None:
    tables = {name: pd.DataFrame() for name in REPORT_TABLES}
    html = render(build_context(tables, settings(properties=["length"])), TEMPLATES)
    assert "date: not set" in html
    assert "Not computed for this experiment." in html
    assert html.count("<section") == len(SECTIONS) == 11  # with "Next experiment"


@pytest.mark.parametrize("changes, badge", [({}, ">bl better<"), (COMP_BETTER, ">comp better<")])
def test_the_badge_names_the_records_winner(changes: dict[str, object], badge: str) -> None:
    tables = with_record(comparison_tables(), **changes)  # the base record: comp worse
    assert badge in headline_of(render(build_context(tables, settings()), TEMPLATES))


def figure_tables() -> dict[str, pd.DataFrame]:
    """The comparison tables plus enough for a few figures: run means, variance components,
    a D-study and one property's predictions."""
    tables = comparison_tables()
    runs = [("bl", f"bl_s{i}", 0.45 + 0.01 * i, "", str(i)) for i in range(3)]
    runs += [
        ("comp", f"comp_l{lam}_s{i}", 0.40 + 0.05 * k + 0.01 * i, str(lam), str(i))
        for k, lam in enumerate((0.1, 0.5))
        for i in range(3)
    ]
    tables["run_means"] = pd.DataFrame(
        [
            {
                "metric": "ter",
                "run_id": r,
                "system": s,
                "lambda": lam,
                "seed": seed,
                "mean": m,
                "n_segments": 100,
                "is_best": r in ("bl_s0", "comp_l0.1_s0"),
            }
            for s, r, m, lam, seed in runs
        ]
    )
    tables["importance"] = pd.DataFrame(
        [
            {
                "metric": "ter",
                "system": "comp",
                "facet": "lambda",
                "variance": 0.004,
                "percent": 20.0,
                "rank": 1,
                "dominant": True,
            }
        ]
    )
    tables["variance_components"] = pd.DataFrame(
        [
            {
                "metric": "ter",
                "system": s,
                "vca": "run-aware",
                "component": c,
                "variance": v,
                "percent": p,
                "n_levels": n,
            }
            for s, c, v, p, n in [
                ("bl", "segment_id", 0.02, 80.0, 100),
                ("bl", "seed", 1e-4, 0.4, 3),
                ("bl", "Residual", 0.0049, 19.6, 300),
                ("comp", "segment_id", 0.02, 70.0, 100),
                ("comp", "lambda", 0.004, 14.0, 2),
                ("comp", "Residual", 0.0046, 16.0, 600),
            ]
        ]
    )
    tables["dstudy"] = pd.DataFrame(
        [
            {
                "metric": "ter",
                "system": s,
                "n_per_facet": n,
                "runs_averaged": n,
                "phi": phi / (phi + (1 - phi) / n),
            }
            for s, phi in (("bl", 0.8), ("comp", 0.7))
            for n in range(1, 6)
        ]
    )
    x = [5.0 + 2.5 * i for i in range(5)]
    tables["predictions"] = pd.DataFrame(
        [
            {
                "metric": "ter",
                "analysis": "conditional",
                "subset": "all runs",
                "property": "length",
                "group": g,
                "x": v,
                "estimate": b + 0.002 * v,
                "se": 0.01,
                "lower": b + 0.002 * v - 0.02,
                "upper": b + 0.002 * v + 0.02,
            }
            for g, b in (("bl", 0.45), ("comp", 0.48))
            for v in x
        ]
    )
    observed = pd.DataFrame(
        [
            {
                "metric": "ter",
                "analysis": "conditional",
                "subset": "all runs",
                "property": "length",
                "bin": b,
                "group": g,
                "kind": "observed",
                "x": v,
                "estimate": 0.46 + 0.002 * v,
                "se": 0.005,
                "n_obs": 50,
            }
            for g in ("bl", "comp")
            for b, v in (("low", 6.0), ("high", 14.0))
        ]
    )
    tables["means"] = pd.concat([tables["means"], observed], ignore_index=True)
    tables["property_bins"] = pd.DataFrame(
        {
            "computed_on": "source",
            "property": "length",
            "bin": ["low", "high"],
            "lower": [float("-inf"), 10.0],
            "upper": [10.0, float("inf")],
        }
    )
    return tables


RENDER_FROM_CSV = """
import sys
from infrepro.report import ReportSettings, render_report, table_paths
settings = ReportSettings(name="Toy", baseline="bl", systems=["bl", "comp"], metrics=["ter"],
                          better={"ter": "lower"}, properties=["length"], facets=["lambda", "seed"])
sys.stdout.write(render_report(table_paths(sys.argv[1]), settings, sys.argv[2]))
"""


# the settings of a render of figure_tables() (RENDER_FROM_CSV writes the same in a subprocess)
FIGURE_SETTINGS = settings(name="Toy", config={}, properties=["length"], facets=["lambda", "seed"])


def test_page_is_byte_identical_across_renders_and_processes(tmp_path: Path) -> None:
    for name, frame in figure_tables().items():
        if not frame.empty:
            write_csv(frame, tmp_path / f"{name}.csv")
    first = render_report(table_paths(tmp_path), FIGURE_SETTINGS, TEMPLATES)
    assert first.count('class="plot"') == 4  # distribution, interaction, bars, D-study
    assert render_report(table_paths(tmp_path), FIGURE_SETTINGS, TEMPLATES) == first
    other = subprocess.run(
        [sys.executable, "-c", RENDER_FROM_CSV, str(tmp_path), str(TEMPLATES)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert other.stdout == first


def test_best_vs_best_selected_by_test_mean_is_no_evidence() -> None:
    """No dev scores: best vs best selected on the test set is no evidence of an improvement,
    so no survival is stated (docs/method.md §4b.6)."""
    tables = with_record(comparison_tables(), survival="")
    headline = headline_of(render(build_context(tables, settings()), TEMPLATES))
    assert "surviv" not in headline and "reversed" not in headline
    assert "selected by their test score (no dev scores)" in headline


def test_the_bootstrap_lrt_is_shown_beside_the_verdict() -> None:
    tables = with_record(comparison_tables())
    row = (
        tables["tests"]
        .iloc[[0]]
        .assign(
            analysis="all_runs_per_system_bootstrap",
            method="parametric bootstrap (97 of 100 samples; 3 refits failed)",
            p_value="0.0309",
        )
    )
    tables["tests"] = pd.concat([tables["tests"], row], ignore_index=True)
    headline = headline_of(render(build_context(tables, settings()), TEMPLATES))
    assert "Parametric-bootstrap LRT of the same comparison" in headline
    assert "3 refits failed" in headline and "p = 0.0309" in headline


def test_the_card_states_the_test_and_the_run_sd_ratio_beside_the_verdict() -> None:
    """A calibrated test (§4b.11): the sentence names it; a run-SD ratio whose interval lies
    outside the band is said in the card's notes."""
    note = "the run-mean SD ratio 7.06 (95 % CI 2.8-13.1) lies outside the band the test assumes"
    tables = with_record(
        comparison_tables(),
        test="Welch t, calibrated over run-mean SD ratio ≤ 2",
        run_sd_ratio=7.06,
        run_sd_ratio_lower=2.8,
        run_sd_ratio_upper=13.1,
        note=note,
    )
    headline = headline_of(render(build_context(tables, settings()), TEMPLATES))
    assert "Welch t, calibrated over run-mean SD ratio ≤ 2" in headline
    assert note in headline
