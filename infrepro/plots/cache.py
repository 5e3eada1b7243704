"""Figures kept from the report's previous render, by content.

A figure is a deterministic function of its plotting function and arguments (frames, styles,
texts) and of the code: a render after new seeds of one system draws only the figures whose
data changed and takes the others' SVG from the previous render (issue 31; most of a paper-scale
report's time is matplotlib's). The store is one JSON file
(``.snakemake/infrepro/figures.json``, data only), written atomically after the page and holding
only the figures of that render. A figure is reused only under the same key: the function's
name and a digest of its arguments and of the package's source and library versions
(:func:`infrepro.memo.content_digest`). A missing, unreadable or foreign file is ignored.

A render with more than one process (:func:`figures_from`'s ``processes``, the report rule's
threads) defers the figures it has to draw: each is a placeholder in the page until
:func:`finish_figures` draws them all in forked processes and puts their SVG in its place. Each
figure is drawn by the same function from the same arguments wherever it is drawn, so the page is
byte-identical to a render in one process.
"""

from __future__ import annotations

import contextlib
import functools
import multiprocessing
import re
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import ParamSpec

from infrepro.kept import KeptStore
from infrepro.memo import Undigestible, content_digest

P = ParamSpec("P")


PLACEHOLDER = "<!--infrepro-figure:{key}-->"
_PLACEHOLDER = re.compile(r"<!--infrepro-figure:([0-9a-f]+)-->")


@dataclass
class FigureStore(KeptStore[str]):
    """The figures (SVG) of the last render (``previous``) and of this one (``current``); with
    more than one of ``processes``, the figures still to draw (``pending``, by key)."""

    processes: int = 1
    pending: dict[str, Callable[[], str]] = field(default_factory=dict)

    def svg(self, key: str, draw: Callable[[], str]) -> str:
        """The figure under ``key``: from the last render, else drawn (or, deferred, its
        placeholder); kept for the next."""
        if key in self.previous:
            self.reused += 1
            svg = self.previous[key]
        elif key in self.current:
            svg = self.current[key]
        elif self.processes > 1:
            self.pending.setdefault(key, draw)
            return PLACEHOLDER.format(key=key)
        else:
            svg = draw()
        self.current[key] = svg
        return svg

    def draw_pending(self) -> None:
        """Draw the deferred figures, in up to ``processes`` forked processes, into ``current``
        (in the order they were asked for)."""
        keys = list(self.pending)
        if len(keys) > 1:
            global _DRAWING
            _DRAWING = self.pending  # the forked processes inherit the drawing functions
            try:
                context = multiprocessing.get_context("fork")
                with context.Pool(min(self.processes, len(keys))) as pool:
                    drawn = pool.map(_draw, keys, chunksize=1)
            finally:
                _DRAWING = {}
        else:
            drawn = [self.pending[key]() for key in keys]
        self.current.update(zip(keys, drawn, strict=True))
        self.pending.clear()

    def resolve(self, page: str) -> str:
        """``page`` with each placeholder replaced by its figure (drawing the pending ones)."""
        if self.pending:
            self.draw_pending()
        return _PLACEHOLDER.sub(lambda match: self.current[match.group(1)], page)


_DRAWING: dict[str, Callable[[], str]] = {}


def _draw(key: str) -> str:
    """In a forked process: draw the deferred figure under ``key``."""
    return _DRAWING[key]()


_ACTIVE: ContextVar[FigureStore | None] = ContextVar("infrepro_figures", default=None)


@contextlib.contextmanager
def figures_from(store: FigureStore, processes: int = 1) -> Iterator[FigureStore]:
    """Draw the figures of the block through ``store``; with ``processes`` > 1, those it has
    to draw are deferred to :func:`finish_figures` and drawn side by side."""
    store.processes = max(1, processes)
    token = _ACTIVE.set(store)
    try:
        yield store
    finally:
        _ACTIVE.reset(token)
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
        return store.svg(key, lambda: function(*args, **kwargs))

    return drawn
