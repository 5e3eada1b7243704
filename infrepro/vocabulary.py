"""The project's vocabulary, in one place: column names, the output tables' columns, the
analyses, and the model formulas (docs/method.md §1, §4, §4b).

Import-light on purpose (no pandas, no numpy): Snakemake's rule files read it while parsing the
workflow, and every other module takes its names from here.
"""

from __future__ import annotations

from collections.abc import Sequence

# -- columns of the inputs and of the evaluation table (docs/method.md §1) ----------------------
SEGMENT = "segment_id"
RUN = "run_id"
SYSTEM = "system"
HYPOTHESES = "hypotheses"
DEV_SCORE = "dev_score"
SOURCE = "source"
REFERENCE = "reference"
BIN_SUFFIX = "_bin"  # the binned version of a numeric property: ``length`` -> ``length_bin``
RESERVED = (RUN, SYSTEM, HYPOTHESES, DEV_SCORE, SEGMENT)


def bin_column(prop: str) -> str:
    """The column of a numeric property's bins."""
    return prop + BIN_SUFFIX


def is_bin_column(name: str) -> bool:
    return name.endswith(BIN_SUFFIX)


def unbinned(name: str) -> str:
    """``length_bin`` -> ``length`` (other names unchanged)."""
    return name.removesuffix(BIN_SUFFIX)


# -- the analyses and the tables they write (results/tables/*.csv) ------------------------------
ANALYSES = ("comparison", "conditional", "variance", "metaparam", "classical", "planning", "budget")
_LOG = ("diagnostics", "qq")  # every analysis records its fits and skips
_MODELS = ("glrt", "tests", "means", "contrasts")
# The tables each analysis writes (its Snakemake job declares exactly these) ...
ANALYSIS_TABLES: dict[str, tuple[str, ...]] = {
    "comparison": (*_MODELS, *_LOG),
    "conditional": (*_MODELS, "slopes", "predictions", *_LOG),
    "variance": ("variance_components", "reliability", "dstudy", *_LOG),
    "metaparam": (*_MODELS, "slopes", "predictions", "importance", *_LOG),
    "classical": ("classical", "run_summary", "run_means", *_LOG),
    "planning": ("planning", *_LOG),
    "budget": ("budget", *_LOG),
}
# ... and the `analyses:` options it reads (a change of another option does not rerun it).
ANALYSIS_READS: dict[str, tuple[str, ...]] = {
    "comparison": ("dev_score_better", "bootstrap_lrt", "bootstrap", "facets"),
    "conditional": (),
    "variance": ("facets", "vca_interactions", "dstudy_max_n"),
    "metaparam": ("facets",),
    "classical": ("dev_score_better", "bootstrap", "randomization"),
    "planning": ("planning",),  # and report.alpha (workflow/rules/analysis.smk)
    "budget": ("dev_score_better", "bootstrap"),
}

