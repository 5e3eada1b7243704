"""One SHA-256 per version of a file while Snakemake runs (snakemake/snakemake#4240).

When a job finishes, Snakemake 9 records the checksum of each of its input files in the
metadata of each of its outputs, and computes them again for every output: an analysis job
(eight tables) hashed the 9.5 MB evaluation table eight times, collect_tables each of its 176
parts twenty times. At paper scale after two new seeds that was 1.8 s of Snakemake's own
process, during which it started no job. :func:`remember_checksums` makes Snakemake's
``_IOFile.checksum`` give back the checksum it computed earlier in this process for the same
file in the same state (``plumbing.files.file_state``: size, modification and change times,
inode; any write changes the change time, which no tool sets back). Snakemake's own method
does the hashing; nothing is kept beyond the process. Left alone when Snakemake's method is
not the one this was written for (its parameters differ).
"""

from __future__ import annotations

import functools
import inspect
from typing import Any

from infrepro.plumbing.files import file_state

PARAMETERS = ["self", "threshold", "force", "algorithm"]


def remember_checksums() -> bool:
    """Install the memo on Snakemake's ``_IOFile.checksum`` (once); whether it is installed."""
    from snakemake.io import _IOFile

    original = _IOFile.checksum
    if getattr(original, "remembers", False):
        return True
    if list(inspect.signature(original).parameters) != PARAMETERS:
        return False
    memo: dict[tuple[object, ...], Any] = {}

    @functools.wraps(original)
    async def checksum(self, threshold=None, force=False, algorithm=None):  # noqa: ANN001, ANN202
        state = None if self.is_storage else file_state(self.file)
        if state is None:  # remote, absent or unreadable: Snakemake decides
            return await original(self, threshold, force, algorithm)
        name = algorithm if algorithm is None or isinstance(algorithm, str) else algorithm().name
        key = (self.file, *state, threshold, force, name)
        if key not in memo:
            memo[key] = await original(self, threshold, force, algorithm)
        return memo[key]

    checksum.remembers = True  # type: ignore[attr-defined]
    _IOFile.checksum = checksum
    return True
