# Paste-ready decision tables (docs/method.md §4c): results/paper/<metric>.tex (booktabs) and
# .md from results/tables/summary.csv.


def paper_outputs():
    """The paper tables, when the summary analysis runs."""
    if "summary" not in ANALYSES_TO_RUN:
        return []
    return [f"{RESULTS}/paper/{m}.{ext}" for m in EXPERIMENT.metrics for ext in ("tex", "md")]


rule paper_tables:
    input:
        summary=f"{RESULTS}/tables/summary.csv",
    output:
        tex=[f"{RESULTS}/paper/{m}.tex" for m in EXPERIMENT.metrics],
        md=[f"{RESULTS}/paper/{m}.md" for m in EXPERIMENT.metrics],
    params:
        metrics=EXPERIMENT.metrics,
        better=EXPERIMENT.better,
        alpha=config["report"]["alpha"],
    log:
        "logs/paper_tables.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    run:
        run_job("paper_tables.py", input, output, params, wildcards, threads, resources, log, rule)
