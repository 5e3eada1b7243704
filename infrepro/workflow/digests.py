"""SHA-256 of the experiment's input files, kept from one parse to the next.

The rules' ``content_of`` parameters hash every input file (each run's hypotheses, the test set,
the runs sheet or the scores file) on every parse, a rerun with nothing to do included. A digest
is kept in ``.snakemake/infrepro/digests.json`` with the file's state (``experiment.kept``:
size, modification and change times, inode); a file whose state is the same has its digest
back without being read. Any write to a file changes its change time, which no tool sets back,
so a content change is always hashed again (`cp -p`, `rsync -a`, `touch -d` included).
"""

from __future__ import annotations

import atexit
import json
from pathlib import Path

from infrepro.experiment.kept import file_state
from infrepro.io.atomic import write_text
from infrepro.report.checksums import sha256

FORMAT = 1


class KeptDigests:
    """Digests by path, from the store where a file's state is unchanged; the new ones are
    written back once, when the process ends."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._entries: dict[str, list[object]] | None = None
        self._changed = False

    def sha256(self, name: str | Path) -> str:
        entries = self._load()
        key = str(name)
        state = file_state(name)
        kept = entries.get(key)
        if state is not None and isinstance(kept, list) and kept[:-1] == state:
            return str(kept[-1])
        value = sha256(name)  # a missing file raises here, as it did before
        if state is not None:
            entries[key] = [*state, value]
            if not self._changed:
                self._changed = True
                atexit.register(self.save)
        return value

    def save(self) -> None:
        """Write the store (atomically); a folder that cannot be written keeps none."""
        try:
            write_text(self.path, json.dumps({"format": FORMAT, "entries": self._load()}) + "\n")
        except OSError:
            pass

    def _load(self) -> dict[str, list[object]]:
        if self._entries is None:
            try:
                saved = json.loads(self.path.read_text(encoding="utf-8"))
                ok = isinstance(saved, dict) and saved.get("format") == FORMAT
                self._entries = dict(saved["entries"]) if ok else {}
            except (OSError, ValueError, KeyError, TypeError):
                self._entries = {}
        return self._entries
