"""Snakemake script: data properties of every test input, with their binned versions."""

import pandas as pd

from infrepro.plumbing.atomic import write_csv, write_parquet
from infrepro.properties import add_bins, compute_properties
from infrepro.workflow.jobs import run_rule_script


def main(smk) -> None:
    options = smk.params.options
    testset = pd.read_parquet(smk.input.testset)
    table, described = compute_properties(
        testset,
        smk.params.properties,
        rarity_corpus=options["rarity_corpus"],
        categorical=options["categorical"],
    )
    table, bins = add_bins(
        table,
        smk.params.properties,
        n_bins=options["n_bins"],
        cuts=options["bins"],
        labels=options["bin_labels"],
    )
    bins.insert(0, "computed_on", described)
    write_parquet(table, smk.output.properties)
    write_csv(bins, smk.output.bins)


if __name__ == "__main__":
    run_rule_script(main, snakemake)  # noqa: F821
