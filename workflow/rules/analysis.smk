# The statistical analyses (docs/method.md §4, §4b): one job per metric and analysis, then tidy tables.
from infrepro.vocabulary import ANALYSES, TABLES

ANALYSIS_OPTIONS = config["analyses"]  # the schema sets every default
ANALYSES_TO_RUN = [a for a in ANALYSES if a in ANALYSIS_OPTIONS["run"]]
if "metaparam" in ANALYSES_TO_RUN and "variance" not in ANALYSES_TO_RUN:
    ANALYSES_TO_RUN.insert(ANALYSES_TO_RUN.index("metaparam"), "variance")

ANALYSIS_PART = f"{RESULTS}/analyses/{{metric}}/{{analysis}}/{{table}}.csv"


rule analysis:
    input:
        evaluation=f"{RESULTS}/evaluation.parquet",
        runs=f"{RESULTS}/inputs/runs.parquet",
        bins=f"{RESULTS}/tables/property_bins.csv",
        # The metaparam analysis ranks facets by the variance job's components.
        components=lambda w: (
            f"{RESULTS}/analyses/{w.metric}/variance/variance_components.csv"
            if w.analysis == "metaparam"
            else []
        ),
    output:
        **{table: ANALYSIS_PART.replace("{table}", table) for table in TABLES},
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
        mem_mb=4000,
        runtime=60,
    script:
        "../../scripts/analysis.py"


rule collect_tables:
    input:
        parts=expand(
            ANALYSIS_PART,
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
        mem_mb=2000,
        runtime=10,
    script:
        "../../scripts/collect_tables.py"
