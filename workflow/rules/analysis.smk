# The statistical analyses (docs/method.md §4, §4b): one job per metric and analysis, then tidy tables.
from infrepro.analyses import ANALYSES, TABLES
from infrepro.resources import (
    analysis_mem_mb,
    analysis_runtime,
    collect_mem_mb,
    collect_runtime,
)

ANALYSIS_OPTIONS = config.get("analyses", {}) or {}
ANALYSES_TO_RUN = [a for a in ANALYSES if a in ANALYSIS_OPTIONS.get("run", ANALYSES)]
if "metaparam" in ANALYSES_TO_RUN and "variance" not in ANALYSES_TO_RUN:
    ANALYSES_TO_RUN.insert(ANALYSES_TO_RUN.index("metaparam"), "variance")


def analysis_part(table):
    return f"{RESULTS}/analyses/{{metric}}/{{analysis}}/{table}.csv"


def metaparam_inputs(wildcards):
    """The metaparam analysis ranks facets by the variance job's components."""
    if wildcards.analysis != "metaparam":
        return []
    return f"{RESULTS}/analyses/{wildcards.metric}/variance/variance_components.csv"


rule analysis:
    input:
        evaluation=f"{RESULTS}/evaluation.parquet",
        runs=f"{RESULTS}/inputs/runs.parquet",
        bins=f"{RESULTS}/tables/property_bins.csv",
        components=metaparam_inputs,
    output:
        **{table: analysis_part(table) for table in TABLES},
    params:
        better=lambda wildcards: EXPERIMENT.better[wildcards.metric],
        baseline=EXPERIMENT.baseline,
        facets=EXPERIMENT.facets,
        properties=EXPERIMENT.properties,
        options=ANALYSIS_OPTIONS,
    wildcard_constraints:
        metric="|".join(map(re.escape, EXPERIMENT.metrics)),
        analysis="|".join(ANALYSES),
    log:
        "logs/analysis/{metric}/{analysis}.log",
    threads: 1
    resources:
        # from the rows of the evaluation table (infrepro/resources.py), when the job is submitted
        mem_mb=analysis_mem_mb,
        runtime=analysis_runtime,
    script:
        "../../scripts/analysis.py"


rule collect_tables:
    input:
        parts=expand(
            f"{RESULTS}/analyses/{{metric}}/{{analysis}}/{{table}}.csv",
            metric=EXPERIMENT.metrics,
            analysis=ANALYSES_TO_RUN,
            table=TABLES,
        ),
    output:
        **{table: f"{RESULTS}/tables/{table}.csv" for table in TABLES},
    log:
        "logs/collect_tables.log",
    threads: 1
    resources:
        mem_mb=collect_mem_mb,
        runtime=collect_runtime,
    script:
        "../../scripts/collect_tables.py"