TABLE_COLUMNS: dict[str, tuple[str, ...] | None] = {
    "glrt": (
        "metric",
        "analysis",
        "property",
        "subset",
        "facet",
        "h1",
        "h0",
        "n_obs",
        "n_segments",
        "n_runs",
        "loglik_h1",
        "loglik_h0",
        "lr_stat",
        "df",
        "p_value",
        "p_holm",
        "log10_p",
        "log10_p_holm",
        "note",
    ),
    "tests": (
        "metric",
        "analysis",
        "subset",
        "property",
        "facet",
        "hypothesis",
        "model",
        "method",
        "estimate",
        "se",
        "statistic",
        "numdf",
        "dendf",
        "n_obs",
        "n_segments",
        "n_runs",
        "p_value",
        "p_holm",
        "log10_p",
        "log10_p_holm",
        "note",
    ),
    "means": (
        "metric",
        "analysis",
        "subset",
        "property",
        "bin",
        "group",
        "kind",
        "x",
        "estimate",
        "se",
        "n_obs",
    ),
    "contrasts": (
        "metric",
        "analysis",
        "subset",
        "property",
        "bin",
        "level1",
        "level2",
        "estimate",
        "se",
        "p_value",
        "p_holm",
        "log10_p",
        "log10_p_holm",
        "p_method",
        "df",
        "effect_size",
        "effect_sd",
        "effect_label",
    ),
    "slopes": (
        "metric",
        "analysis",
        "subset",
        "property",
        "group",
        "slope",
        "se",
        "statistic",
        "df",
        "method",
        "p_value",
        "log10_p",
    ),
    "predictions": (
        "metric",
        "analysis",
        "subset",
        "property",
        "group",
        "x",
        "estimate",
        "se",
        "lower",
        "upper",
    ),
    "variance_components": (
        "metric",
        "system",
        "component",
        "variance",
        "percent",
        "n_levels",
    ),
    "reliability": (
        "metric",
        "system",
        "phi",
        "label",
        "n_per_facet_for_phi_08",
        "runs_for_phi_08",
        "n_facets",
        "retrain_sd_points",
        "model",
        "krippendorff_alpha",
    ),
    "dstudy": (
        "metric",
        "system",
        "n_per_facet",
        "runs_averaged",
        "phi",
    ),
    "importance": (
        "metric",
        "system",
        "facet",
        "variance",
        "percent",
        "rank",
        "dominant",
    ),
    "classical": (
        "metric",
        "test",
        "subset",
        "level1",
        "level2",
        "statistic",
        "estimate",
        "p_value",
        "log10_p",
        "n",
        "samples",
        "seed",
        "note",
    ),
    "run_summary": (
        "metric",
        "system",
        "n_runs",
        "mean",
        "sd",
        "min",
        "max",
        "best_run",
        "best_mean",
        "selected_by",
    ),
    "run_means": None,  # its facet columns depend on the experiment
    "planning": (
        "metric",
        "subset",
        "alpha",
        "effect_source",
        "effect_points",
        "var_segment",
        "var_run_baseline",
        "var_run_competitor",
        "var_residual",
        "segments",
        "design",
        "target",
        "runs_baseline",
        "runs_competitor",
        "power",
        "mc_se",
        "power_analytic",
        "draws",
    ),
    "budget": (
        "metric",
        "system",
        "source",
        "budget",
        "expected_best",
        "bootstrap_mean",
        "bootstrap_sd",
        "standard_low",
        "standard_high",
        "percentile_low",
        "percentile_high",
        "runs",
        "crossing_budget",
    ),
    "diagnostics": (
        "metric",
        "analysis",
        "subset",
        "property",
        "model",
        "reml",
        "status",
        "reason",
        "converged",
        "singular",
        "n_obs",
        "n_segments",
        "n_runs",
        "facets_lt5",
        "loglik",
        "messages",
    ),
    "qq": (
        "metric",
        "analysis",
        "subset",
        "property",
        "model",
        "theoretical",
        "sample",
    ),
}
TABLES = tuple(TABLE_COLUMNS)
# what the report reads: the analyses' tables, the property bins and the provenance tables
REPORT_TABLES = (*TABLES, "property_bins", "inputs", "software")
# The numeric columns of each table (the report reads tables as text and converts only these).
NUMERIC: dict[str, tuple[str, ...]] = {
    "glrt": (
        "n_obs",
        "n_segments",
        "n_runs",
        "loglik_h1",
        "loglik_h0",
        "lr_stat",
        "df",
        "log10_p",
        "log10_p_holm",
    ),
    "tests": (
        "estimate",
        "se",
        "statistic",
        "numdf",
        "dendf",
        "n_obs",
        "n_segments",
        "n_runs",
        "log10_p",
        "log10_p_holm",
    ),
    "means": ("x", "estimate", "se", "n_obs"),
    "contrasts": ("estimate", "se", "log10_p", "log10_p_holm", "df", "effect_size", "effect_sd"),
    "slopes": ("slope", "se", "statistic", "df", "log10_p"),
    "predictions": ("x", "estimate", "se", "lower", "upper"),
    "variance_components": ("variance", "percent", "n_levels"),
    "reliability": (
        "phi",
        "n_per_facet_for_phi_08",
        "runs_for_phi_08",
        "n_facets",
        "retrain_sd_points",
        "krippendorff_alpha",
    ),
    "dstudy": ("n_per_facet", "runs_averaged", "phi"),
    "importance": ("variance", "percent", "rank"),
    "classical": ("statistic", "estimate", "log10_p", "n", "samples"),
    "run_summary": ("n_runs", "mean", "sd", "min", "max", "best_mean"),
    "run_means": ("dev_score", "mean", "n_segments"),
    "planning": (
        "alpha",
        "effect_points",
        "var_segment",
        "var_run_baseline",
        "var_run_competitor",
        "var_residual",
        "segments",
        "target",
        "runs_baseline",
        "runs_competitor",
        "power",
        "mc_se",
        "power_analytic",
        "draws",
    ),
    "budget": (
        "budget",
        "expected_best",
        "bootstrap_mean",
        "bootstrap_sd",
        "standard_low",
        "standard_high",
        "percentile_low",
        "percentile_high",
        "runs",
    ),
    "diagnostics": ("n_obs", "n_segments", "n_runs", "loglik"),
    "qq": ("theoretical", "sample"),
    "property_bins": ("lower", "upper"),
    "inputs": ("bytes",),
    "software": (),
}


