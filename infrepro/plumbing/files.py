"""A file's state: what tells a kept value that its input file changed without reading it
(size, modification and change times and inode; docs/architecture.md, "What a rerun keeps")."""

from __future__ import annotations

import os
from pathlib import Path


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
