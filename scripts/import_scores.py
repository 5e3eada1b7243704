"""Snakemake script: scores mode, read per-segment scores into the evaluation table."""

from infrepro.experiment import import_scores
from infrepro.io import ScoresColumns
from infrepro.io.runs import with_recorded_looks
from infrepro.plumbing.atomic import write_csv, write_parquet
from infrepro.workflow.jobs import run_rule_script


def main(smk) -> None:
    options = smk.params.options
    evaluation, runs, bins = import_scores(
        smk.input.scores,
        ScoresColumns.from_config(smk.params.columns),
        n_bins=options["n_bins"],
        cuts=options["bins"],
        labels=options["bin_labels"],
        categorical=options["categorical"],
        scale=smk.params.scale,
    )
    write_parquet(evaluation, smk.output.evaluation)
    write_parquet(with_recorded_looks(runs, smk.params.looks), smk.output.runs)
    write_csv(bins, smk.output.bins)


if __name__ == "__main__":
    run_rule_script(main, snakemake)  # noqa: F821
