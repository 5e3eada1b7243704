# Validated, normalised copies of the test set and the runs sheet or pattern's runs (raw mode).


rule prepare_testset:
    input:
        testset=config.get("testset", []),
    output:
        testset=f"{RESULTS}/inputs/testset.parquet",
    params:
        script=rule_script("prepare_testset.py"),
        content=content_of(config["testset"]),
    log:
        "logs/prepare_testset.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    run:
        run_script(locals())


# Runs from a pattern: the runs the parse found (the derived runs sheet) are the job's parameter,
# written as the runs table and as results/tables/runs.csv.
rule prepare_runs:
    input:
        runs=[] if RUNS_FROM_PATTERN else config.get("runs", []),
    output:
        runs=f"{RESULTS}/inputs/runs.parquet",
        **({"table": RUNS_CSV} if RUNS_FROM_PATTERN else {}),
    params:
        script=rule_script("prepare_runs.py"),
        content=content_of(*([] if RUNS_FROM_PATTERN else [config["runs"]])),
        **({"sheet": verbatim(EXPERIMENT.derived_sheet)} if RUNS_FROM_PATTERN else {}),
        look_column=config.get("look_column"),
        looks=verbatim(RUN_LOOKS),
    log:
        "logs/prepare_runs.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    run:
        run_script(locals())
