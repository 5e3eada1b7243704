"""Methods appendix: both model families (run-aware and the paper's) in lme4 notation, taken
from :mod:`infrepro.analyses.models`, with their estimands; df methods, Holm families and the
effect-size denominator; software versions, the configuration, input checksums, how to rerun."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pandas as pd
import yaml

from infrepro.core.vocabulary import (
    DEV_SCORE,
    EFFECT_SD_TEXT,
    HYPOTHESES,
    OUTPUTS_TABLE,
    REMOVED,
    RUN,
    RUNS_TABLE,
    SEGMENT_TERM,
    SYSTEM,
    comparison_formulas,
    decision_formula,
    effect_scale_formula,
    facet_aware_formula,
    headline_formula,
    property_formulas,
    run_terms,
    runaware_property_formula,
)
from infrepro.report.formatting import integer, significant
from infrepro.report.htmltable import Column, Table, frame_table, text
from infrepro.report.inputs import ReportSettings
from infrepro.report.labels import analysis_label, property_label
from infrepro.report.verdict import PAPER_GLRT_LEVEL

SCORE, TWO = "score", ["A", "B"]  # generic names: any metric, systems A and B
PAPER_ESTIMAND = (
    "Estimand: these trained runs only. Runs are fixed, so the test is conditional on them and "
    "says nothing about runs trained again."
)
RUN_ESTIMAND = (
    "Estimand: the systems' mean scores over runs as exchangeable draws of training "
    "configurations (trained again with the same recipe), each system with its own run variance."
)
FACET_ESTIMAND = (
    "Estimand: the systems' mean scores with the levels of the facets their runs share as draws "
    "from their population; with few levels the test has few df."
)


@dataclass(frozen=True)
class Family:
    """A model family: name, H1 and H0 (or the test) in lme4 notation, the fit criterion,
    a plain reading and its estimand."""

    name: str
    h1: str
    h0: str
    fit: str
    reading: str
    estimand: str = ""

    @property
    def h0_label(self) -> str:
        """``H0`` for a null model, ``test`` for a test of a contrast of the one fit."""
        return "H0" if "~" in self.h0 else "test"


LEVELS = ("l1", "l2")  # two levels of a facet f, for the displayed metaparam formula


def families() -> list[Family]:
    """Every model family, with formulas from :mod:`infrepro.analyses.models`."""
    return [*_run_aware_families(), *_paper_families(), *_descriptive_families()]


def _run_aware_families() -> list[Family]:
    """The run-aware families: the verdict, its facet-aware sensitivity, the property and
    meta-parameter F tests."""
    per_system = run_terms(TWO, pooled=False)
    t_test = "t test of the system contrast, Kenward-Roger (or Satterthwaite) df"
    f_test = (
        "F tests of {0} + {0}:d (joint) and of {0}:d (interaction), Kenward-Roger "
        "(or Satterthwaite) df"
    )
    return [
        Family(
            "decision model M: every verdict",
            decision_formula(SCORE, TWO),
            "t tests of the system contrasts, Kenward-Roger (or Satterthwaite) df, adjusted over "
            "the family (analyses.comparisons, analyses.adjust)",
            "REML",
            "One fit of all systems; each system with two or more runs has its own run "
            "variance, a system with one run none (its model mean is its output's mean). Each "
            "pair's contrast is about the systems over retraining, a system against a single "
            "output, or two outputs, as the runs allow (docs/method.md §4c.4); the decision "
            "tables, headline cards, sentences and paste-ready tables all render these records "
            "(decisions.csv).",
            RUN_ESTIMAND,
        ),
        Family(
            "all runs, run-aware (pairwise fits)",
            headline_formula(SCORE, TWO, pooled=False),
            t_test,
            "REML",
            "Model M on one pair's rows (tests.csv): the same comparison fitted apart, for the "
            "Significance tables. A system with a single run has no run variance: the pair then "
            f"fits {headline_formula(SCORE, TWO, pooled=True)}, i.e. borrows the other system's "
            "run variance; never a verdict.",
            RUN_ESTIMAND,
        ),
        Family(
            "all runs, facet-aware: sensitivity",
            facet_aware_formula(SCORE, TWO, {"B": ["f"]}),
            t_test,
            "REML",
            "The pair's run-aware model plus a per-system random intercept of every facet f (and "
            "crossing of two) whose levels a system's runs share: the second reading a general "
            "claim needs (docs/method.md §4c.5), never a downgrade of the verdict.",
            FACET_ESTIMAND,
        ),
        Family(
            "conditional, run-aware",
            runaware_property_formula(SCORE, SYSTEM, "d", True, per_system),
            f_test.format(SYSTEM),
            "REML",
            "Does the system difference change with the data property d, beyond the runs' own "
            "slopes on d? For a categorical (binned) d: "
            + runaware_property_formula(SCORE, SYSTEM, "d", False, per_system)
            + ". Slopes, within-bin differences and prediction bands use t with small-sample df.",
            RUN_ESTIMAND,
        ),
        Family(
            "meta-parameter, run-aware",
            runaware_property_formula(SCORE, "f", "d", True, run_terms(LEVELS, False, "f")),
            f_test.format("f"),
            "REML",
            "Within one system: does the effect of a meta-parameter f change with d? Tested: the "
            "facets named in analyses.metaparam_facets, else every facet of the system, with "
            "Holm over its facets x properties (never the facet that happens to have the largest "
            "variance share). Each level of f (here l1, l2) has its own run variance.",
            "Estimand: the effect of f's levels over the system's runs as exchangeable draws of "
            "training, each run with its own slope on d.",
        ),
    ]


def _paper_families() -> list[Family]:
    """The paper's families: ML fits compared by GLRTs, runs fixed."""
    paper_h1, paper_h0 = comparison_formulas(SCORE, run_aware=False)
    shared_h1, shared_h0 = comparison_formulas(SCORE, run_aware=True)
    prop = property_formulas(SCORE, SYSTEM, "d")
    meta = property_formulas(SCORE, "f", "d")
    return [
        Family(
            "best vs best (starting point)",
            paper_h1,
            paper_h0,
            "ML, GLRT",
            "Do the systems' best runs differ, with each test segment's difficulty as a random "
            "intercept? (training reproducibility; paper eq. 3-4)",
            "Estimand: the two selected runs only.",
        ),
        Family(
            "all runs, paper's model",
            paper_h1,
            paper_h0,
            "ML, GLRT",
            "The same question with every run of every system (inferential reproducibility as "
            f"the paper tests it). Read as a verdict, this test {PAPER_GLRT_LEVEL}.",
            PAPER_ESTIMAND,
        ),
        Family(
            "all runs, paper's model + shared run intercept",
            shared_h1,
            shared_h0,
            "ML, GLRT",
            "One run variance shared by all systems, chi-square reference (liberal with few runs).",
            "Estimand: as the run-aware model's, assuming equal run variances.",
        ),
        Family(
            "conditional, paper's model",
            prop["h1"],
            f"{prop['h0_joint']} (joint) · {prop['h0_interaction']} (interaction)",
            "ML, GLRT",
            "Does the system matter once d is accounted for, and does the difference change "
            "with d? (paper eq. 6-7, thesis ch. 2)",
            PAPER_ESTIMAND,
        ),
        Family(
            "meta-parameter, paper's model",
            meta["h1"],
            f"{meta['h0_joint']} (joint) · {meta['h0_interaction']} (interaction)",
            "ML, GLRT",
            "Within one system: does the effect of f change with d? (paper Fig. 2)",
            PAPER_ESTIMAND,
        ),
    ]


