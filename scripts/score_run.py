"""Snakemake script: score one run's hypotheses against the references, per segment: one file
per metric its outputs name (``scores/<run>/<metric>.parquet``)."""

import logging
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

from infrepro.core.vocabulary import RUN, SEGMENT
from infrepro.io import read_hypotheses, reference_columns
from infrepro.metrics import score_segments
from infrepro.metrics.kept_tokens import kept_tokens
from infrepro.plumbing.atomic import write_parquet
from infrepro.workflow.jobs import run_rule_script
from infrepro.workflow.outputs import TOKEN_STORE


def main(smk) -> None:
    # Only the ids and references: the sources (~700 words each in summarization) are not
    # needed here, and every run's job would otherwise read them again.
    columns = reference_columns(pq.read_schema(smk.input.testset).names)
    testset = pd.read_parquet(smk.input.testset, columns=[SEGMENT, *columns])
    segment_ids = list(testset[SEGMENT])
    hypotheses = read_hypotheses(smk.input.hypotheses, segment_ids)
    references = testset[columns].to_numpy().tolist()
    # "fast" in the config: the compiled scorers, or the reference packages for a small job while
    # they are not compiled yet ("auto"; same scores, no first-run compile stall)
    fast = smk.params.implementation == "fast"
    outputs = {Path(path).stem: path for path in smk.output.scores}  # metric -> its file
    metrics = list(outputs)
    with kept_tokens(TOKEN_STORE, metrics):  # ROUGE's stems of earlier runs' words
        scores = score_segments(
            hypotheses,
            references,
            metrics,
            implementation="auto" if fast else "reference",
            threads=smk.threads,
        )
    scores.insert(0, SEGMENT, segment_ids)
    scores.insert(0, RUN, smk.wildcards.run_id)
    logging.info("scored %d segments of run %s", len(scores), smk.wildcards.run_id)
    for metric, path in outputs.items():
        write_parquet(scores[[RUN, SEGMENT, metric]], path)


if __name__ == "__main__":
    run_rule_script(main, snakemake)  # noqa: F821
