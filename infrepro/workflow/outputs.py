"""What a configuration produces under ``results/``, and removing what an earlier one produced.

The workflow lists every file its configuration produces (``workflow/rules/outputs.smk``). Files
that an earlier configuration produced and this one does not (the analyses and paper tables of
a metric no longer configured, the scores of a run no longer in the runs sheet) would otherwise
stay beside the new ones, unmarked, in the folder users paste from. The ``prune_outputs`` job
removes them and lists them in ``results/tables/outputs.csv``, which the report shows.

Only files that the previous ``prune_outputs`` job recorded as produced (``results/.outputs``)
and that infrepro writes (:func:`is_owned`: its own folders, names and extensions under
``results/``) are candidates: a file of the current configuration, a user's own file (a note, a
figure, even one named like a paper table) or anything outside ``results/`` is never removed.
Results made before the record existed are not pruned (nothing says which files were made).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from infrepro.core.registry import ANALYSES
from infrepro.core.vocabulary import PRODUCED, REMOVED, TABLE_SPECS, file_stem
from infrepro.plumbing.atomic import write_text

RESULTS = "results"
RECORD = ".outputs"  # results/.outputs: the files the last configuration produced, one a line
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


UNIT_STORES = ".snakemake/infrepro/units"  # workflow state beside Snakemake's, not a result


def unit_store(metric_stem: str, analysis: str) -> Path:
    """Where an analysis job keeps its units for its next run (infrepro.analyses.common.units): in
    the
    experiment's ``.snakemake/`` folder, with Snakemake's own state: not an output, so never
    listed, pruned or pasted from; moved with the folder, and rebuilt when lost."""
    return Path(UNIT_STORES) / metric_stem / f"{analysis}.json"


FIGURE_STORE = ".snakemake/infrepro/figures.json"  # the report's figures of its last render
EXPERIMENT_STORE = ".snakemake/infrepro/experiment.json"  # the last parse's checked inputs
DIGEST_STORE = ".snakemake/infrepro/digests.json"  # the input files' SHA-256, by file state
TOKEN_STORE = ".snakemake/infrepro/tokens.json"  # ROUGE's stems of the words scored before


def is_owned(relative: str | PurePosixPath) -> bool:
    """True for a path (relative to ``results/``) that infrepro writes: a fixed name, a table of
    ``tables/``, a run's ``scores/<run>/<metric>.parquet`` (or, as written before,
    ``scores/<run>.parquet``), a paper table ``paper/<stem>.tex|md`` or an
    analysis part ``analyses/<stem>/<analysis>/<table>.csv`` of a registered analysis."""
    path = PurePosixPath(relative)
    parts = path.parts
    if path.name.startswith("."):  # an atomic write's temporary file, a user's hidden file
        return False
    if path.as_posix() in FIXED_FILES:
        return True
    if len(parts) == 2 and parts[0] == "tables":
        return path.suffix == ".csv" and path.stem in TABLE_SPECS
    if len(parts) in (2, 3) and parts[0] == "scores":  # per run and metric (earlier: per run)
        return path.suffix == ".parquet"
    if len(parts) == 2 and parts[0] == "paper":
        return path.suffix in PAPER_SUFFIXES and file_stem(path.stem) == path.stem
    if len(parts) == 4 and parts[0] == "analyses" and path.suffix == ".csv":
        spec = ANALYSES.get(parts[2])
        return spec is not None and path.stem in spec.tables and file_stem(parts[1]) == parts[1]
    return False


def read_record(results: str | Path = RESULTS) -> list[str]:
    """The files the last ``prune_outputs`` job listed as produced (none before the first)."""
    path = Path(results) / RECORD
    return path.read_text(encoding="utf-8").splitlines() if path.is_file() else []


def stale_outputs(produced: Iterable[str], results: str | Path = RESULTS) -> list[str]:
    """Files an earlier configuration produced (its record, ``results/.outputs``) that this one
    does not (``produced``: paths as the rules name them, ``results/...``) and that still exist,
    sorted; only files under ``results`` that infrepro writes (:func:`is_owned`) qualify, so a
    user's own file is never a candidate even if the record were edited to name it."""
    root = PurePosixPath(Path(results).as_posix())
    keep = {PurePosixPath(os.path.normpath(p)).as_posix() for p in produced}
    stale = set()
    for listed in read_record(results):
        path = PurePosixPath(os.path.normpath(listed))
        if path.as_posix() in keep or ".." in path.parts or not path.is_relative_to(root):
            continue
        if is_owned(path.relative_to(root)) and Path(path).is_file():
            stale.add(path.as_posix())
    return sorted(stale)


def remove_stale(produced: Iterable[str], results: str | Path = RESULTS) -> list[str]:
    """Remove :func:`stale_outputs` and the folders of ``results/analyses`` they leave empty,
    then record ``produced`` for the next configuration (atomically); return the removed
    files."""
    produced = sorted(set(produced))
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
    Path(results).mkdir(parents=True, exist_ok=True)
    write_text(Path(results) / RECORD, "".join(f"{p}\n" for p in produced))
    return stale


def outputs_rows(produced: Iterable[str], removed: Iterable[str]) -> list[dict[str, str]]:
    """The rows of ``outputs.csv``: each produced file, then each removed one, sorted."""
    return [{"path": p, "status": PRODUCED} for p in sorted(set(produced))] + [
        {"path": p, "status": REMOVED} for p in sorted(set(removed))
    ]
