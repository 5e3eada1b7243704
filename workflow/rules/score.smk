# Score one run: one job per run, so new runs are scored without touching old ones. The job runs
# in Snakemake's own process (a run: directive; infrepro.scripting.run_in_process): scoring one
# run takes a fraction of a second, loading pandas, numba and the compiled kernels two seconds.


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
    run:
        run_job("score_run.py", input, output, params, wildcards, threads, resources, log, rule)
