"""The workflow's runtime: how a rule's job runs its script (`jobs`: worker pool, logs), what it
asks a cluster for (`resources`: SLURM memory and time from the data's size), and every use of
Snakemake beyond its documented API (`snakemake_door`: open only for a tested Snakemake).

Only the Snakemake rules and scripts import this package; nothing else in infrepro does. It
imports nothing at import time (the workflow parses its rule files on every invocation).
"""


def verbatim(value: object):
    """A rule parameter Snakemake passes on as is. Snakemake fills wildcards into a parameter
    that is a string or a list of strings, so a user's name holding braces (a metric
    ``comet{22}``, a system ``{a}``) would be read as a wildcard: user values are data."""
    return lambda wildcards: value
