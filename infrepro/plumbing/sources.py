"""A digest of the package's own source and assets, and the versions of the libraries a kept
value depends on (import-light: the workflow's parse reads them)."""

from __future__ import annotations

import hashlib
from functools import cache
from importlib import metadata
from pathlib import Path

SOURCE_SUFFIXES = frozenset({".py", ".html", ".css", ".js", ".yaml", ".json", ".csv"})


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


@cache
def library_versions(*names: str) -> str:
    """Each distribution's name and installed version (``absent`` when it is not installed), read
    from its metadata without importing it: a result kept across runs is reused only with the
    libraries that made it."""
    versions = []
    for name in names:
        try:
            versions.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{name} absent")
    return "|".join(versions)
