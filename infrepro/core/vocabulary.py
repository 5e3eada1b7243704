"""The project's vocabulary, in one place: column names, the output tables' columns, the
analyses, and the model formulas (docs/method.md §1, §4, §4b).

Import-light on purpose (no pandas, no numpy): Snakemake's rule files read it while parsing the
workflow, and every other module takes its names from here.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

# -- columns of the inputs and of the evaluation table (docs/method.md §1) ----------------------
SEGMENT = "segment_id"
RUN = "run_id"
SYSTEM = "system"
HYPOTHESES = "hypotheses"
DEV_SCORE = "dev_score"
LOOK = "look"  # of the runs table: the batch a run arrived in (docs/method.md §4e.1)
# of the runs table: the look the ledger recorded a run at, when no look column is declared (§4e.12)
RECORDED_LOOK = "recorded_look"
LOOKS_TABLE = "looks"  # the look history of the sequential decision (docs/method.md §4e.10)
SOURCE = "source"
REFERENCE = "reference"
VARIANCE_COLUMN = "variance"  # of variance_components and importance
BUDGET_COLUMN = "budget"  # of budget: the number of runs drawn
CLASSICAL_TABLE = "classical"  # the classical tests' table
OUTPUTS_TABLE = "outputs"  # results/tables/outputs.csv: the files produced and removed
RUNS_TABLE = "runs"  # results/tables/runs.csv: the runs a runs pattern found
PRODUCED, REMOVED = "produced", "removed"  # its `status` values
BIN_SUFFIX = "_bin"  # the binned version of a numeric property: ``length`` -> ``length_bin``
RESERVED = (RUN, SYSTEM, HYPOTHESES, DEV_SCORE, SEGMENT)
# A run id names output files: letters and digits of any script (str.isalnum: ``Γάμμα_1``,
# ``modèle_1``) and ``. _ + = @ -``, a letter or digit first (fullmatch it: "$" would allow a
# final newline)
RUN_ID_FORM = re.compile(r"[^\W_][\w.+=@-]*")
# The model residual's row in the variance tables' ``component`` column, beside the facets': a
# facet of that name would be indistinguishable from it, so facets may not have it.
RESIDUAL = "Residual"


_SAFE_STEM = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)*")
STEM_SLUG_MAX = 40  # characters of the readable part of an encoded file-name stem


def file_stem(name: str) -> str:
    """The file-name stem of a user name (a metric's ``results/analyses/<stem>/``,
    ``results/paper/<stem>.tex``): the name itself when it is a plain, short file name (letters,
    digits, ``_ - .``, no ``..``, at most 64 characters), else a readable ASCII slug of it (at
    most 40 characters) and the first 8 hex digits of its SHA-256: stable, at most 49 bytes, no
    path separator, brace or wildcard syntax whatever the name holds."""
    if len(name) <= 64 and _SAFE_STEM.fullmatch(name):
        return name
    ascii_ = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", ascii_).strip("-_")[:STEM_SLUG_MAX].strip("-_")
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
    return f"{slug}-{digest}" if slug else digest


def bin_column(prop: str) -> str:
    """The column of a numeric property's bins."""
    return prop + BIN_SUFFIX


def is_bin_column(name: str) -> bool:
    return name.endswith(BIN_SUFFIX)


def unbinned(name: str) -> str:
    """``length_bin`` -> ``length`` (other names unchanged)."""
    return name.removesuffix(BIN_SUFFIX)


# -- the tables: one typed declaration each (results/tables/*.csv and the jobs' parts) -------
STR, INT, FLOAT, BOOL = "str", "int", "float", "bool"
KINDS = (STR, INT, FLOAT, BOOL)


@dataclass(frozen=True)
class Column:
    """A declared column: its name and kind. A ``str`` cell is read back exactly as written
    (``007``, ``NA``, ``None``, ``1`` stay strings; an empty cell is an empty string), an
    ``int`` or ``float`` cell as a number (an empty cell is NaN), a ``bool`` cell as
    ``True``/``False``. p-values are ``str``: the tables give them preformatted."""

    name: str
    kind: str = STR

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"column {self.name}: kind {self.kind!r} is not one of {KINDS}")


@dataclass(frozen=True)
class TableSpec:
    """A table's columns in order; ``extra``: it has further, experiment-dependent columns
    (``run_means``' facets), read as text, besides the declared ones."""

    name: str
    columns: tuple[Column, ...]
    extra: bool = False

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)


# -- qq.csv: residual quantiles of every fit (docs/method.md §4.6) ------------------------------
QQ_POINTS = 50  # standardized-residual quantiles stored per fitted model
QQ_DIGITS = 4  # significant digits of each (a plot's resolution; the table stays small)


