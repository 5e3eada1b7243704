"""Checksums of the experiment's input files (``results/tables/inputs.csv``)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from infrepro.core.vocabulary import TABLE_SPECS

if TYPE_CHECKING:  # the workflow's parse reads sha256; pandas loads for the table only
    import pandas as pd

CHUNK = 1 << 20
INPUT_COLUMNS = list(TABLE_SPECS["inputs"].names)


def sha256(path: str | Path) -> str:
    """SHA-256 of a file's bytes, as hex."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def display_path(path: str | Path, root: str | Path) -> str:
    """The path relative to ``root`` (the working directory), so tables do not depend on where
    the experiment lives; POSIX separators."""
    return Path(os.path.relpath(Path(path).resolve(), Path(root).resolve())).as_posix()


def input_checksums(
    paths: Iterable[str | Path], root: str | Path = ".", known: Mapping[str, str] | None = None
) -> pd.DataFrame:
    """One row per distinct input file: path (relative to ``root``), SHA-256, size in bytes.

    ``known``: digests already computed, by :func:`~infrepro.io.paths.portable_path` (the
    workflow's ``content_of`` parameters: every input's SHA-256 from the parse, kept by file
    state), so that the inputs are not read again (a quarter of a gigabyte at paper scale);
    a file it does not name is hashed."""
    import pandas as pd

    from infrepro.io.paths import portable_path

    known = known or {}
    rows = {}
    for path in paths:
        shown = display_path(path, root)
        if shown not in rows:
            size = Path(path).stat().st_size
            digest = known.get(portable_path(path)) or sha256(path)
            rows[shown] = {"path": shown, "sha256": digest, "bytes": size}
    return pd.DataFrame(list(rows.values()), columns=INPUT_COLUMNS)
