# Validated, normalised copies of the test set and the runs sheet (raw mode).


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


rule prepare_runs:
    input:
        runs=config.get("runs", []),
    output:
        runs=f"{RESULTS}/inputs/runs.parquet",
    params:
        script=rule_script("prepare_runs.py"),
        content=content_of(config["runs"]),
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
