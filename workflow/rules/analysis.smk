# The statistical analyses (docs/method.md §4, §4b): one job per metric and analysis, then tidy
# tables. Each analysis has its own rule, derived from its registry entry (infrepro/core/registry.py):
# it declares only the tables the analysis writes, takes as inputs the tables it needs from other
# analyses and depends only on the options it reads.
from infrepro.core.registry import ANALYSES, rule_options, with_needs
from infrepro.workflow.resources import (
    analysis_priority,
    analysis_resources,
    collect_mem_mb,
    collect_runtime,
    last_analysis,
)
from infrepro.core.vocabulary import TABLES, file_stem

ANALYSIS_OPTIONS = config["analyses"]  # the schema sets every default
ANALYSES_TO_RUN = with_needs(ANALYSIS_OPTIONS["run"])  # the chosen ones and what they need
# the rule whose jobs start last: the workers they leave idle load the report meanwhile
REPORT_AHEAD = {f"analysis_{last_analysis(ANALYSES_TO_RUN)}": ["report.py"]}

# {metric}: the metric's file-name stem (vocabulary.file_stem), never its name as typed
ANALYSIS_PART = f"{RESULTS}/analyses/{{metric}}/{{analysis}}/{{table}}.csv"
METRIC_OF_STEM = EXPERIMENT.metric_of_stem


for _analysis in ANALYSES:

    rule:
        name:
            f"analysis_{_analysis}"
        input:
            evaluation=f"{RESULTS}/evaluation.parquet",
            runs=f"{RESULTS}/inputs/runs.parquet",
            bins=f"{RESULTS}/tables/property_bins.csv",
            # the tables it needs from other analyses' jobs of the same metric
            **{
                need.argument: ANALYSIS_PART.replace("{analysis}", need.analysis).replace(
                    "{table}", need.table
                )
                for need in ANALYSES[_analysis].needs
            },
        output:
            **{
                table: ANALYSIS_PART.replace("{analysis}", _analysis).replace("{table}", table)
                for table in ANALYSES[_analysis].tables
            },
        params:
            script=rule_script("analysis.py"),
            analysis=_analysis,
            metric=lambda wildcards: METRIC_OF_STEM[wildcards.metric],
            better=lambda wildcards: EXPERIMENT.better[METRIC_OF_STEM[wildcards.metric]],
            baseline=verbatim(EXPERIMENT.baseline),
            facets=verbatim(EXPERIMENT.facets),
            properties=verbatim(EXPERIMENT.properties),
            options=rule_options(_analysis, ANALYSIS_OPTIONS, config["report"]),
        wildcard_constraints:
            metric="|".join(map(re.escape, METRIC_OF_STEM)),
        log:
            f"logs/analysis/{{metric}}/{_analysis}.log",
        threads: 1
        # longest chains of CPU time first (variance, whose table metaparam needs, then the
        # long analyses), the short jobs last: infrepro/workflow/resources.py
        priority: analysis_priority(_analysis)
        resources:
            # from the rows of the evaluation table (infrepro/workflow/resources.py), at submission
            mem_mb=analysis_resources(_analysis)[0],
            runtime=analysis_resources(_analysis)[1],
        run:
            run_script(locals(), worker=True, preload=REPORT_AHEAD.get(rule, []))


rule collect_tables:
    input:
        parts=[  # metric by metric, then analysis: the row order of the tables
            ANALYSIS_PART.format(metric=file_stem(metric), analysis=analysis, table=table)
            for metric in EXPERIMENT.metrics
            for analysis in ANALYSES_TO_RUN
            for table in ANALYSES[analysis].tables
        ],
    output:
        **{table: f"{RESULTS}/tables/{table}.csv" for table in TABLES},
    params:
        script=rule_script("collect_tables.py"),
    log:
        "logs/collect_tables.log",
    threads: 1
    resources:
        mem_mb=collect_mem_mb,
        runtime=collect_runtime,
    run:
        # on a thread of Snakemake's process; the idle workers load the report meanwhile
        run_script(locals(), preload=["report.py"])
