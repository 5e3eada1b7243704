"""Interning of texts and tokens into integer ids stored as CSR arrays, for the compiled kernels."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence

import numpy as np
import pandas as pd


class Interner:
    """Assigns consecutive ids to distinct hashable items, remembering the first-seen order."""

    def __init__(self) -> None:
        self.ids: dict[Hashable, int] = {}
        self.items: list[Hashable] = []

    def __call__(self, item: Hashable) -> int:
        """The id of `item`, new ids being assigned in order of first appearance."""
        idx = self.ids.get(item)
        if idx is None:
            idx = len(self.items)
            self.ids[item] = idx
            self.items.append(item)
        return idx

    def __len__(self) -> int:
        return len(self.items)


def to_csr(
    items: Sequence[Sequence[Hashable]], vocab: Interner, dtype: type = np.int32
) -> tuple[np.ndarray, np.ndarray]:
    """Concatenate token lists into (ids, offsets); list i is ids[offsets[i]:offsets[i + 1]].

    Equal tokens get equal ids (`vocab` is shared between calls); ids are factorized in C.
    """
    lengths = np.fromiter((len(t) for t in items), dtype=np.int64, count=len(items))
    offsets = np.zeros(len(items) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    flat = [t for tokens in items for t in tokens]
    if not flat:
        return np.zeros(0, dtype=dtype), offsets
    codes, uniques = pd.factorize(pd.Series(flat, dtype=object), sort=False)
    remap = np.fromiter((vocab(u) for u in uniques), dtype=np.int64, count=len(uniques))
    return remap[codes].astype(dtype), offsets


def tokenize_distinct(
    texts: Sequence[str], tokenize: Callable[[str], list[str]]
) -> list[list[str]]:
    """Tokenize each text, calling `tokenize` once per distinct text."""
    cache: dict[str, list[str]] = {}
    out = []
    for text in texts:
        tokens = cache.get(text)
        if tokens is None:
            tokens = tokenize(text)
            cache[text] = tokens
        out.append(tokens)
    return out
