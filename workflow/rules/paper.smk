# Paste-ready decision tables (docs/method.md §4c): results/paper/<metric's file stem>.tex (booktabs) and
# .md from results/tables/summary.csv and decisions.csv.
from infrepro.core.registry import SUMMARY
from infrepro.core.vocabulary import file_stem


rule paper_tables:
    input:
        summary=f"{RESULTS}/tables/{SUMMARY}.csv",
        decisions=f"{RESULTS}/tables/decisions.csv",
    output:
        tex=[f"{RESULTS}/paper/{file_stem(m)}.tex" for m in EXPERIMENT.metrics],
        md=[f"{RESULTS}/paper/{file_stem(m)}.md" for m in EXPERIMENT.metrics],
    params:
        script=rule_script("paper_tables.py"),
        metrics=verbatim(EXPERIMENT.metrics),
        better=EXPERIMENT.better,
        alpha=config["report"]["alpha"],
        baseline=verbatim(EXPERIMENT.baseline),
        units=verbatim(EXPERIMENT.units),
        family=config["analyses"]["comparisons"],
    log:
        "logs/paper_tables.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    run:
        run_script(locals())
