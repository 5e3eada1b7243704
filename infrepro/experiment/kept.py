"""The validated experiment kept from one parse to the next (docs/architecture.md, "What a rerun
keeps").

Snakemake parses the Snakefile on every invocation, a run with nothing to do included, and
common.smk checks every input before any job runs: the test set, the runs sheet and every
hypotheses file (raw mode) or the whole scores file. That check's Experiment is kept in
``.snakemake/infrepro/experiment.json`` with what it read: the config (defaults filled in), the
package's source, and each input file's path, size, modification and change times (ns) and
inode (the change time moves with any write, and no tool sets it back as ``touch -d`` or
``cp -p`` set a modification time). A parse that finds all of them as they were
has the Experiment back without reading the inputs (or loading pandas to read them); any
difference, a missing or unreadable file or store, runs the full check, which names the
problem if there is one. An entry whose check skipped the hypotheses files serves only a parse
that skips them too (Snakemake's job processes).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from infrepro.io.atomic import write_text
from infrepro.sources import source_digest

from .record import Experiment

FORMAT = 1  # the store's layout


def kept_experiment(
    config: Mapping[str, Any], *, check_hypotheses: bool, path: str | Path
) -> Experiment:
    """The Experiment of ``config`` from the store at ``path`` when nothing it was checked
    from changed, else from the full check (``load_experiment``), then kept there."""
    key = config_key(config)
    saved = _read(Path(path))
    if (
        saved is not None
        and saved.get("key") == key
        and (saved.get("hypotheses_checked") or not check_hypotheses)
        and saved.get("files") is not None
        and saved["files"] == file_states(saved.get("experiment", {}).get("inputs", []))
    ):
        try:
            return Experiment.from_json(saved["experiment"])
        except (KeyError, TypeError, ValueError):
            pass  # another layout: check again
    from .load import load_experiment

    experiment = load_experiment(config, check_hypotheses=check_hypotheses)
    entry = {
        "format": FORMAT,
        "key": key,
        "hypotheses_checked": check_hypotheses,
        "files": file_states(experiment.inputs),
        "experiment": experiment.to_json(),
    }
    try:
        write_text(path, json.dumps(entry) + "\n")  # in order: a record equal to the check's
    except OSError:
        pass  # a read-only experiment folder: every parse checks the inputs, as before
    return experiment


def config_key(config: Mapping[str, Any]) -> str:
    """The config (as JSON), the package's source and the Python version, as one digest."""
    digest = hashlib.blake2b(source_digest(), digest_size=16)
    digest.update(platform.python_version().encode())
    digest.update(json.dumps(config, default=repr).encode())  # in order, as the check reads it
    return digest.hexdigest()


def file_states(paths: list[str]) -> list[list[object]] | None:
    """Each file's path and :func:`file_state`; None when one cannot be read."""
    states = [file_state(name) for name in paths]
    if any(state is None for state in states):
        return None
    return [[name, *state] for name, state in zip(paths, states, strict=True)]  # type: ignore[misc]


def file_state(name: str | Path) -> list[int] | None:
    """A file's size, modification and change times (ns) and inode, and its path's own inode
    and change time (a symbolic link repointed changes them); None when it cannot be read."""
    try:
        link, target = os.lstat(name), os.stat(name)
    except (OSError, TypeError, ValueError):
        return None
    return [
        target.st_size,
        target.st_mtime_ns,
        target.st_ctime_ns,  # any write changes it, and no tool can set it back
        target.st_ino,
        link.st_ino,
        link.st_ctime_ns,
    ]


def _read(path: Path) -> dict[str, Any] | None:
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(saved, dict) or saved.get("format") != FORMAT:
        return None
    return saved
