# Data properties of every test input (raw mode; in scores mode they come with the scores).


rule properties:
    input:
        testset=f"{RESULTS}/inputs/testset.parquet",
        rarity_corpus=PROPERTY_OPTIONS.get("rarity_corpus") or [],
    output:
        properties=f"{RESULTS}/properties.parquet",
        bins=f"{RESULTS}/tables/property_bins.csv",
    params:
        script=rule_script("properties.py"),
        properties=verbatim(EXPERIMENT.properties),
        options=PROPERTY_OPTIONS,
        content=content_of(*filter(None, [PROPERTY_OPTIONS.get("rarity_corpus")])),
    log:
        "logs/properties.log",
    threads: 1  # textstat is single-threaded; the job runs beside the scoring jobs (in a worker)
    # first among the jobs ready at the start: the one long job runs beside the scoring jobs
    # instead of after them, where it would hold up `assemble` with the other core idle
    priority: 10
    resources:
        mem_mb=2000,
        runtime=30,
    run:
        run_script(locals(), worker=True)
