"""Values kept from one run (or parse) to the next, in the experiment's ``.snakemake/infrepro/``.

Import-light (json, pathlib and fcntl only): the workflow's parse keeps its checked experiment and
its input digests with it, and the analyses and the report keep their units and figures.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, Self, TypeVar

from infrepro.plumbing.atomic import atomic_open

V = TypeVar("V")


@dataclass
class KeptStore(Generic[V]):
    """Values kept from the last run of a job, by key: those read back (``previous``, when this
    code wrote them) and those of this run (``current``, written by :meth:`save`).

    One JSON file (data only, so a copied or cloned folder's store can never run anything):
    the layout, the :meth:`version` of the code that wrote it and the entries. An absent,
    unreadable or foreign file, or one of another layout or version, keeps nothing. Subclasses
    say which code their values depend on (:meth:`version`), how an entry is written
    (:meth:`encode`) and read back (:meth:`decode`), and whether processes write it at once
    (``SHARED``: :meth:`save` then merges the file's entries with its own under a lock).
    """

    FORMAT: ClassVar[int] = 1
    SHARED: ClassVar[bool] = False

    path: Path | None = None
    previous: dict[str, V] = field(default_factory=dict)
    current: dict[str, V] = field(default_factory=dict)
    reused: int = 0

    @classmethod
    def version(cls) -> str:
        """The code the values depend on: the package's source and the libraries its numbers
        and figures depend on (``memo.code_digest``)."""
        from infrepro.plumbing.memo import code_digest

        return code_digest()

    @classmethod
    def open(cls, path: str | Path) -> Self:
        """The store at ``path``, with the entries it holds when this code wrote them."""
        path = Path(path)
        try:
            saved = json.loads(path.read_text(encoding="utf-8"))
            if saved.get("format") != cls.FORMAT or saved.get("code") != cls.version():
                return cls(path)
            return cls(path, {str(k): cls.decode(v) for k, v in saved["entries"].items()})
        except Exception:  # noqa: BLE001 - absent, truncated or foreign: nothing is kept
            return cls(path)

    @classmethod
    def decode(cls, entry: Any) -> V:
        return entry

    @classmethod
    def encode(cls, value: V) -> Any:
        return value

    def merge(self, saved: dict[str, V]) -> dict[str, V]:
        """The entries to write over ``saved``, the file's at the time of a SHARED store's save:
        its entries and this run's (this run's win under the same key)."""
        return {**saved, **self.current}

    def save(self) -> None:
        """Write this run's entries (atomically), replacing the last run's; no file without
        entries. A SHARED store first takes the entries the file holds now, under an exclusive
        lock held to the rename (:func:`locked`), so that writers at the same moment lose none.
        Numpy scalars are written as the Python values they hold (floats, NaN and infinities
        round-trip exactly)."""
        if self.path is None:
            return
        if not self.SHARED:
            self._write()
            return
        with locked(self.path):
            self.current = self.merge(type(self).open(self.path).previous)
            self._write()

    def _write(self) -> None:
        assert self.path is not None
        if not self.current:
            self.path.unlink(missing_ok=True)
            return
        entries = {key: self.encode(value) for key, value in self.current.items()}
        saved = {"format": self.FORMAT, "code": self.version(), "entries": entries}
        # one string (json's C encoder in one go; json.dump writes it piece by piece, 4x slower)
        text = json.dumps(saved, default=_plain, separators=(",", ":"), sort_keys=True)
        with atomic_open(self.path) as handle:
            handle.write(text)


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """The block under an exclusive lock on ``<path>.lock`` (``fcntl.flock``, which Linux's NFS
    client maps onto the server's locks). Where no lock can be had (no fcntl; a file system that
    refuses flock) the block runs unlocked: each write is still atomic (a rename), so the file is
    never corrupt, but entries written at the same moment may be lost (their next run makes them
    again)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX)
        except OSError:
            held = False
        else:
            held = True
        try:
            yield
        finally:
            if held:
                fcntl.flock(handle, fcntl.LOCK_UN)


def _plain(value: object) -> object:
    import numpy as np

    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"a value of type {type(value).__name__} cannot be kept")
