"""numba helpers: a `jit` decorator that caches compiled kernels when it can, and falls back.

numba is a runtime dependency that ships as a wheel, so the fast kernels need no compiler step.
Multi-threading uses Python threads over `nogil` kernels (see `run_chunked`), which avoids
compiling a second, `parallel=True`, version of every kernel. `cache=True` writes compiled code next
to the source (or to numba's user-wide cache folder); when neither is writable numba refuses to
cache at decoration time, and we then compile without caching.
When numba is missing or disabled (`NUMBA_DISABLE_JIT=1`), `JIT_ENABLED` is False and callers use
the reference packages instead.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

try:  # pragma: no cover - exercised only where numba is absent
    import numba as _numba

    JIT_ENABLED: bool = not bool(_numba.config.DISABLE_JIT)
except ImportError:  # pragma: no cover
    _numba = None
    JIT_ENABLED = False


def jit() -> Callable[[F], F]:
    """Compile with `numba.njit(nogil=True)`, caching on disk when a cache folder is usable.

    `nogil` lets `run_chunked` spread the pairs of a batch kernel over Python threads.
    """

    def decorate(fn: F) -> F:
        if _numba is None:
            return fn
        try:
            return _numba.njit(cache=True, nogil=True)(fn)  # type: ignore[return-value]
        except RuntimeError:  # no writable cache locator for this file
            return _numba.njit(cache=False, nogil=True)(fn)  # type: ignore[return-value]

    return decorate


def run_chunked(work: Callable[[int, int], None], n_items: int, threads: int) -> None:
    """Call work(k0, k1) on contiguous chunks covering range(n_items), over `threads` threads.

    Each chunk writes its own slice of the output, so the result does not depend on scheduling.
    """
    threads = max(1, min(int(threads), n_items))
    if threads == 1:
        if n_items:
            work(0, n_items)
        return
    chunks = min(n_items, 4 * threads)  # several chunks per thread even out long segments
    bounds = [(n_items * c // chunks, n_items * (c + 1) // chunks) for c in range(chunks)]
    with ThreadPoolExecutor(max_workers=threads) as pool:
        for future in [pool.submit(work, k0, k1) for k0, k1 in bounds]:
            future.result()
