"""Snakemake script: assemble the evaluation table from per-run scores and properties."""

import pandas as pd

from infrepro.experiment import assemble_evaluation, run_scores
from infrepro.plumbing.atomic import write_parquet
from infrepro.workflow.jobs import run_rule_script


def main(smk) -> None:
    table = assemble_evaluation(
        pd.read_parquet(smk.input.runs),
        run_scores([pd.read_parquet(path) for path in smk.input.scores]),  # a file per metric
        pd.read_parquet(smk.input.properties),
        facets=smk.params.facets,
        metrics=smk.params.metrics,
    )
    write_parquet(table, smk.output.evaluation)


if __name__ == "__main__":
    run_rule_script(main, snakemake)  # noqa: F821
