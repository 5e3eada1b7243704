"""How an input file is named in the workflow: by where it lies in the experiment folder.

Snakemake compares a job's input paths and parameters with the ones it recorded, so an input
named by its absolute path reruns every job that reads it when a finished experiment is moved
or cloned elsewhere. Every input is therefore named once, by :func:`portable_path`: relative to
the experiment folder (Snakemake's working directory) when it lies inside it, absolute only when
it lies outside (then moving the experiment folder leaves it where it was).
"""

from __future__ import annotations

import os
from pathlib import Path


def _inside(path: str, root: str) -> str | None:
    """``path`` relative to ``root`` in POSIX form, or None when it lies outside ``root``."""
    relative = os.path.relpath(path, root)
    if relative == os.pardir or relative.startswith(os.pardir + os.sep):
        return None
    return Path(relative).as_posix()


def portable_path(path: str | Path, root: str | Path | None = None) -> str:
    """``path`` relative to ``root`` (default: the working directory) if it lies inside it, else
    absolute; POSIX separators, no ``.`` or ``..`` parts.

    The lexical form (``config/../hyps/a.txt`` -> ``hyps/a.txt``) is kept when it names the same
    file as ``path``; a ``..`` after a symbolic link (where the lexical form would name another
    file) or a root reached through a link falls back to the resolved path. A path that does not
    exist keeps its lexical form (the caller reports it as missing).
    """
    base = os.path.abspath(root if root is not None else os.curdir)
    lexical = os.path.abspath(path)
    dotdot = os.pardir in Path(path).parts  # without '..' the lexical form is the same file
    if dotdot and os.path.exists(path):
        if not (os.path.exists(lexical) and os.path.samefile(lexical, path)):
            lexical = str(Path(path).resolve())  # a '..' after a symlink: only the OS knows
    inside = _inside(lexical, base)
    if inside is None and os.path.exists(lexical):
        inside = _inside(str(Path(lexical).resolve()), str(Path(base).resolve()))
    return inside if inside is not None else Path(lexical).as_posix()
