"""Figures kept from the report's previous render, by content.

A figure is a deterministic function of its plotting function and arguments (frames, styles,
texts) and of the code: a render after new seeds of one system draws only the figures whose
data changed and takes the others' SVG from the previous render (issue 31; most of a paper-scale
report's time is matplotlib's). The store is one JSON file
(``.snakemake/infrepro/figures.json``, data only), written atomically after the page and holding
only the figures of that render. A figure is reused only under the same key: the function's
name and a digest of its arguments and of the package's source and library versions
(:func:`infrepro.plumbing.memo.content_digest`). A missing, unreadable or foreign file is ignored.

A render with more than one process (:func:`figures_from`'s ``processes``, the report rule's
threads) sends each figure it has to draw to a pool of forked processes as it asks for it and
goes on building the page with a placeholder in the figure's place; :func:`finish_figures` waits
for the figures and puts their SVG in place. Each figure is drawn by the same function from the
same arguments wherever it is drawn, so the page is byte-identical to a render in one process.
"""

from __future__ import annotations

import contextlib
import functools
import multiprocessing
import re
import sys
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from multiprocessing.pool import AsyncResult, Pool
from typing import Any, ParamSpec

from infrepro.plumbing.kept import KeptStore
from infrepro.plumbing.memo import Undigestible, content_digest

P = ParamSpec("P")


PLACEHOLDER = "<!--infrepro-figure:{key}-->"
_PLACEHOLDER = re.compile(r"<!--infrepro-figure:([0-9a-f]+)-->")


@dataclass(frozen=True)
class Drawing:
    """One call of a plotting function decorated with :func:`cached_figure`, with its arguments:
    what a forked process needs to draw it (the decorated function pickles by its name)."""

    plot: Callable[..., str]
    args: tuple[Any, ...]
    kwargs: dict[str, Any]

    def __call__(self) -> str:
        return self.plot.__wrapped__(*self.args, **self.kwargs)  # type: ignore[attr-defined]


@dataclass
class FigureStore(KeptStore[str]):
    """The figures (SVG) of the last render (``previous``) and of this one (``current``); with
    more than one of ``processes``, the figures being drawn in forked processes (``pending``,
    by key)."""

    processes: int = 1
    pending: dict[str, AsyncResult] = field(default_factory=dict)
    pool: Pool | None = None

    def svg(self, key: str, drawing: Drawing) -> str:
        """The figure under ``key``: from the last render, else drawn (with several processes:
        sent to one, its placeholder returned); kept for the next."""
        if key in self.previous:
            self.reused += 1
            svg = self.previous[key]
        elif key in self.current:
            svg = self.current[key]
        elif self.processes > 1:
            if key not in self.pending:
                if self.pool is None:  # forked at the first figure to draw, not before
                    self.pool = multiprocessing.get_context("fork").Pool(self.processes)
                self.pending[key] = self.pool.apply_async(drawing)
            return PLACEHOLDER.format(key=key)
        else:
            svg = drawing()
        self.current[key] = svg
        return svg

    def resolve(self, page: str) -> str:
        """``page`` with each placeholder replaced by its figure (waiting for those being
        drawn; kept in ``current`` in the order they were asked for)."""
        for key, result in self.pending.items():
            self.current[key] = result.get()
        self.pending.clear()
        self.close()
        return _PLACEHOLDER.sub(lambda match: self.current[match.group(1)], page)

    def close(self) -> None:
        """Stop the drawing processes (those still drawing, after a failed render, too)."""
        if self.pool is not None:
            self.pool.terminate()
            self.pool.join()
            self.pool = None


_ACTIVE: ContextVar[FigureStore | None] = ContextVar("infrepro_figures", default=None)
# Figures are drawn side by side only where a fork of a process that has loaded numpy and
# matplotlib is safe (Linux); elsewhere (macOS: Accelerate and the Objective-C runtime; Windows:
# no fork) they are drawn in the render's process, as with one thread.
FORKS = sys.platform.startswith("linux")


@contextlib.contextmanager
def figures_from(store: FigureStore, processes: int = 1) -> Iterator[FigureStore]:
    """Draw the figures of the block through ``store``; with ``processes`` > 1 (on Linux), those
    it has to draw are sent to that many forked processes and put in place by
    :func:`finish_figures`."""
    store.processes = max(1, processes) if FORKS else 1
    token = _ACTIVE.set(store)
    try:
        yield store
    finally:
        _ACTIVE.reset(token)
        store.close()
        store.processes = 1
        store.pending.clear()


def finish_figures(page: str) -> str:
    """``page`` with the active store's deferred figures drawn in place (unchanged without a
    store or deferred figures)."""
    store = _ACTIVE.get()
    return page if store is None else store.resolve(page)


def cached_figure(function: Callable[P, str]) -> Callable[P, str]:
    """A plotting function whose SVG is taken from the active store when its arguments are the
    same as in the previous render (drawn as ever without a store, or for arguments that have
    no content digest)."""
    name = f"{function.__module__}.{function.__qualname__}"

    @functools.wraps(function)
    def drawn(*args: P.args, **kwargs: P.kwargs) -> str:
        store = _ACTIVE.get()
        if store is None:
            return function(*args, **kwargs)
        try:
            key = content_digest(name, args, sorted(kwargs.items()))
        except Undigestible:
            return function(*args, **kwargs)
        return store.svg(key, Drawing(drawn, args, kwargs))

    return drawn