def _descriptive_families() -> list[Family]:
    """The fits behind effect sizes and variance shares (no test)."""
    return [
        Family(
            "effect-size scale",
            effect_scale_formula(SCORE),
            "",
            "REML",
            f"Every effect size of a metric is d = difference / {EFFECT_SD_TEXT} of this fit, "
            "whatever model gave the difference: the SD that decides the run-aware tests (NA "
            "when every system has a single run).",
        ),
        Family(
            "variance components",
            f"score ~ 1 + {SEGMENT_TERM} + (1|f1) + (1|f2) + …",
            "",
            "REML",
            "How much of a system's score variance comes from the test segments, from each "
            "meta-parameter and from the residual? φ is the segments' share (paper §4).",
        ),
    ]


NOTES = (
    (
        "Degrees of freedom",
        "Run-aware t and F tests use Kenward-Roger's denominator df and scaled statistic at "
        "every size (computed exactly from the model's cross-products, in time linear in the "
        "number of segments), Satterthwaite's df only where Kenward-Roger is not available; the "
        "method column of tests.csv and slopes.csv (p_method in contrasts.csv) names the one "
        "each row used.",
    ),
    (
        "Multiplicity",
        "Decisions (decisions.csv): adjusted over the family named in each table's p header, "
        "as analyses.adjust says: by the step-down (docs/method.md §4c.10; the default: "
        "Holm's steps with the model's joint t law where pairs are its t tests; each interval "
        "at the level of the step that decided it, so it excludes 0 exactly when the adjusted "
        "p is below α), the single-step max-t procedure (simultaneous intervals, the same "
        "equivalence) or Holm's step-down (unadjusted intervals); group letters over all "
        "pairs. Pairwise GLRTs and run-aware fits of the Significance section: Holm within "
        "each metric and analysis when there are more than two systems. Property tests: Holm "
        "over each metric's numeric and categorical properties, per analysis and subset (the "
        "run-aware F tests and the paper's GLRTs each form their own family); binned versions "
        "test the same hypothesis again and are descriptive, unadjusted. Within-bin "
        "differences (the decision family's pairs, or all with analyses.conditional_pairs: "
        "all_pairs): Holm within a metric, analysis, subset and property.",
    ),
    (
        "Effect sizes",
        f"Points (×100) and d = difference / {EFFECT_SD_TEXT} of "
        f"{effect_scale_formula(SCORE)} (REML): one denominator per metric, the SD that "
        "decides the run-aware tests, so the same difference reads the same d in every table "
        "and Cohen's labels (0.2 small, 0.5 medium, 0.8 large) are in units of retraining "
        "noise.",
    ),
)


