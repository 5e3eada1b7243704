"""A digest of the package's own source and assets (import-light: the workflow's parse reads it)."""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

SOURCE_SUFFIXES = frozenset({".py", ".html", ".css", ".js", ".yaml", ".json"})


@cache
def source_digest() -> bytes:
    """Every source and asset file of the package, by path and bytes: a result kept across runs
    is reused only by the code that made it."""
    digest = hashlib.blake2b(digest_size=16)
    root = Path(__file__).resolve().parent
    for path in sorted(root.rglob("*")):
        if path.suffix in SOURCE_SUFFIXES and path.is_file():
            digest.update(path.relative_to(root).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.digest()
