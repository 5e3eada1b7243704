"""Snakemake script: run one analysis of one metric and write its tables."""

import logging

import pandas as pd

from infrepro.analyses import load_metric_data, read_evaluation, run_analysis
from infrepro.analyses.common.units import UnitStore
from infrepro.core.registry import analysis_spec
from infrepro.io.results import read_result_table
from infrepro.plumbing.atomic import write_csv
from infrepro.workflow.jobs import run_rule_script
from infrepro.workflow.outputs import unit_store


def main(smk) -> None:
    evaluation = read_evaluation(
        smk.input.evaluation,
        metric=smk.params.metric,
        facets=list(smk.params.facets),
        properties=list(smk.params.properties),
    )
    data = load_metric_data(
        evaluation,
        pd.read_parquet(smk.input.runs),
        read_result_table("property_bins", smk.input.bins),
        metric=smk.params.metric,
        better=smk.params.better,
        baseline=smk.params.baseline,
        facets=list(smk.params.facets),
        properties=list(smk.params.properties),
        options=smk.params.options,
        units=UnitStore.open(unit_store(smk.wildcards.metric, smk.params.analysis)),
    )
    needed = {  # the tables this analysis needs from other analyses' jobs (the registry's needs)
        need.argument: read_result_table(need.table, smk.input[need.argument])
        for need in analysis_spec(smk.params.analysis).needs
    }
    tables = run_analysis(smk.params.analysis, data, needed)
    for name in smk.output.keys():
        write_csv(tables[name], smk.output[name])
    data.units.save()  # after the tables: a failed job keeps the previous run's units
    units = data.units
    if units.current:
        logging.info("units: %d of %d from the last run", units.reused, len(units.current))


if __name__ == "__main__":
    run_rule_script(main, snakemake)  # noqa: F821
