# What this configuration produces under results/ (each rule's outputs, listed once here), and the
# job that removes what an earlier configuration produced and this one does not
# (infrepro/workflow/outputs.py): results/tables/outputs.csv lists both, and the report shows it.
from infrepro.vocabulary import OUTPUTS_TABLE, REPORT_TABLES

OUTPUTS_CSV = f"{RESULTS}/tables/{OUTPUTS_TABLE}.csv"


def produced_outputs():
    """Every file the jobs of `rule all` write under results/, sorted."""
    if RAW_MODE:
        files = [
            f"{RESULTS}/inputs/testset.parquet",
            f"{RESULTS}/properties.parquet",
            *(f"{RESULTS}/scores/{run}.parquet" for run in EXPERIMENT.run_ids),
        ]
    else:
        files = []
    files += [
        f"{RESULTS}/inputs/runs.parquet",
        f"{RESULTS}/evaluation.parquet",
        *rules.collect_tables.input.parts,
        *(f"{RESULTS}/tables/{name}.csv" for name in REPORT_TABLES),
        f"{RESULTS}/report.html",
        *paper_outputs(),
    ]
    return sorted(set(files))


rule prune_outputs:
    output:
        outputs=OUTPUTS_CSV,
    params:
        script=rule_script("prune_outputs.py"),
        produced=verbatim(produced_outputs()),
    log:
        "logs/prune_outputs.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    run:
        run_script(locals())
