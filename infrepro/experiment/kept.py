"""The validated experiment kept from one parse to the next (docs/architecture.md, "What a rerun
keeps").

Snakemake parses the Snakefile on every invocation, a run with nothing to do included, and
common.smk checks every input before any job runs: the test set, the runs sheet and every
hypotheses file (raw mode) or the whole scores file. That check's Experiment is kept in
``.snakemake/infrepro/experiment.json`` (a :class:`~infrepro.plumbing.kept.KeptStore` of the
package's
source) under the config it was checked for, with the state of every input file it read
(:func:`file_state`: size, modification and change times (ns) and inode; the change time moves
with any write, and no tool sets it back as ``touch -d`` or ``cp -p`` set a modification time).
A parse that finds the same config and every file as it was has the Experiment back without
reading the inputs; any difference, a missing or unreadable file or store, runs the full check,
which names the problem if there is one. An entry whose check skipped the hypotheses files
serves only a parse that skips them too (Snakemake's job processes). A full check reads again
only the hypotheses files that are not as a kept check found them (with the same segment ids),
and the test set only when it is not as a kept check found it or the config asks other checks
of its property columns (the kept check holds its columns and segment ids): after new seeds,
their files and the runs sheet, not every run's, nor the test set. Runs from a pattern
(infrepro.io.pattern) are found on every parse, once: the entry serves only a parse that finds
the same files (a new file is a new run).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import platform
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from infrepro.experiment.record import Experiment
from infrepro.io.pattern import find_runs, runs_pattern
from infrepro.plumbing.files import file_states
from infrepro.plumbing.kept import KeptStore
from infrepro.plumbing.sources import library_versions, source_digest

PASSED = ("hypotheses", "testsets")  # the kinds of inputs whose passed checks are kept
READER_LIBRARIES = ("pandas", "numpy", "pyarrow")  # what the checks read the input files with


class ExperimentStore(KeptStore[dict[str, Any]]):
    """The last check's entry, under its config's key: ``hypotheses_checked``, ``files`` (each
    input's path and state) and ``experiment`` (Experiment.to_json)."""

    @classmethod
    def version(cls) -> str:
        """The package's source, Python and the libraries the checks read the inputs with (not
        the BLAS: a check computes nothing with it; read from their metadata, not imported)."""
        libraries = library_versions(*READER_LIBRARIES)
        return "|".join([source_digest().hex(), platform.python_version(), libraries])


def kept_experiment(
    config: Mapping[str, Any], *, check_hypotheses: bool, path: str | Path
) -> Experiment:
    """The Experiment of ``config`` from the store at ``path`` when nothing it was checked
    from changed, else from the full check (``load_experiment``), then kept there."""
    pattern = runs_pattern(config)
    matches = None if pattern is None else find_runs(pattern)
    matched = None if matches is None else [m.path for m in matches]
    store = ExperimentStore.open(path)
    key = config_key(config)
    entry = store.previous.get(key)
    if (
        isinstance(entry, dict)
        and (entry.get("hypotheses_checked") or not check_hypotheses)
        and entry.get("matched") == matched
        and entry.get("files") is not None
        and entry["files"] == file_states([name for name, *_ in entry["files"]])
    ):
        try:
            return Experiment.from_json(entry["experiment"])
        except (KeyError, TypeError, ValueError):
            pass  # another layout: check again
    from infrepro.experiment.load import CheckedInputs, load_experiment

    checked = CheckedInputs(**{f"{kind}_before": _passed(store, kind) for kind in PASSED})
    experiment = load_experiment(
        config, check_hypotheses=check_hypotheses, checked=checked, matches=matches
    )
    store.current[key] = {
        "hypotheses_checked": check_hypotheses,
        "matched": matched,
        "files": file_states(experiment.inputs),
        "experiment": experiment.to_json(),
        **{kind: getattr(checked, kind) for kind in PASSED},
    }
    with contextlib.suppress(OSError):  # read-only folder: every parse checks, as before
        store.save()
    return experiment


def _passed(store: ExperimentStore, kind: str) -> dict[str, Any]:
    """The inputs of a ``kind`` (PASSED) the kept checks passed, by path."""
    passed: dict[str, Any] = {}
    for entry in store.previous.values():
        if isinstance(entry, dict) and isinstance(entry.get(kind), dict):
            passed.update(entry[kind])
    return passed


def config_key(config: Mapping[str, Any]) -> str:
    """A digest of the config as JSON, in its order (as the check reads it)."""
    return hashlib.blake2b(json.dumps(config, default=repr).encode(), digest_size=16).hexdigest()