@dataclass
class Methods:
    families: list[Family]
    notes: tuple[tuple[str, str], ...] = NOTES
    models: Table | None = None
    software: Table | None = None
    inputs: Table | None = None
    runs: Table | None = None  # runs.csv: the runs a runs pattern found
    runs_pattern: str = ""  # that pattern
    removed: list[str] = field(default_factory=list)  # outputs.csv: files an earlier config made
    config: str = ""
    rerun: list[str] = field(default_factory=list)


def generic(formula: str) -> str:
    """A model with its metric name replaced by ``score``."""
    return re.sub(r"^\s*\S+\s*~", "score ~", formula)


def fitted_models(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Every distinct fitted model (metric replaced by ``score``), with the analysis it serves."""
    diagnostics = tables["diagnostics"]
    if diagnostics.empty:
        return diagnostics
    fitted = diagnostics[diagnostics["status"] == "fitted"].copy()
    fitted["formula"] = fitted["model"].map(generic)
    fitted["criterion"] = fitted["reml"].map(lambda r: "REML" if r is True else "ML")
    fitted["where"] = [
        " · ".join(part for part in (analysis_label(a), s, property_label(p) if p else "") if part)
        for a, s, p in zip(fitted["analysis"], fitted["subset"], fitted["property"], strict=True)
    ]
    grouped = (
        fitted.groupby(["formula", "criterion", "where"], sort=False)
        .agg(metrics=("metric", lambda m: ", ".join(dict.fromkeys(m))), fits=("metric", "size"))
        .reset_index()
    )
    return grouped


def build(tables: dict[str, pd.DataFrame], settings: ReportSettings) -> Methods:
    section = Methods(families())
    models = fitted_models(tables)
    if not models.empty:
        section.models = frame_table(
            models,
            [
                Column("formula", "model (lme4)", text, numeric=False, cls="code"),
                Column("criterion", "fit", text, numeric=False),
                Column("where", "used in", text, numeric=False),
                Column("metrics", "metrics", text, numeric=False),
                Column("fits", "fits", integer),
            ],
            csv=settings.link("diagnostics"),
        )
    if not tables["software"].empty:
        section.software = frame_table(
            tables["software"],
            [
                Column("package", "package", text, numeric=False),
                Column("version", "version", text, numeric=False),
            ],
            csv=settings.link("software"),
        )
    if not tables["inputs"].empty:
        section.inputs = frame_table(
            tables["inputs"],
            [
                Column("path", "input file", text, numeric=False),
                Column("bytes", "bytes", integer),
                Column("sha256", "SHA-256", text, numeric=False),
            ],
            csv=settings.link("inputs"),
        )
    runs = tables.get(RUNS_TABLE, pd.DataFrame())
    if not runs.empty:
        section.runs_pattern = str(settings.config.get("runs", ""))
        section.runs = _runs_table(runs, settings)
    outputs = tables[OUTPUTS_TABLE]
    if not outputs.empty:
        section.removed = [str(p) for p in outputs.loc[outputs["status"] == REMOVED, "path"]]
    section.config = yaml.safe_dump(_plain(settings.config), sort_keys=False, allow_unicode=True)
    section.rerun = ['pip install -e ".[test]"', settings.rerun]
    return section


def _runs_table(runs: pd.DataFrame, settings: ReportSettings) -> Table:
    """The runs a runs pattern found (runs.csv): id, system, file, dev score, facets."""
    fixed = (RUN, SYSTEM, HYPOTHESES, DEV_SCORE)
    columns = [
        Column(RUN, "run", text, numeric=False),
        Column(SYSTEM, SYSTEM, numeric=False),
        Column(HYPOTHESES, "hypotheses file", text, numeric=False),
    ]
    if DEV_SCORE in runs:
        columns.append(Column(DEV_SCORE, "dev score", lambda v: significant(v, 4)))
    columns += [Column(f, f, text, numeric=False) for f in runs.columns if f not in fixed]
    return frame_table(runs, columns, csv=settings.link(RUNS_TABLE))


def _plain(value: object) -> object:
    """The config as plain YAML types (Snakemake may hand over its own mapping types)."""
    if isinstance(value, dict) or hasattr(value, "items"):
        return {str(k): _plain(v) for k, v in value.items()}  # type: ignore[union-attr]
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)
