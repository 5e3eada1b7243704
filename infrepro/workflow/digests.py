"""SHA-256 of the experiment's input files, kept from one parse to the next.

The rules' ``content_of`` parameters hash every input file (each run's hypotheses, the test set,
the runs sheet or the scores file) on every parse, a rerun with nothing to do included. A digest
is kept in ``.snakemake/infrepro/digests.json`` (a :class:`~infrepro.plumbing.kept.KeptStore`) with
the
file's state (``plumbing.files.file_state``: size, modification and change times, inode); a
file whose state is the same has its digest back without being read. Any write to a file changes
its change time, which no tool sets back, so a content change is always hashed again (`cp -p`,
`rsync -a`, `touch -d` included).
"""

from __future__ import annotations

import atexit
import contextlib
from dataclasses import dataclass
from pathlib import Path

from infrepro.plumbing.files import file_state
from infrepro.plumbing.kept import KeptStore
from infrepro.report.checksums import sha256


@dataclass
class KeptDigests(KeptStore[list[object]]):
    """Digests by path, each entry the file's state and its SHA-256. The store is written once,
    when the process ends, and only after a digest was computed: a parse that read no file
    leaves it as it was."""

    computed: int = 0  # digests this process had to compute (file read)

    @classmethod
    def version(cls) -> str:
        return "sha256"  # a file's digest depends on its bytes only

    def sha256(self, name: str | Path) -> str:
        key = str(name)
        state = file_state(name)
        kept = self.current.get(key) or self.previous.get(key)
        if state is not None and isinstance(kept, list) and kept[:-1] == state:
            self.reused += key not in self.current
            self.current[key] = kept
            return str(kept[-1])
        value = sha256(name)  # a missing file raises here, as it did before
        if state is not None:
            if not self.computed:  # the first digest computed: write the store at exit
                atexit.register(self._save_quietly)
            self.computed += 1
            self.current[key] = [*state, value]
        return value

    def _save_quietly(self) -> None:
        with contextlib.suppress(OSError):  # a folder that cannot be written keeps none
            self.save()
