"""Texts as integer token ids in CSR arrays, for the compiled kernels.

`TokenEncoder` turns texts into token ids with a memo per process: a worker process scores run
after run against the same references, and the words of one run's hypotheses are mostly the
words of the last run's.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Sequence
from itertools import chain

import numpy as np

# pieces remembered per encoder before it starts afresh (a few hundred MB at most)
MEMO_LIMIT = 1_000_000


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


class TokenEncoder:
    """Texts -> (ids, offsets): text i's token ids are ids[offsets[i]:offsets[i + 1]].

    `split(text)` gives a text's pieces and `token(piece)` the token a piece becomes, or "" to
    drop it; `token` must be a pure function, so its result is memoised per piece. Equal tokens
    get equal ids (consecutive, in first-seen order); the kernels only compare ids for equality,
    so a score never depends on which id a token got. Texts encoded with `remember=True` (the
    references, in every job of a worker) are kept and not split again. A scorer holds `lock`
    while it encodes the texts of one call (ids of one call must come from one vocabulary) and
    calls `start` first, which starts afresh past MEMO_LIMIT pieces or remembered texts.
    """

    def __init__(self, split: Callable[[str], list[str]], token: Callable[[str], str]) -> None:
        self._split = split
        self._token = token
        self._known: dict[str, str] = {}  # piece -> token, from a kept memo (`learn`)
        self.lock = threading.Lock()
        self.start_afresh()

    def learn(self, tokens: dict[str, str]) -> None:
        """Take each piece's token ("" if dropped) from ``tokens`` instead of calling `token`
        (a pure function): the memo of earlier processes (`infrepro.metrics.kept_tokens`)."""
        self._known = tokens

    def pieces(self) -> dict[str, str]:
        """Every piece met since the encoder started afresh, with its token ("" if dropped)."""
        tokens = list(self._token_ids)  # in id order
        return {piece: tokens[i] if i >= 0 else "" for piece, i in self._piece_ids.items()}

    def start_afresh(self) -> None:
        """Forget every piece, token and remembered text."""
        self._piece_ids: dict[str, int] = {}  # piece -> token id, -1 if dropped
        self._token_ids: dict[str, int] = {}
        self._texts: dict[str, np.ndarray] = {}

    def start(self) -> None:
        """Begin a scoring call's encodings (with `lock` held): forget everything if full."""
        if len(self._piece_ids) > MEMO_LIMIT or len(self._texts) > MEMO_LIMIT // 10:
            self.start_afresh()

    @property
    def size(self) -> int:
        """The number of distinct tokens so far (every id is below it)."""
        return max(len(self._token_ids), 1)

    def tokens(self, text: str) -> list[str]:
        """The tokens of one text, as strings."""
        return [t for t in map(self._token, self._split(text)) if t]

    def encode(self, texts: Sequence[str], remember: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Token ids of each text, as (ids int32, offsets int64)."""
        if not remember:
            return self._encode_new(texts)
        todo = list(dict.fromkeys(t for t in texts if t not in self._texts))
        ids, offsets = self._encode_new(todo)
        for i, text in enumerate(todo):
            self._texts[text] = ids[offsets[i] : offsets[i + 1]]
        parts = [self._texts[t] for t in texts]
        lengths = np.fromiter(map(len, parts), np.int64, count=len(parts))
        offsets = np.zeros(len(parts) + 1, np.int64)
        np.cumsum(lengths, out=offsets[1:])
        ids = np.concatenate(parts) if parts else np.zeros(0, np.int32)
        return ids.astype(np.int32, copy=False), offsets

    def _encode_new(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        pieces = [self._split(t) for t in texts]
        offsets = np.zeros(len(pieces) + 1, np.int64)
        np.cumsum(np.fromiter(map(len, pieces), np.int64, count=len(pieces)), out=offsets[1:])
        flat = list(chain.from_iterable(pieces))
        memo, known = self._piece_ids, self._known
        for piece in dict.fromkeys(flat):  # distinct pieces, first seen first
            if piece not in memo:
                token = known.get(piece)
                if token is None:
                    token = self._token(piece)
                memo[piece] = (
                    self._token_ids.setdefault(token, len(self._token_ids)) if token else -1
                )
        ids = np.fromiter(map(memo.__getitem__, flat), np.int64, count=len(flat))
        kept = ids >= 0
        if not kept.all():  # dropped pieces: shrink each text's range
            counts = np.zeros(len(ids) + 1, np.int64)
            np.cumsum(kept, out=counts[1:])
            offsets = counts[offsets]
            ids = ids[kept]
        return ids.astype(np.int32), offsets