def columns(table: str) -> list[str]:
    """The documented columns of a table, in order."""
    found = TABLE_COLUMNS[table]
    if found is None:
        raise KeyError(f"table {table} has experiment-dependent columns")
    return list(found)


# -- model formulas (lme4 notation) -------------------------------------------------------------
# The paper's models (ML fits, GLRTs): runs are fixed, so the inference is conditional on the
# trained runs (paper eq. 3-4, 6-7). The run-aware models (REML fits, t/F tests with
# Kenward-Roger or Satterthwaite df): runs are draws of training configurations, each system
# with its own run variance (``dummy()`` terms), runs with their own slopes on a property.
SEGMENT_TERM = f"(1|{SEGMENT})"
RUN_TERM = f"(1|{RUN})"


def comparison_formulas(metric: str, run_aware: bool) -> tuple[str, str]:
    """H1 and H0 of the paper's system comparison (eq. 3-4), optionally + (1|run_id)."""
    random = SEGMENT_TERM + (f" + {RUN_TERM}" if run_aware else "")
    return f"{metric} ~ system + {random}", f"{metric} ~ 1 + {random}"


def property_formulas(metric: str, factor: str, prop: str) -> dict[str, str]:
    """The paper's H1 and two H0s of the conditional tests (eq. 6-7, thesis ch. 2)."""
    return {
        "h1": f"{metric} ~ {factor} * {prop} + {SEGMENT_TERM}",
        "h0_joint": f"{metric} ~ {prop} + {SEGMENT_TERM}",
        "h0_interaction": f"{metric} ~ {factor} + {prop} + {SEGMENT_TERM}",
    }


def _string(level: str) -> str:
    quote = '"' if '"' not in level else "'"
    return f"{quote}{level}{quote}"


def dummy_term(factor: str, level: str, group: str) -> str:
    """lme4's ``(0 + dummy(factor, "level")|group)``: a variance of group for one level."""
    return f"(0 + dummy({factor}, {_string(level)})|{group})"


def run_terms(systems_with_runs: Sequence[str], pooled: bool) -> str:
    """A run variance per system, or one shared ``(1|run_id)`` when ``pooled``."""
    if pooled:
        return RUN_TERM
    return " + ".join(dummy_term("system", s, "run_id") for s in systems_with_runs)


def headline_formula(metric: str, systems: Sequence[str], pooled: bool) -> str:
    """The run-aware comparison: ``score ~ system + (1|s) + per-system run intercepts``."""
    return f"{metric} ~ system + {SEGMENT_TERM} + {run_terms(systems, pooled)}"


def facet_aware_formula(
    metric: str, systems: Sequence[str], facet_groups: dict[str, list[str]]
) -> str:
    """The headline model plus per-system intercepts of the facets their runs share (and
    their crossings): facet levels are draws from their population."""
    extra = [dummy_term("system", s, g) for s, groups in facet_groups.items() for g in groups]
    return " + ".join([headline_formula(metric, systems, pooled=False), *extra])


def centred(prop: str) -> str:
    """The column of a numeric property centred at its mean, for the run slopes."""
    return prop + "_c"


def runaware_property_formula(
    metric: str, factor: str, prop: str, numeric: bool, run_part: str
) -> str:
    """The run-aware conditional model: runs get their own slope on a numeric property,
    ``(1 + d_c || run_id)`` with d_c = d - mean(d) (uncorrelated intercepts and slopes are not
    invariant to shifting d; centred, the interaction test is Student's t on the runs' slopes,
    docs/method.md §4b.3); for a categorical one, run intercepts (``run_part``) plus a run
    effect per level (``(1|run_id:d)``), the categorical analogue of a random slope. The fixed
    part keeps d as it is."""
    if numeric:
        runs = f"(1 + {centred(prop)} || run_id)"
    else:
        runs = f"{run_part} + (1|run_id:{prop})"
    return f"{metric} ~ {factor} * {prop} + {SEGMENT_TERM} + {runs}"


def effect_scale_formula(metric: str) -> str:
    """The model whose sqrt(segment + run + residual variance) scales every effect size."""
    return f"{metric} ~ system + {SEGMENT_TERM} + {RUN_TERM}"