def qq_probabilities() -> list[float]:
    """The probabilities (i + 0.5) / QQ_POINTS of a fit's stored quantiles: the normal
    quantiles of these are the QQ plot's x values."""
    return [(i + 0.5) / QQ_POINTS for i in range(QQ_POINTS)]


def qq_theoretical() -> list[float]:
    """The standard normal quantiles of :func:`qq_probabilities`: the QQ plot's x values."""
    normal = NormalDist()
    return [normal.inv_cdf(p) for p in qq_probabilities()]


def qq_cell(quantiles: Sequence[float]) -> str:
    """A fit's quantiles as the ``sample`` cell of qq.csv: space-separated, QQ_DIGITS
    significant digits."""
    return " ".join(f"{float(q):.{QQ_DIGITS}g}" for q in quantiles)


def qq_values(cell: str) -> list[float]:
    """The quantiles of a ``sample`` cell of qq.csv (the inverse of :func:`qq_cell`)."""
    return [float(v) for v in str(cell).split()]


def table(name: str, declaration: str, extra: bool = False) -> TableSpec:
    """A TableSpec from ``"metric n_obs:int ..."``: names in order, ``:kind`` unless str."""
    columns = [Column(*item.split(":", 1)) for item in declaration.split()]
    return TableSpec(name, tuple(columns), extra)


