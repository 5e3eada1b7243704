"""What a configuration produces under ``results/``, and removing what an earlier one produced.

The workflow lists every file its configuration produces (``workflow/rules/outputs.smk``). Files
that an earlier configuration produced and this one does not (the analyses and paper tables of
a metric no longer configured, the scores of a run no longer in the runs sheet) would otherwise
stay beside the new ones, unmarked, in the folder users paste from. The ``prune_outputs`` job
removes them and lists them in ``results/tables/outputs.csv``, which the report shows.

Only files infrepro itself writes are candidates (:func:`is_owned`: its own folders, names and
extensions under ``results/``); a file of the current configuration, a user's own file (a note,
a figure) or anything outside ``results/`` is never removed.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from infrepro.registry import ANALYSES
from infrepro.vocabulary import PRODUCED, REMOVED, TABLE_SPECS

RESULTS = "results"
# the files of the workflow's fixed names, relative to results/
FIXED_FILES = frozenset(
    {
        "inputs/testset.parquet",
        "inputs/runs.parquet",
        "properties.parquet",
        "evaluation.parquet",
        "report.html",
    }
)
PAPER_SUFFIXES = frozenset({".tex", ".md"})


def is_owned(relative: str | PurePosixPath) -> bool:
    """True for a path (relative to ``results/``) that infrepro writes: a fixed name, a table of
    ``tables/``, a run's ``scores/<run>.parquet``, a paper table ``paper/<stem>.tex|md`` or an
    analysis part ``analyses/<stem>/<analysis>/<table>.csv`` of a registered analysis."""
    path = PurePosixPath(relative)
    parts = path.parts
    if path.name.startswith("."):  # an atomic write's temporary file, a user's hidden file
        return False
    if path.as_posix() in FIXED_FILES:
        return True
    if len(parts) == 2 and parts[0] == "tables":
        return path.suffix == ".csv" and path.stem in TABLE_SPECS
    if len(parts) == 2 and parts[0] == "scores":
        return path.suffix == ".parquet"
    if len(parts) == 2 and parts[0] == "paper":
        return path.suffix in PAPER_SUFFIXES
    if len(parts) == 4 and parts[0] == "analyses" and path.suffix == ".csv":
        spec = ANALYSES.get(parts[2])
        return spec is not None and path.stem in spec.tables
    return False


def stale_outputs(produced: Iterable[str], results: str | Path = RESULTS) -> list[str]:
    """Files under ``results`` that infrepro writes (:func:`is_owned`) and that are not in
    ``produced`` (paths as the rules name them, ``results/...``), sorted; symbolic links to
    folders are not followed."""
    root = Path(results)
    keep = {PurePosixPath(os.path.normpath(p)).as_posix() for p in produced}
    stale = []
    for folder, dirs, files in os.walk(root, followlinks=False):
        dirs.sort()
        for name in files:
            path = Path(folder) / name
            relative = PurePosixPath(path.relative_to(root).as_posix())
            shown = (PurePosixPath(root.as_posix()) / relative).as_posix()
            if is_owned(relative) and shown not in keep:
                stale.append(shown)
    return sorted(stale)


def remove_stale(produced: Iterable[str], results: str | Path = RESULTS) -> list[str]:
    """Remove :func:`stale_outputs` and the folders of ``results/analyses`` they leave empty;
    return the removed files."""
    stale = stale_outputs(produced, results)
    for path in stale:
        Path(path).unlink(missing_ok=True)
    analyses = Path(results) / "analyses"
    for path in sorted({Path(p).parent for p in stale}, key=lambda p: -len(p.parts)):
        for folder in (path, path.parent):
            if folder.is_relative_to(analyses) and folder != analyses:
                try:
                    folder.rmdir()  # only when empty
                except OSError:
                    pass
    return stale


def outputs_rows(produced: Iterable[str], removed: Iterable[str]) -> list[dict[str, str]]:
    """The rows of ``outputs.csv``: each produced file, then each removed one, sorted."""
    return [{"path": p, "status": PRODUCED} for p in sorted(set(produced))] + [
        {"path": p, "status": REMOVED} for p in sorted(set(removed))
    ]
