# Score one run: one job per run, so new runs are scored without touching old ones.


rule score_run:
    input:
        hypotheses=hypotheses_of,
        testset=f"{RESULTS}/inputs/testset.parquet",
    output:
        scores=f"{RESULTS}/scores/{{run_id}}.parquet",
    params:
        metrics=EXPERIMENT.metrics,
        implementation=config["scoring"]["implementation"],
    log:
        "logs/score/{run_id}.log",
    threads: config["scoring"]["threads"]
    resources:
        mem_mb=2000,
        runtime=60,
    group:
        "scoring"
    script:
        "../../scripts/score_run.py"