_P = "p_value p_holm log10_p:float log10_p_holm:float"  # a p, Holm's p and their log10
_KEY = "metric analysis subset property"
_FKEY = "metric analysis subset facet property"  # with the facet the metaparam analysis tests
# The two VCA models of docs/method.md §4.3, named in the ``vca`` column of the variance tables:
# with the run term (phi, D-study, SDs and importance come from it) and the thesis' main-effects
# model (eq. 3.13, the reproduction of the thesis' tables).
VCA_COLUMN = "vca"
VCA_RUN_AWARE = "run-aware"
VCA_MAIN_EFFECTS = "main effects (thesis eq. 3.13)"
# docs/method.md §4.6.1: whether a row's fit converged (False: no share, φ, SD or D-study is
# claimed from it; the reliability label then reads NOT_CONVERGED)
CONVERGED = "converged"
NOT_CONVERGED = "not converged"
# The tables the analyses write (results/analyses/<metric>/<analysis>/<table>.csv, concatenated
# into results/tables/<table>.csv).
ANALYSIS_TABLE_SPECS: tuple[TableSpec, ...] = (
    table(
        "glrt",
        "metric analysis property subset facet h1 h0 n_obs:int n_segments:int n_runs:int "
        f"loglik_h1:float loglik_h0:float lr_stat:float df:float {_P} note",
    ),
    table(
        "tests",
        f"{_KEY} facet hypothesis model method estimate:float se:float statistic:float "
        f"numdf:float dendf:float n_obs:int n_segments:int n_runs:int {_P} note",
    ),
    table("means", f"{_FKEY} bin group kind x:float estimate:float se:float n_obs:int"),
    table(
        "contrasts",
        f"{_FKEY} bin level1 level2 estimate:float se:float {_P} p_method df:float "
        "effect_size:float effect_sd:float effect_label",
    ),
    table(
        "slopes",
        f"{_FKEY} group slope:float se:float statistic:float df:float method p_value log10_p:float",
    ),
    table(
        "predictions",
        f"{_FKEY} group x:float estimate:float se:float lower:float upper:float",
    ),
    table(
        "variance_components",
        f"metric system {VCA_COLUMN} component variance:float percent:float n_levels:int "
        f"{CONVERGED}:bool",
    ),
    table(
        "reliability",
        "metric system phi:float label n_per_facet_for_phi_08:int runs_for_phi_08:int "
        f"n_facets:int retrain_sd_points:float metaparam_sd_points:float retrain_components "
        f"{VCA_COLUMN} model krippendorff_alpha:float {CONVERGED}:bool",
    ),
    table("dstudy", "metric system n_per_facet:int runs_averaged:int phi:float"),
    table(
        "importance",
        "metric system facet variance:float percent:float rank:int dominant:bool",
    ),
    table(
        CLASSICAL_TABLE,
        "metric test subset level1 level2 statistic:float estimate:float p_value "
        "log10_p:float n:int samples:int seed note",
    ),
    table(
        "run_summary",
        "metric system n_runs:int mean:float sd:float min:float max:float best_run "
        "best_mean:float selected_by",
    ),
    # its facet columns (between system and dev_score) depend on the experiment
    table(
        "run_means",
        f"metric {RUN} {SYSTEM} dev_score:float mean:float n_segments:int is_best:bool",
        extra=True,
    ),
    table(
        "diagnostics",
        f"{_KEY} model reml:bool status reason {CONVERGED}:bool singular:bool n_obs:int "
        "n_segments:int n_runs:int facets_lt5 loglik:float messages",
    ),
    # one row per fitted model: its QQ_POINTS residual quantiles in one cell (qq_probabilities)
    table("qq", f"{_KEY} model sample"),
    # the planning analysis (docs/method.md §4d): power of the headline test per design
    table(
        "planning",
        "metric subset alpha:float effect_source improvement_points:float var_segment:float "
        "var_run_baseline:float var_run_competitor:float var_residual:float segments:float "
        "design target:float runs_baseline:float runs_competitor:float power:float mc_se:float "
        "power_analytic:float draws:float looks:float expected_runs_null:float "
        "expected_runs_effect:float fixed_runs:float",
    ),
    # the budget analysis (docs/method.md §4d): expected best of B runs per system
    table(
        "budget",
        "metric system source budget:float expected_best:float bootstrap_mean:float "
        "bootstrap_sd:float standard_low:float standard_high:float percentile_low:float "
        "percentile_high:float runs:float crossing_budget",
    ),
    # the decision table (docs/method.md §4c): one row per metric and system
    table(
        "summary",
        "metric rank:int system runs:int run_mean:float run_sd:float best_run "
        "best_run_score:float best_run_selected_by model_mean:float model_se:float "
        "model_df:float model_lower:float model_upper:float group output_group "
        "rank_lower:int rank_upper:int best_run_rank:int best_run_wins:int "
        "best_run_wins_confirmed:int model df_method note",
    ),
    # the decision records (docs/method.md §4c.11): one row per metric, family and pair; the
    # fields of infrepro.core.decisions.PairDecision, in order
    table(
        "decisions",
        "metric family family_size:int adjust reference system runs_reference:int "
        "runs_system:int comparison estimand improvement:float se:float df:float df_method "
        "test statistic:float critical:float lower:float upper:float interval level:float "
        "p_value log10_p:float p_adjusted log10_p_adjusted:float verdict assumption "
        "generalises:bool facet_aware_p log10_facet_aware_p:float facet_aware_df:float "
        "run_sd_ratio:float run_sd_ratio_lower:float run_sd_ratio_upper:float band:float "
        "prior_df:float survival best_vs_best:float min_effect:float power:float sequential "
        "look_source spending looks:int look:int look_runs_reference:int look_runs_system:int "
        "max_runs_reference:float max_runs_system:float plan_alpha:float action "
        "conditional_power:float more_runs:float few_runs model note",
    ),
    # the look history of the sequential decision (docs/method.md §4e.10): one row per metric,
    # family, pair and look of the pair
    table(
        LOOKS_TABLE,
        "metric family reference system sequential look:int runs_reference:int "
        "runs_system:int fraction:float alpha_spent:float boundary:float nominal:float "
        "critical:float improvement:float se:float df:float p_value log10_p:float lower:float "
        "upper:float crossed:bool note",
    ),
)
# ... and the tables the report reads besides them: the property bins and the provenance
PROVENANCE_TABLE_SPECS: tuple[TableSpec, ...] = (
    table("property_bins", "computed_on property bin lower:float upper:float"),
    table("inputs", "path sha256 bytes:int"),
    table("software", "package version"),
    # every file the configuration produces under results/ and every file an earlier one
    # produced that was removed (infrepro.workflow.outputs): status produced or removed
    table(OUTPUTS_TABLE, "path status"),
)
# the runs a runs pattern found, as a runs sheet's columns (dev_score with runs_dev_scores),
# then the facets; written only for runs from a pattern (infrepro.io.pattern)
RUNS_TABLE_SPEC = table(RUNS_TABLE, "run_id system hypotheses dev_score:float", extra=True)
TABLE_SPECS: dict[str, TableSpec] = {
    spec.name: spec for spec in (*ANALYSIS_TABLE_SPECS, *PROVENANCE_TABLE_SPECS, RUNS_TABLE_SPEC)
}
TABLES = tuple(spec.name for spec in ANALYSIS_TABLE_SPECS)
# Columns an analysis may leave out of its rows, and the value they then hold (the system
# comparison has no facet; the metaparam analysis names the tested facet).
COLUMN_DEFAULTS: dict[str, object] = {"facet": ""}
# what the report reads: the analyses' tables, the property bins and the provenance tables;
# and, when they exist, the optional ones
REPORT_TABLES = tuple(name for name in TABLE_SPECS if name != RUNS_TABLE)
OPTIONAL_REPORT_TABLES = (RUNS_TABLE,)


