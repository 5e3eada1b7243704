"""Every use of Snakemake beyond its documented API, behind one door (docs/architecture.md,
"Snakemake's internals").

The workflow is plain Snakemake plus four speed-ups that reach into Snakemake's internals: two
patches of its methods (:func:`remember_checksums`, :func:`serialize_params_lazily`), the
cancelling of its scheduler's leftover timers (:func:`cancel_scheduler_timers`), and the worker
processes that run the rules' scripts (``infrepro.workflow.jobs``, which the rules use only when
:func:`open_door` said so). None changes a result; each was written for, and tested with, the
Snakemake versions in :data:`TESTED_SNAKEMAKE`. With another version installed, or with
``INFREPRO_PLAIN_SNAKEMAKE=1`` set, the door stays shut: no patch, no worker pool, no timer
cancelled; every job runs its script in a Python process of its own, as Snakemake's ``script:``
directive runs one, and the tables and the report are the same bytes.

It also reads four undocumented attributes of Snakemake's ``workflow`` object, in every mode
(reads, no patch; :func:`is_main_process`, :func:`runs_locally`, :func:`configfiles`,
:func:`given_configfiles`), so that this module is the one place to change when they change.

Import-light: the Snakefile's parse imports it; Snakemake's modules are imported only inside
the functions that patch them.
"""

from __future__ import annotations

import functools
import importlib.metadata
import inspect
import os
import re
import sys
import threading
from typing import Any

# The Snakemake versions the speed-ups were tested with: from the first (inclusive) to the first
# untested (exclusive), compared by their leading numbers. constraints.txt pins the tested
# release inside it (tests/unit/workflow/test_snakemake_door.py checks); a new Snakemake is
# tested with the door open and then let in by raising the bound.
TESTED_SNAKEMAKE = ("9.27", "9.28")
# Set to 1 (any value but "" and "0"): run as plain Snakemake whatever the version.
PLAIN_VARIABLE = "INFREPRO_PLAIN_SNAKEMAKE"
# Tests only: the Snakemake version the door takes as installed.
VERSION_VARIABLE = "INFREPRO_TEST_SNAKEMAKE_VERSION"


def installed_snakemake() -> str:
    """The installed Snakemake's version (``INFREPRO_TEST_SNAKEMAKE_VERSION`` when set)."""
    return os.environ.get(VERSION_VARIABLE) or importlib.metadata.version("snakemake")


def version_key(version: str) -> tuple[int, ...]:
    """A version's leading numbers, for comparing: "9.27.1" -> (9, 27, 1), "10.0a1" -> (10, 0)."""
    match = re.match(r"\d+(?:\.\d+)*", version.strip())
    if match is None:
        raise ValueError(f"not a version number: {version!r}")
    return tuple(int(part) for part in match.group().split("."))


def tested(version: str) -> bool:
    """Whether a Snakemake version is in :data:`TESTED_SNAKEMAKE`."""
    first, untested = (version_key(v) for v in TESTED_SNAKEMAKE)
    return first <= version_key(version) < untested


def plain_requested() -> bool:
    """Whether ``INFREPRO_PLAIN_SNAKEMAKE`` asks for plain Snakemake."""
    return os.environ.get(PLAIN_VARIABLE, "").strip() not in ("", "0")


@functools.cache
def internals_allowed() -> bool:
    """Whether this process may use Snakemake's internals: the variable does not ask for plain
    Snakemake and the installed version was tested. Plain Snakemake is said once per process,
    on stderr (for an untested version: that version and the tested range), never an error."""
    if plain_requested():
        print(f"infrepro: {PLAIN_VARIABLE} is set: running as plain Snakemake", file=sys.stderr)
        return False
    version = installed_snakemake()
    if tested(version):
        return True
    first, untested = TESTED_SNAKEMAKE
    print(
        f"infrepro: Snakemake {version} is outside the versions the workflow's speed-ups were "
        f"tested with (>={first},<{untested}): running as plain Snakemake (the same results, "
        f"more time; {PLAIN_VARIABLE}=1 does the same without this message)",
        file=sys.stderr,
        flush=True,
    )
    return False


def open_door() -> bool:
    """At the parse: install the patches when the internals are allowed; whether they are (the
    rules then run their scripts in the worker pool or on Snakemake's threads, else each in a
    process of its own)."""
    if not internals_allowed():
        return False
    remember_checksums()
    serialize_params_lazily()
    return True


