# The evaluation table: one row per (run, segment), read by every analysis.
from infrepro.workflow.resources import assemble_mem_mb, assemble_runtime
from infrepro.core.vocabulary import RUN


if RAW_MODE:

    rule assemble:
        input:
            runs=f"{RESULTS}/inputs/runs.parquet",
            properties=f"{RESULTS}/properties.parquet",
            scores=expand(
                f"{RESULTS}/scores/{{{RUN}}}/{{metric}}.parquet",
                **{RUN: EXPERIMENT.run_ids},
                metric=EXPERIMENT.metrics,
            ),
        output:
            evaluation=f"{RESULTS}/evaluation.parquet",
        params:
            script=rule_script("assemble.py"),
            facets=verbatim(EXPERIMENT.facets),
            metrics=verbatim(EXPERIMENT.metrics),
        log:
            "logs/assemble.log",
        threads: 1
        priority: 1  # the analyses wait for it; report_provenance and prune_outputs do not
        resources:
            # from the rows of the per-run score tables (infrepro/workflow/resources.py)
            mem_mb=assemble_mem_mb,
            runtime=assemble_runtime,
        run:
            # in a worker (warm from scoring): on a thread of Snakemake's process it shared the
            # GIL with Snakemake's bookkeeping of the jobs that had just finished; the other
            # worker loads the analyses meanwhile
            run_script(locals(), worker=True, preload=["analysis.py"])

else:

    rule import_scores:
        input:
            scores=config.get("scores", []),
        output:
            evaluation=f"{RESULTS}/evaluation.parquet",
            runs=f"{RESULTS}/inputs/runs.parquet",
            bins=f"{RESULTS}/tables/property_bins.csv",
        params:
            script=rule_script("import_scores.py"),
            columns=config.get("columns", {}),
            options=PROPERTY_OPTIONS,
            scale=config["scale"],
            looks=verbatim(RUN_LOOKS),
            content=content_of(config["scores"]),
        log:
            "logs/import_scores.log",
        threads: 1
        priority: 1  # the analyses wait for it; report_provenance and prune_outputs do not
        resources:
            mem_mb=4000,
            runtime=30,
        run:
            run_script(locals(), worker=True)
