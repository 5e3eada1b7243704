# Score one run: one job per run, so new runs are scored without touching old ones. The job runs
# in one of the workflow's long-lived worker processes (a run: directive; infrepro.workflow.jobs
# .run_in_worker): scoring the example's run takes a fraction of a second, loading pandas, numba
# and the compiled kernels two seconds; a worker loads them once, and at paper scale the jobs'
# Python work (tokenization) still runs on every core, not on one interpreter's lock.
# One file per metric, each named by it: the job computes the metrics its outputs name and has no
# metric list among its params, so that removing a metric (or reordering them) reruns no job;
# adding one reruns every run's job, which has a file missing.
from infrepro.core.vocabulary import RUN


rule score_run:
    input:
        hypotheses=hypotheses_of,
        testset=f"{RESULTS}/inputs/testset.parquet",
    output:
        # wildcard: the run id; raw-mode metrics are known names, their own file stems
        scores=[f"{RESULTS}/scores/{{{RUN}}}/{metric}.parquet" for metric in EXPERIMENT.metrics],
    params:
        script=rule_script("score_run.py"),
        content=content_of(hypotheses_of),
        implementation=config["scoring"]["implementation"],
    log:
        f"logs/score/{{{RUN}}}.log",
    threads: config["scoring"]["threads"]
    # before the jobs no analysis waits for (report_provenance, prune_outputs), after properties
    priority: 1
    resources:
        mem_mb=2000,
        runtime=60,
    group:
        "scoring"
    run:
        run_script(locals(), worker=True)