# -- the undocumented attributes of the workflow object (read in every mode) --------------------
def is_main_process(workflow: Any) -> bool:
    """Whether this is the Snakemake process that schedules the jobs (not one started to run a
    job, such as a cluster job's): only it checks every input and starts worker processes."""
    return bool(getattr(workflow, "is_main_process", True))


def runs_locally(workflow: Any) -> bool:
    """Whether jobs run on this machine (no executor plugin sends them elsewhere)."""
    return bool(getattr(workflow, "local_exec", True))


def configfiles(workflow: Any) -> list[str]:
    """Every config file read so far (``--configfile`` ones and the Snakefile's)."""
    return list(workflow.configfiles)


def given_configfiles(workflow: Any) -> list[str]:
    """The config files given on the command line (``--configfile``), none when none was."""
    return list(workflow.overwrite_configfiles or [])


# -- 1. each input file hashed once per version (snakemake/snakemake#4240) ----------------------
CHECKSUM_PARAMETERS = ["self", "threshold", "force", "algorithm"]


def remember_checksums() -> bool:
    """One SHA-256 per version of a file while Snakemake runs; whether it is installed (once).

    When a job finishes, Snakemake 9 records the checksum of each of its input files in the
    metadata of each of its outputs, and computes them again for every output: an analysis job
    (eight tables) hashed the 9.5 MB evaluation table eight times, collect_tables each of its
    176 parts twenty times (1.8 s of Snakemake's process at paper scale after two new seeds).
    Snakemake's ``_IOFile.checksum`` is made to give back the checksum it computed earlier in
    this process for the same file in the same state (``experiment.kept.file_state``: size,
    modification and change times, inode; any write changes the change time, which no tool
    sets back). Snakemake's own method does the hashing; nothing is kept beyond the process.
    Left alone when the method's parameters are not the ones this was written for."""
    from snakemake.io import _IOFile

    from infrepro.plumbing.files import file_state

    original = _IOFile.checksum
    if getattr(original, "remembers", False):
        return True
    if list(inspect.signature(original).parameters) != CHECKSUM_PARAMETERS:
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


# -- 2. the params check without importing pandas ------------------------------------------------
SERIALIZERS = ("_serialize_param", "_serialize_param_pandas", "_serialize_param_builtin")


def serialize_params_lazily() -> bool:
    """Snakemake's check of changed params without importing pandas for it; whether it is
    installed (once, on ``PersistenceBase``: its file and database stores inherit it).

    To decide whether a job's params changed, Snakemake 9 serializes each param, importing
    pandas for that whenever pandas is installed (``PersistenceBase._serialize_param``), so
    that a DataFrame param is hashed by content: 0.3 s of every run, a no-op included, where
    nothing else in Snakemake's process needs pandas. A param can only be a pandas object if
    pandas has been imported: Snakemake's pandas-aware serializer is used when it has been, its
    built-in one otherwise, the same text for every param. Left alone when Snakemake's methods
    are not the ones this was written for."""
    from snakemake.persistence import PersistenceBase

    current = PersistenceBase.__dict__.get("_serialize_param")
    if isinstance(current, property) and current.fget is _serializer:
        return True
    if not isinstance(current, property) or not all(
        hasattr(PersistenceBase, m) for m in SERIALIZERS
    ):
        return False
    PersistenceBase._serialize_param = property(_serializer)  # type: ignore[assignment]
    return True


def _serializer(persistence: Any) -> Any:
    """Snakemake's pandas-aware serializer once pandas is imported, its built-in one before."""
    if "pandas" in sys.modules:
        return persistence._serialize_param_pandas
    return persistence._serialize_param_builtin


# -- 3. the process exits when the last job is done ----------------------------------------------
SCHEDULER_TIMER = "_schedule_reevalutation"  # sic: Snakemake's JobScheduler spells it so


def cancel_scheduler_timers() -> int:
    """Cancel the timers Snakemake's scheduler leaves behind; how many were running. It starts a
    one-second timer per scheduling round of its job rate limit, non-daemon threads the
    interpreter waits for at exit: a second after every run. Called at the end of a run
    (``onsuccess``, ``onerror``), when nothing is scheduled any more."""
    cancelled = 0
    for thread in threading.enumerate():
        function = getattr(thread, "function", None)
        if isinstance(thread, threading.Timer) and SCHEDULER_TIMER in getattr(
            function, "__qualname__", ""
        ):
            thread.cancel()
            cancelled += 1
    return cancelled
