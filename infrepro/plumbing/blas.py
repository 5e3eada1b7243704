"""Single-threaded BLAS for the engine's many small dense factorizations."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

_CONTROLLER: list[Any] = []  # one ThreadpoolController: finding the libraries costs ~10 ms


@contextlib.contextmanager
def single_threaded_blas() -> Iterator[None]:
    """Run BLAS/LAPACK single-threaded: the per-evaluation matrices are small, and threading
    them costs far more than it saves (10x on a loaded 2-core machine)."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # optional: without it BLAS keeps its default threads
        yield
        return
    if not _CONTROLLER:
        _CONTROLLER.append(ThreadpoolController())
    with _CONTROLLER[0].limit(limits=1, user_api="blas"):
        yield
