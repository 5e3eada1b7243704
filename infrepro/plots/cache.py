"""Figures kept from the report's previous render, by content.

A figure is a deterministic function of its plotting function and arguments (frames, styles,
texts) and of the code: a render after new seeds of one system draws only the figures whose
data changed and takes the others' SVG from the previous render (issue 31; most of a paper-scale
report's time is matplotlib's). The store is one JSON file
(``.snakemake/infrepro/figures.json``, data only), written atomically after the page and holding
only the figures of that render. A figure is reused only under the same key: the function's
name and a digest of its arguments and of the package's source and library versions
(:func:`infrepro.memo.content_digest`). A missing, unreadable or foreign file is ignored.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import ParamSpec

from infrepro.kept import KeptStore
from infrepro.memo import Undigestible, content_digest

P = ParamSpec("P")


class FigureStore(KeptStore[str]):
    """The figures (SVG) of the last render (``previous``) and of this one (``current``)."""

    def svg(self, key: str, draw: Callable[[], str]) -> str:
        """The figure under ``key``: from the last render, else drawn; kept for the next."""
        if key in self.previous:
            self.reused += 1
            svg = self.previous[key]
        else:
            svg = self.current.get(key) or draw()
        self.current[key] = svg
        return svg


_ACTIVE: ContextVar[FigureStore | None] = ContextVar("infrepro_figures", default=None)


@contextlib.contextmanager
def figures_from(store: FigureStore) -> Iterator[FigureStore]:
    """Draw the figures of the block through ``store``."""
    token = _ACTIVE.set(store)
    try:
        yield store
    finally:
        _ACTIVE.reset(token)


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
