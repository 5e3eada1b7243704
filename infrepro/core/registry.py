"""The registry of the analyses and of the models they fit: one entry each, read by every part.

``ANALYSES`` holds what each analysis writes, the ``analyses:`` options it reads, the tables it
needs from another analysis, its cost model and the function that runs it. The runner
(infrepro.analyses.runner) dispatches from it; the workflow (workflow/rules/analysis.smk)
derives each analysis's rule from it (outputs, inputs from ``needs``, params from ``reads``,
resources from ``cost``); infrepro/workflow/resources.py reads the cost from it; a test checks
the config schema's ``analyses.run`` enum and default against it. ``MODELS`` holds every value
of the tables' ``analysis`` column: its family (the paper's model or a run-aware one), its label
in the report and its formula builder; the analyses and the report take the names from the
constants here.

Import-light on purpose (standard library and infrepro.core.vocabulary only): Snakemake's rule files
read it while parsing the workflow. Functions are named by dotted path (``module:function``)
and imported only when a job runs them (:func:`resolve`).

Adding an analysis (docs/method.md first):

1. Its function, in a module of ``infrepro/analyses/``: ``run(data: MetricData, log: FitLog,
   **needed) -> dict[str, pd.DataFrame]`` returning the tables it writes (the runner adds
   ``diagnostics`` and ``qq`` from ``log``, maps user names back and conforms every table).
2. Any new table: one ``table(...)`` line in ``infrepro.core.vocabulary.ANALYSIS_TABLE_SPECS``
   (columns and kinds; readers and writers take their types from it).
3. An ``AnalysisSpec`` in ``ANALYSES`` below, and the names of the models it fits in
   ``MODELS`` (family, label, formula builder).
4. Its name in the config schema's ``analyses.run`` enum and default, and any new option under
   ``analyses:`` (tests compare the schema with this registry).
5. A report section reading its tables (``infrepro/report/sections/``).

Nothing else: no rule, runner or resource code names an analysis.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

# -- analyses -----------------------------------------------------------------------------------
COMPARISON = "comparison"
CONDITIONAL = "conditional"
VARIANCE = "variance"
METAPARAM = "metaparam"
CLASSICAL = "classical"
SUMMARY = "summary"
PLANNING = "planning"
BUDGET = "budget"

LOG_TABLES = ("diagnostics", "qq")  # every analysis records its fits and skips
MODEL_TABLES = ("glrt", "tests", "means", "contrasts")


@dataclass(frozen=True)
class Cost:
    """Peak memory (MiB) and CPU seconds of one job as lines in millions of evaluation rows:
    ``base + per_mrow * rows / 1e6``, and for memory ``+ per_system2 * systems² + per_run2 *
    runs²`` (runs: of the system with the most): the run-aware models hold dense matrices of
    the runs, a run variance per system, whose width grows with the systems at a fixed number
    of rows a system, and the meta-parameter models' fixed effects are the levels of a facet,
    as many as a system's runs when it is the seed (infrepro/workflow/resources.py adds headroom
    and retries)."""

    base_mib: float
    mib_per_mrow: float
    base_s: float
    s_per_mrow: float
    mib_per_system2: float = 0.0
    mib_per_run2: float = 0.0


@dataclass(frozen=True)
class Need:
    """A table an analysis reads from another analysis's job of the same metric, passed to its
    function as the keyword ``argument``; ``user_names``: its columns whose cells hold user
    names (facets, properties) that the job renames to internal ones."""

    analysis: str
    table: str
    argument: str
    user_names: tuple[str, ...] = ()


@dataclass(frozen=True)
class AnalysisSpec:
    """One analysis: a Snakemake job per metric (see the module docstring)."""

    name: str
    function: str  # "module:function", called as function(data, log, **needed)
    tables: tuple[str, ...]  # the tables it writes (its job declares exactly these)
    # the `analyses:` options it reads (others do not rerun it); "planning.min_effect" names one
    # key of a nested option; reading any other option is an error (``declared_options``)
    reads: tuple[str, ...]
    cost: Cost
    needs: tuple[Need, ...] = ()
    default: bool = True  # in the schema's default `analyses.run`
    report_reads: tuple[str, ...] = ()  # the `report:` options it reads (passed with the others)


def resolve(path: str) -> Callable[..., Any]:
    """The function named by ``"package.module:function"``."""
    module, _, name = path.partition(":")
    found = getattr(importlib.import_module(module), name)
    if not callable(found):
        raise TypeError(f"{path} is not callable")
    return found


# Costs fitted to benchmarks/results/analysis_scale.md (the per-system² and per-run² memory
# terms to the largest-job peaks of benchmarks/results/growth.md): lines on or above every
# measured point at 1x, 3x and 10x the paper (peak MiB, remeasured after the FitCache of issue
# 14, which keeps one property's model matrices alive; wall seconds on a loaded 2-core machine,
# from before it).
# metaparam's memory grows with runs too (its fixed effects are the levels of the dominant
# facet, e.g. the seeds, times each property's bins): the 10x point has 2.5x the paper's runs.
ANALYSES: dict[str, AnalysisSpec] = {
    spec.name: spec
    for spec in (
        AnalysisSpec(
            COMPARISON,
            "infrepro.analyses.comparison:compare_systems",
            (*MODEL_TABLES, *LOG_TABLES),
            # comparisons: the decision's family, whose pairs it fits (baseline or all pairs)
            # bootstrap.seed: the bootstrap LR test's draws (bootstrap_lrt is their number)
            ("dev_score_better", "bootstrap_lrt", "bootstrap.seed", "facets", "comparisons"),
            Cost(300, 510, 5, 9, mib_per_system2=0.05),  # run-aware fit: a run variance per system
        ),
        AnalysisSpec(
            CONDITIONAL,
            "infrepro.analyses.conditional:conditional_analyses",
            (*MODEL_TABLES, "slopes", "predictions", *LOG_TABLES),
            # the within-bin pairs: the decision's family or all (docs/method.md §4.2.3)
            ("conditional_pairs", "comparisons"),
            # per-bin models: the same; and the run columns (a run's intercept and slope) grow
            # with the runs (754 MiB at 4 systems x 300 runs x 400 segments, growth.md)
            Cost(350, 580, 10, 26, mib_per_system2=0.12, mib_per_run2=0.002),
        ),
        AnalysisSpec(
            VARIANCE,
            "infrepro.analyses.variance:variance_components",
            ("variance_components", "reliability", "dstudy", *LOG_TABLES),
            ("facets", "vca_interactions", "dstudy_max_n", "retraining_facets"),
            Cost(400, 220, 5, 2),
        ),
        AnalysisSpec(
            METAPARAM,
            "infrepro.analyses.metaparam:metaparameter_interactions",
            (*MODEL_TABLES, "slopes", "predictions", "importance", *LOG_TABLES),
            ("facets", "metaparam_facets"),
            # 3,686 MiB at 300 runs a system, the seed its facet (benchmarks/results/growth.md)
            Cost(300, 900, 30, 100, mib_per_run2=0.04),
            # it ranks each system's facets by the variance components (the dominant facet)
            needs=(Need(VARIANCE, "variance_components", "components", ("component",)),),
        ),
        AnalysisSpec(
            CLASSICAL,
            "infrepro.analyses.classical:classical_tests",
            ("classical", "run_summary", "run_means", *LOG_TABLES),
            ("dev_score_better", "bootstrap", "randomization"),
            Cost(300, 200, 5, 1),
        ),
        AnalysisSpec(
            SUMMARY,
            "infrepro.analyses.decision.summary:summary_tables",
            ("summary", "decisions", "looks", *LOG_TABLES),
            (
                "comparisons",
                "adjust",
                "run_variance",
                "dev_score_better",
                "bootstrap.seed",  # the rank intervals' draws; their number is fixed (§4c.7)
                "facets",
                "planning.min_effect",
                "sequential",
            ),
            # one fit of the comparison's size (the rows' line not measured apart)
            Cost(300, 510, 5, 9, mib_per_system2=0.05),  # model M: the same
            report_reads=("alpha",),  # its verdicts and the p it adjusts use the report's alpha
        ),
        AnalysisSpec(
            PLANNING,
            "infrepro.analyses.planning:planning_analysis",
            ("planning", *LOG_TABLES),
            ("planning", "run_variance", "sequential.spending", "sequential.futility"),
            Cost(300, 510, 5, 9),  # one headline fit per pair, then simulation (as comparison)
            # the decision's test of each pair, at its level (α is read through it)
            needs=(Need(SUMMARY, "decisions", "decisions"),),
        ),
        AnalysisSpec(
            BUDGET,
            "infrepro.analyses.budget:budget_analysis",
            ("budget", *LOG_TABLES),
            ("dev_score_better", "bootstrap"),
            Cost(300, 200, 5, 1),  # run means only (as classical)
        ),
    )
}


class UndeclaredOption(LookupError):
    """An analysis read an option its registry entry does not declare (so that a change of it
    would neither reach the analysis' rule nor rerun it)."""


def _nested(paths: tuple[str, ...]) -> dict[str, object]:
    """Declared dotted paths as a tree: ("a", "b.c") -> {"a": True, "b": {"c": True}}."""
    tree: dict[str, object] = {}
    for path in paths:
        node = tree
        *parents, leaf = path.split(".")
        for part in parents:
            child = node.setdefault(part, {})
            if child is True:
                break
            node = child  # type: ignore[assignment]
        else:
            node[leaf] = True
    return tree


def _pick(options: Mapping[str, Any], tree: Mapping[str, object]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, sub in tree.items():
        if key not in options:
            continue
        value = options[key]
        out[key] = value if sub is True else _pick(value, sub)  # type: ignore[arg-type]
    return out


def rule_options(
    name: str, analyses: Mapping[str, Any], report: Mapping[str, Any]
) -> dict[str, Any]:
    """The options an analysis' rule passes to its job (its params, so that a change reruns
    it): exactly the declared ``reads`` of ``analyses`` (nested keys by dotted path) and the
    declared ``report_reads`` of ``report``."""
    spec = analysis_spec(name)
    return _pick(analyses, _nested(spec.reads)) | _pick(report, _nested(spec.report_reads))


class DeclaredOptions(Mapping[str, Any]):
    """A read-only view of an analysis' options that raises :class:`UndeclaredOption` for a
    key its registry entry does not declare (``reads`` and ``report_reads``)."""

    def __init__(self, name: str, options: Mapping[str, Any], tree: Mapping[str, object]):
        self._name, self._options, self._tree = name, options, tree

    @classmethod
    def of(cls, name: str, options: Mapping[str, Any]) -> DeclaredOptions:
        spec = analysis_spec(name)
        return cls(name, options, _nested((*spec.reads, *spec.report_reads)))

    def __getitem__(self, key: str) -> Any:
        sub = self._tree.get(key)
        if sub is None:
            raise UndeclaredOption(
                f"the {self._name} analysis reads option {key!r}, which its registry entry "
                "(infrepro/core/registry.py) does not declare"
            )
        value = self._options[key]
        if sub is True or not isinstance(value, Mapping):
            return value
        return DeclaredOptions(f"{self._name} ({key})", value, sub)  # type: ignore[arg-type]

    def __iter__(self):  # type: ignore[no-untyped-def]
        return (k for k in self._tree if k in self._options)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __contains__(self, key: object) -> bool:
        if key not in self._tree:
            self[key]  # type: ignore[index]  # raises UndeclaredOption
        return key in self._options


def analysis_spec(name: str) -> AnalysisSpec:
    """The registered analysis ``name`` (ValueError naming the choices otherwise)."""
    if name not in ANALYSES:
        raise ValueError(f"unknown analysis '{name}'; choose from {', '.join(ANALYSES)}")
    return ANALYSES[name]


def with_needs(chosen: list[str] | tuple[str, ...]) -> list[str]:
    """The analyses to run for a choice: the chosen ones and, transitively, those they need, in
    registry order."""
    wanted = set(chosen)
    while True:
        needed = {n.analysis for a in wanted for n in analysis_spec(a).needs} - wanted
        if not needed:
            return [a for a in ANALYSES if a in wanted]
        wanted |= needed


# -- models: the values of the tables' `analysis` column ------------------------------------------
PAPER = "paper"  # ML fits, GLRTs: runs fixed, inference conditional on the trained runs
RUN_AWARE = "run-aware"  # REML fits with run terms; t/F tests with KR or Satterthwaite df
JOB = "job"  # a row about the whole job (a skipped analysis) or a descriptive fit

BEST_VS_BEST = "best_vs_best"
ALL_RUNS = "all_runs"
ALL_RUNS_RUN_AWARE = "all_runs_run_aware"
HEADLINE = "all_runs_per_system"  # the run-aware comparison the verdict rests on
FACET_AWARE = "all_runs_facet_aware"
HEADLINE_BOOTSTRAP = HEADLINE + "_bootstrap"  # its LR test's parametric bootstrap check
EFFECT_SCALE = "effect_scale"
RUN_AWARE_SUFFIX = "_runaware"  # conditional -> conditional_runaware (its run-aware fit)
JOINT_SUFFIX = "_joint"  # the test of factor and interaction
INTERACTION_SUFFIX = "_interaction"  # the test of the interaction only
# the system comparisons the comparison analysis tests, run-aware ones first (the report's order)
COMPARISON_MODELS = (HEADLINE, FACET_AWARE, BEST_VS_BEST, ALL_RUNS, ALL_RUNS_RUN_AWARE)


def run_aware(model: str) -> str:
    """``conditional`` -> ``conditional_runaware``."""
    return model + RUN_AWARE_SUFFIX


def joint(model: str) -> str:
    """``conditional`` -> ``conditional_joint``."""
    return model + JOINT_SUFFIX


def interaction_only(model: str) -> str:
    """``conditional`` -> ``conditional_interaction``."""
    return model + INTERACTION_SUFFIX


@dataclass(frozen=True)
class ModelSpec:
    """A value of the ``analysis`` column: its family, its report label and the function
    (``module:function``) that writes its formula ('' when it fits none)."""

    name: str
    family: str
    label: str
    formula: str = ""


_VOCABULARY = "infrepro.core.vocabulary"


def _property_models(base: str, factor: str, paper_label: str, run_label: str) -> list[ModelSpec]:
    """The six models of a conditional-type analysis: the paper's fit and its joint and
    interaction GLRTs, the run-aware fit and its joint and interaction F tests."""
    paper = f"{_VOCABULARY}:property_formulas"
    runs = f"{_VOCABULARY}:runaware_property_formula"
    return [
        ModelSpec(base, PAPER, paper_label, paper),
        ModelSpec(joint(base), PAPER, f"paper's joint: {factor} + interaction", paper),
        ModelSpec(interaction_only(base), PAPER, "paper's interaction only", paper),
        ModelSpec(run_aware(base), RUN_AWARE, run_label, runs),
        ModelSpec(
            joint(run_aware(base)), RUN_AWARE, f"run-aware joint: {factor} + interaction", runs
        ),
        ModelSpec(interaction_only(run_aware(base)), RUN_AWARE, "run-aware interaction only", runs),
    ]


MODELS: dict[str, ModelSpec] = {
    spec.name: spec
    for spec in (
        ModelSpec(BEST_VS_BEST, PAPER, "best vs best", f"{_VOCABULARY}:comparison_formulas"),
        ModelSpec(
            ALL_RUNS, PAPER, "all runs (paper's model)", f"{_VOCABULARY}:comparison_formulas"
        ),
        ModelSpec(
            ALL_RUNS_RUN_AWARE,
            PAPER,
            "all runs, shared (1|run_id) (paper's model + run intercept)",
            f"{_VOCABULARY}:comparison_formulas",
        ),
        ModelSpec(
            HEADLINE,
            RUN_AWARE,
            "all runs, run-aware (run variance per system)",
            f"{_VOCABULARY}:headline_formula",
        ),
        ModelSpec(
            FACET_AWARE,
            RUN_AWARE,
            "all runs, facet-aware (sensitivity)",
            f"{_VOCABULARY}:facet_aware_formula",
        ),
        ModelSpec(
            HEADLINE_BOOTSTRAP,
            RUN_AWARE,
            "all runs per system bootstrap",
            f"{_VOCABULARY}:headline_formula",
        ),
        ModelSpec(EFFECT_SCALE, RUN_AWARE, "effect scale", f"{_VOCABULARY}:effect_scale_formula"),
        *_property_models(
            CONDITIONAL, "system", "conditional, paper's model", "conditional, run-aware"
        ),
        *_property_models(
            METAPARAM, "facet", "meta-parameter, paper's model", "meta-parameter, run-aware"
        ),
        ModelSpec(
            VARIANCE,
            RUN_AWARE,
            "variance components (REML)",
            "infrepro.analyses.variance:vca_formula",
        ),
        ModelSpec(CLASSICAL, JOB, "classical tests"),
        ModelSpec(COMPARISON, JOB, "comparison"),
    )
}
