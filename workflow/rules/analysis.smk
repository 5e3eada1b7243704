# The statistical analyses (docs/method.md §4, §4b): one job per metric and analysis, then tidy
# tables. Each analysis has its own rule, declaring only the tables it writes and depending only
# on the options it reads (vocabulary.ANALYSIS_TABLES, ANALYSIS_READS).
from infrepro.resources import analysis_resources, collect_mem_mb, collect_runtime
from infrepro.vocabulary import ANALYSES, ANALYSIS_READS, ANALYSIS_TABLES, TABLES

ANALYSIS_OPTIONS = config["analyses"]  # the schema sets every default
ANALYSES_TO_RUN = [a for a in ANALYSES if a in ANALYSIS_OPTIONS["run"]]
if "metaparam" in ANALYSES_TO_RUN and "variance" not in ANALYSES_TO_RUN:
    ANALYSES_TO_RUN.insert(ANALYSES_TO_RUN.index("metaparam"), "variance")

ANALYSIS_PART = f"{RESULTS}/analyses/{{metric}}/{{analysis}}/{{table}}.csv"


for _analysis in ANALYSES:

    rule:
        name:
            f"analysis_{_analysis}"
        input:
            evaluation=f"{RESULTS}/evaluation.parquet",
            runs=f"{RESULTS}/inputs/runs.parquet",
            bins=f"{RESULTS}/tables/property_bins.csv",
            # metaparam ranks facets by the variance job's components
            **(
                {
                    "components": ANALYSIS_PART.replace("{analysis}", "variance").replace(
                        "{table}", "variance_components"
                    )
                }
                if _analysis == "metaparam"
                else {}
            ),
        output:
            **{
                table: ANALYSIS_PART.replace("{analysis}", _analysis).replace("{table}", table)
                for table in ANALYSIS_TABLES[_analysis]
            },
        params:
            analysis=_analysis,
            better=lambda wildcards: EXPERIMENT.better[wildcards.metric],
            baseline=EXPERIMENT.baseline,
            facets=EXPERIMENT.facets,
            properties=EXPERIMENT.properties,
            options={k: ANALYSIS_OPTIONS[k] for k in ANALYSIS_READS[_analysis] if k in ANALYSIS_OPTIONS}
            | ({"alpha": config["report"]["alpha"]} if _analysis == "planning" else {}),
        wildcard_constraints:
            metric="|".join(map(re.escape, EXPERIMENT.metrics)),
        log:
            f"logs/analysis/{{metric}}/{_analysis}.log",
        threads: 1
        resources:
            # from the rows of the evaluation table (infrepro/resources.py), at submission
            mem_mb=analysis_resources(_analysis)[0],
            runtime=analysis_resources(_analysis)[1],
        run:
            run_job(
                "analysis.py",
                *(input, output, params, wildcards, threads, resources, log, rule),
                worker=True,
            )


rule collect_tables:
    input:
        parts=[  # metric by metric, then analysis: the row order of the tables
            ANALYSIS_PART.format(metric=metric, analysis=analysis, table=table)
            for metric in EXPERIMENT.metrics
            for analysis in ANALYSES_TO_RUN
            for table in ANALYSIS_TABLES[analysis]
        ],
    output:
        **{table: f"{RESULTS}/tables/{table}.csv" for table in TABLES},
    log:
        "logs/collect_tables.log",
    threads: 1
    resources:
        mem_mb=collect_mem_mb,
        runtime=collect_runtime,
    run:
        run_job("collect_tables.py", input, output, params, wildcards, threads, resources, log, rule)