def columns(table: str) -> list[str]:
    """The documented columns of a table, in order."""
    spec = TABLE_SPECS[table]
    if spec.extra:
        raise KeyError(f"table {table} has experiment-dependent columns")
    return list(spec.names)


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


def string_literal(text: str) -> str:
    """``text`` as a model formula's string (what the tokenizer reads back as ``text``): in double
    quotes, else single quotes when it holds a double one; text holding both kinds or a
    backslash is escaped as R does (``"a\\"b"``)."""
    if "\\" not in text:
        for quote in ('"', "'"):
            if quote not in text:
                return f"{quote}{text}{quote}"
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def dummy_term(factor: str, level: str, group: str) -> str:
    """lme4's ``(0 + dummy(factor, "level")|group)``: a variance of group for one level."""
    return f"(0 + dummy({factor}, {string_literal(level)})|{group})"


def run_terms(systems_with_runs: Sequence[str], pooled: bool, factor: str = SYSTEM) -> str:
    """A run variance per level of ``factor`` (per system), or one shared ``(1|run_id)`` when
    ``pooled``."""
    if pooled:
        return RUN_TERM
    return " + ".join(dummy_term(factor, s, RUN) for s in systems_with_runs)


def headline_formula(metric: str, systems: Sequence[str], pooled: bool) -> str:
    """The run-aware comparison: ``score ~ system + (1|s) + per-system run intercepts``."""
    return f"{metric} ~ system + {SEGMENT_TERM} + {run_terms(systems, pooled)}"


def decision_formula(metric: str, systems_with_runs: Sequence[str]) -> str:
    """The decision table's model M over all systems (docs/method.md §4c.1): the headline model
    with a run variance for each system that has at least two runs, none for single-run ones."""
    if not systems_with_runs:
        return f"{metric} ~ system + {SEGMENT_TERM}"
    return headline_formula(metric, systems_with_runs, pooled=False)


# dummy_term's per-system run variance, written once as its rule (s: a placeholder, unquoted)
RUN_TERMS_RULE = f"<(0 + dummy({SYSTEM}, s)|{RUN}) for each system s with two or more runs>"


def decision_record_model(metric: str, systems_with_runs: Sequence[str]) -> str:
    """Model M as each decision record names it (decisions.csv ``model``, docs/method.md
    §4c.11): :func:`decision_formula` with its per-system run terms written once as their rule,
    so that a row does not grow with the systems (decisions.csv and summary.csv ``model``;
    diagnostics.csv spells each term): at 62 systems the spelled formula was 80 % of
    decisions.csv, at 200 systems 93 % of summary.csv."""
    fixed_and_segments = decision_formula(metric, [])
    return f"{fixed_and_segments} + {RUN_TERMS_RULE}" if systems_with_runs else fixed_and_segments


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
    """The run-aware conditional model: run intercepts (``run_part``: per level of the factor,
    ``run_terms``, or one shared) plus, for a numeric property, the runs' own slopes
    ``(0 + d_c | run_id)`` with d_c = d - mean(d) (uncorrelated intercepts and slopes are not
    invariant to shifting d; centred, the interaction test is Student's t on the runs' slopes,
    docs/method.md §4b.3); for a categorical one, a run effect per level (``(1|run_id:d)``),
    the categorical analogue of a random slope. The fixed part keeps d as it is."""
    if numeric:
        runs = f"{run_part} + (0 + {centred(prop)} | {RUN})"
    else:
        runs = f"{run_part} + (1|{RUN}:{prop})"
    return f"{metric} ~ {factor} * {prop} + {SEGMENT_TERM} + {runs}"


def vca_formula(
    metric: str, facets: Sequence[str], extra_terms: Sequence[str] = (), run_term: bool = False
) -> str:
    """The VCA model (docs/method.md §4.3): ``metric ~ 1 + (1|segment_id) + (1|f1) + ...``, the
    optional interaction terms, and with ``run_term`` the run term ``(1|run_id)`` (the
    highest-order crossing of the facets); without it, the thesis' eq. 3.13."""
    terms = [SEGMENT, *facets, *extra_terms, *([RUN] if run_term else [])]
    return f"{metric} ~ 1 + " + " + ".join(f"(1|{t})" for t in terms)


# d's denominator, in words (docs/method.md §4b.8)
EFFECT_SD_TEXT = "the SD of a run's mean score, sqrt(run + residual variance / segments per run)"


def effect_scale_formula(metric: str) -> str:
    """The model whose run-mean SD (``EFFECT_SD_TEXT``) scales every effect size."""
    return f"{metric} ~ system + {SEGMENT_TERM} + {RUN_TERM}"
