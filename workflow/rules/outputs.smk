# The job that removes what an earlier configuration produced under results/ and this one does not
# (infrepro/workflow/outputs.py; what this one produces: produced_outputs in common.smk):
# results/tables/outputs.csv lists both, and the report shows it.
from infrepro.core.vocabulary import OUTPUTS_TABLE

OUTPUTS_CSV = f"{RESULTS}/tables/{OUTPUTS_TABLE}.csv"


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
