"""Atomic output: write to a temporary file beside the target, then rename.

A killed job therefore never leaves a half-written file under the final name that a later run
would trust. The file gets the permissions a plain ``open()`` would give it under the user's umask
(``mkstemp`` alone makes it 0600, unreadable to co-authors on a shared file system).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:  # pandas and pyarrow load where a frame is written, not when the Snakefile is
    import pandas as pd


def _proc_umask() -> int | None:
    """The umask from the ``Umask:`` line of ``/proc/self/status`` (Linux >= 4.7), else None."""
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        return None
    return None


def _umask_at_import() -> int:
    """The umask read once, at import (in the importing thread, before workers start).

    Without a getter, ``os.umask`` must set a value and set it back; doing that from a thread
    while others create files would give them the wrong mode, so it is done once only, here.
    """
    mask = _proc_umask()
    if mask is None:
        mask = os.umask(0o077)
        os.umask(mask)
    return mask


_IMPORT_UMASK = _umask_at_import()


def current_umask() -> int:
    """The process's umask, read without changing it (safe from any thread).

    ``/proc/self/status`` where it has the line; otherwise the value read once at import.
    """
    mask = _proc_umask()
    return _IMPORT_UMASK if mask is None else mask


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path in the target's folder; rename it to ``path`` on success."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        os.chmod(tmp, 0o666 & ~current_umask())
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def atomic_open(path: str | Path, mode: str = "w", **kwargs: Any) -> Iterator[IO[Any]]:
    """Open a temporary file for writing; it replaces ``path`` only when the block succeeds."""
    if "b" not in mode:
        kwargs.setdefault("encoding", "utf-8")
        kwargs.setdefault("newline", "\n")
    with atomic_path(path) as tmp, open(tmp, mode, **kwargs) as handle:
        yield handle


def write_text(path: str | Path, text: str) -> None:
    """Write UTF-8 text atomically."""
    with atomic_open(path) as handle:
        handle.write(text)


def write_csv(frame: pd.DataFrame, path: str | Path) -> None:
    """Write a tidy CSV atomically, with a stable float format so reruns are byte-identical."""
    with atomic_open(path) as handle:
        frame.to_csv(handle, index=False, lineterminator="\n", float_format="%.10g")


def write_parquet(frame: pd.DataFrame, path: str | Path) -> None:
    """Write Parquet atomically, without the index, with content-only (deterministic) metadata."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(frame, preserve_index=False)
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, compression="zstd", write_statistics=True)
