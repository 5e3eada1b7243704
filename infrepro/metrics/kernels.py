"""Whether the compiled kernels are ready, and compiling them without a first-run stall.

numba compiles the TER and ROUGE kernels on first use (about 12 s of CPU per process) and keeps
them in its on-disk cache (`_jit.jit`), so later processes load them in a fraction of a second. A
new user's first run would stall on that compile in every worker process at once; the bundled
example's scoring takes less than that compile with the reference packages. So a scorer asked
for `implementation="auto"` (`api.score_segments`) uses:

- the kernels, once they are compiled in this process or a marker file says they are in numba's
  cache (`ready`);
- else the reference packages, within a budget of CPU seconds per process (`RENT_SECONDS`, about
  the compile's cost: the reference loops never cost more than the compile they avoid), while a
  low-priority background process compiles every kernel into the cache (`start_background`,
  `python -m infrepro.metrics.kernels`);
- else (the budget is spent, or the call's projected cost would spend it) the kernels, compiled
  here.

The scores are the same either way: the kernels are bit-identical to the reference packages.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import platform
import subprocess
import sys
import threading
from pathlib import Path
from types import ModuleType

from infrepro.metrics import _jit, rouge_kernel, ter_kernel

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: no background compile, kernels compile here
    fcntl = None  # type: ignore[assignment]

# CPU seconds a process may spend on the reference packages while the kernels are not ready
RENT_SECONDS = 8.0

KERNELS: dict[str, ModuleType] = {"ter": ter_kernel, "rouge": rouge_kernel}
_ENTRY = {"ter": "ter_edits_batch", "rouge": "rouge_counts"}
_STATE_LOCK = threading.Lock()
_spent = 0.0  # reference seconds spent by this process
_started = False  # this process started a background compile


def kernel_for(metric: str) -> str | None:
    """The kernel a metric's fast scorer runs on (None: it has none)."""
    if metric == "ter":
        return "ter"
    if metric.startswith("rouge"):
        return "rouge"
    return None


def cache_dir() -> Path | None:
    """numba's cache folder for the kernels (None when they cannot be cached)."""
    path = getattr(getattr(ter_kernel.ter_edits_batch, "_cache", None), "_cache_path", None)
    return Path(path) if path else None


def fingerprint(kernel: str) -> str:
    """A digest of what a compiled kernel depends on: its source, the jit helper, numba, Python."""
    import numba

    digest = hashlib.sha256()
    for module in (KERNELS[kernel], _jit):
        digest.update(Path(module.__file__).read_bytes())  # type: ignore[arg-type]
    digest.update(f"{numba.__version__} {sys.version} {platform.machine()}".encode())
    return digest.hexdigest()[:16]


def _marker(kernel: str) -> Path | None:
    folder = cache_dir()
    return None if folder is None else folder / f"infrepro-{kernel}-{fingerprint(kernel)}.ready"


def compiled_here(kernel: str) -> bool:
    """Whether this process has compiled (or loaded) the kernel."""
    return bool(getattr(KERNELS[kernel], _ENTRY[kernel]).signatures)


def ready(kernel: str) -> bool:
    """Whether the kernel runs without compiling: compiled in this process, or in the cache."""
    if not _jit.JIT_ENABLED:
        return True  # the fast scorers delegate to the reference packages anyway
    if compiled_here(kernel):
        return True
    marker = _marker(kernel)
    return marker is not None and marker.exists()


def mark_ready(kernel: str) -> None:
    """Record that the kernel is in numba's cache (after it was compiled here)."""
    if not _jit.JIT_ENABLED:
        return
    marker = _marker(kernel)
    if marker is None or marker.exists():
        return
    with contextlib.suppress(OSError):
        tmp = marker.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text("compiled\n")
        os.replace(tmp, marker)


def reference_budget() -> float:
    """CPU seconds this process may still spend on the reference packages."""
    with _STATE_LOCK:
        return RENT_SECONDS - _spent


def charge(seconds: float) -> None:
    """Count reference seconds spent by this process."""
    global _spent
    with _STATE_LOCK:
        _spent += seconds


@contextlib.contextmanager
def _compile_lock(blocking: bool):
    """An exclusive lock on the cache folder's compile lock file; yields whether it is held."""
    folder = cache_dir()
    if folder is None or fcntl is None:
        yield False
        return
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "infrepro-compile.lock", "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
        except OSError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def start_background() -> None:
    """Compile every kernel into the cache in a detached low-priority process, once per process
    and only if none is compiling already (the child takes the compile lock)."""
    global _started
    with _STATE_LOCK:
        if _started or cache_dir() is None or not _jit.JIT_ENABLED:
            return
        _started = True
    with _compile_lock(blocking=False) as free:
        if not free:
            return
    package_root = str(Path(__file__).resolve().parents[2])  # this very package, not another
    path = os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH")) if p)
    with contextlib.suppress(OSError):
        subprocess.Popen(
            [sys.executable, "-m", "infrepro.metrics.kernels"],
            env={**os.environ, "PYTHONPATH": path},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # outlives the job and the workflow
        )


def compile_all() -> None:
    """Compile (or load) every kernel by scoring one tiny pair, and mark each ready."""
    from infrepro.metrics import rouge, ter

    ter.ter_fast(["a b c d"], [["b a c e"]])
    rouge.rouge_fast(["a b c. d"], [["b a\nc e"]], ["rouge1", "rouge2", "rougeL", "rougeLsum"])
    for kernel in KERNELS:
        mark_ready(kernel)


AUTOGROUP = Path("/proc/self/autogroup")


def _lowest_priority() -> None:
    """Nice 19, and, for the session `start_background` made, its scheduling group's nice 19.

    Linux gives each session its own scheduling group (autogroup) and a process' nice ranks it
    only within its group: the detached compile took a whole core from the first run's scoring
    jobs. Only a session leader sets its group's nice (a compile started by hand from a shell
    would lower the whole shell session's priority)."""
    if hasattr(os, "nice"):
        os.nice(19)
    if hasattr(os, "getsid") and os.getsid(0) == os.getpid():
        with contextlib.suppress(OSError):
            AUTOGROUP.write_text("19")


def main() -> None:
    """`python -m infrepro.metrics.kernels`: compile every kernel into the cache (no-op while
    another process holds the compile lock), at the lowest priority."""
    _lowest_priority()
    with _compile_lock(blocking=False) as held:
        if held:
            compile_all()


if __name__ == "__main__":
    main()
