"""The workflow's runtime: how a rule's job runs its script (`jobs`: worker pool, logs) and what
it asks a cluster for (`resources`: SLURM memory and time from the data's size).

Only the Snakemake rules and scripts import this package; nothing else in infrepro does. It
imports nothing at import time (the workflow parses its rule files on every invocation).
"""
