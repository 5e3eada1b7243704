"""Snakemake script: remove the files an earlier configuration produced under results/ and this
one does not, and list what this configuration produces and what was removed (outputs.csv)."""

import logging

import pandas as pd

from infrepro.core.vocabulary import OUTPUTS_TABLE, TABLE_SPECS
from infrepro.plumbing.atomic import write_csv
from infrepro.workflow.jobs import run_rule_script
from infrepro.workflow.outputs import outputs_rows, remove_stale


def main(smk) -> None:
    produced = list(smk.params.produced)
    removed = remove_stale(produced)
    for path in removed:
        logging.getLogger(__name__).info("removed %s: this configuration does not produce it", path)
    columns = list(TABLE_SPECS[OUTPUTS_TABLE].names)
    write_csv(pd.DataFrame(outputs_rows(produced, removed), columns=columns), smk.output.outputs)


if __name__ == "__main__":
    run_rule_script(main, snakemake)  # noqa: F821
