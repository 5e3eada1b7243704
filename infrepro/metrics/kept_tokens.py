"""The ROUGE tokenizer's piece -> token memo kept from one scoring run to the next.

rouge-score stems every word longer than three characters with nltk's PorterStemmer; a worker
process that scores a run stems the words of every reference and hypothesis it has not met
before: 0.3 s of each worker's first job at paper scale, the run after new seeds included
(issue 31). The stem of a word is a pure function of the word and of the tokenizer's code, so
the pieces a job met and their tokens are kept in ``.snakemake/infrepro/tokens.json`` (a
:class:`~infrepro.plumbing.kept.KeptStore`: data only, written atomically, merged with the
pieces other processes wrote meanwhile under a file lock) and a later worker takes them from there
(`TokenEncoder.learn`). Token ids are still assigned afresh in each process, and the
kernels only compare them, so the scores are the same with or without the memo.
"""

from __future__ import annotations

import contextlib
import logging
import platform
from collections.abc import Iterator, Sequence

from infrepro.plumbing.kept import KeptStore

ROUGE = "rouge"
TOKENIZER_LIBRARIES = ("nltk", "rouge-score")  # what a stem depends on, besides Python
MOST_PIECES = 300_000  # kept at most (a few MB of JSON)
NEW_SHARE = 10  # the memo is written again when a job met a tenth more pieces than it holds
_LEARNED: set[str] = set()  # the encoders of this process that took a kept memo


class TokenStore(KeptStore[dict[str, str]]):
    """Pieces and their tokens, per tokenizer (only ROUGE's stems are worth keeping). Every
    scoring process writes it, side by side, on a shared file system too: a save merges
    (``SHARED``), so that no writer's pieces are lost."""

    SHARED = True

    def merge(self, saved: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
        """Per tokenizer, the pieces the file holds and this job's (at most MOST_PIECES); a
        tokenizer's entry of another layout is replaced."""
        merged = dict(saved)
        for name, pieces in self.current.items():
            kept = saved.get(name)
            both = {**kept, **pieces} if isinstance(kept, dict) else pieces
            merged[name] = dict(list(both.items())[:MOST_PIECES])
        return merged

    @classmethod
    def version(cls) -> str:
        """The package's source, Python and the tokenizer's libraries. A stem is text made by
        nltk's stemmer, rouge-score's tokenizer and Python's ``re``: no number of numpy, numba
        or a BLAS is in it (and a scoring process does not load scipy's BLAS to ask)."""
        from infrepro.plumbing.sources import library_versions, source_digest

        libraries = library_versions(*TOKENIZER_LIBRARIES)
        return "|".join([source_digest().hex(), platform.python_version(), libraries])


@contextlib.contextmanager
def kept_tokens(path: str, metrics: Sequence[str]) -> Iterator[None]:
    """Score inside this block with the ROUGE tokens kept at ``path`` (when ``metrics`` has a
    ROUGE score); afterwards keep those of this process' encoder for the next run."""
    if not any(m.startswith("rouge") for m in metrics):
        yield
        return
    from infrepro.metrics.rouge import rouge_encoder

    encoder = rouge_encoder()
    store = TokenStore.open(path)
    kept = store.previous.get(ROUGE)
    if not (isinstance(kept, dict) and all(isinstance(t, str) for t in kept.values())):
        kept = None  # another layout: stem afresh
    if ROUGE not in _LEARNED and kept is not None:
        with encoder.lock:
            encoder.learn(kept)
        _LEARNED.add(ROUGE)
        logging.getLogger(__name__).info("ROUGE tokens: %d pieces from earlier runs", len(kept))
    yield
    with encoder.lock:
        pieces = encoder.pieces()
    new = len(pieces.keys() - kept.keys()) if kept is not None else len(pieces)
    if not new or (kept is not None and new * NEW_SHARE < len(kept)):
        return  # nothing (scored by rouge-score while the kernels compile) or little new to keep
    store.current[ROUGE] = pieces  # with those the file holds now (TokenStore.merge)
    with contextlib.suppress(OSError):  # a read-only folder: the next run stems again
        store.save()
