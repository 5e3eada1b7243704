"""ROUGE-1/2/L/Lsum F-measures identical to rouge-score's `RougeScorer(use_stemmer=True)`.

Where rouge-score's time goes: re-tokenizing and Porter-stemming both texts for every pair, and a
pure-Python LCS table. Here each distinct text (and each distinct rougeLsum sentence) is tokenized
once per call with rouge-score's tokenization steps and patterns and nltk's `PorterStemmer`
(memoised per word: `stem` is a pure function of the word), tokens become integer ids, and the
n-gram overlaps and LCS are counted by a compiled kernel (`rouge_kernel`). Precision, recall and
F-measure are then formed with rouge-score's expressions, evaluated in the same order, so the
floats are identical.
Multiple references follow `RougeScorer.score_multi`: the highest F-measure per ROUGE type.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
import threading
import types
from collections.abc import Sequence
from itertools import chain

import numpy as np
from rouge_score import tokenize as rouge_tokenize_module

from infrepro.metrics import rouge_kernel
from infrepro.metrics._jit import JIT_ENABLED, run_chunked
from infrepro.metrics._texts import Interner, TokenEncoder
from infrepro.metrics.reference import ROUGE_TYPES, rouge_reference

ROUGE_BACKEND: str = "numba" if JIT_ENABLED else "rouge-score"

_PORTER_LOCK = threading.Lock()


def porter_stemmer_class() -> type:
    """nltk's `PorterStemmer` class, loaded without running nltk's package `__init__`.

    `import nltk` (run first by `from nltk.stem import porter`) imports most of nltk and, through
    its collocation measures, scipy.stats: over a second per scoring job, for one class. When
    nltk is not imported yet, `nltk/stem/porter.py` and the modules it imports (`nltk.stem.api`,
    `nltk.redos`, `nltk.termsec`) are loaded from the installed nltk under placeholder `nltk` and
    `nltk.stem` packages; afterwards every `nltk` entry this added to `sys.modules` is removed
    again, so a later `import nltk` (rouge-score's reference scorer) loads the real package.
    The class is nltk's own code, so the stems are the same. A lock keeps two scoring threads
    (run: jobs in one process) from seeing each other's placeholder packages.
    """
    with _PORTER_LOCK:
        return _load_porter_stemmer_class()


def _load_porter_stemmer_class() -> type:
    if "nltk" in sys.modules:
        from nltk.stem import porter

        return porter.PorterStemmer
    spec = importlib.util.find_spec("nltk")
    if spec is None or not spec.submodule_search_locations:  # pragma: no cover - nltk is required
        raise ImportError("nltk is required for ROUGE's Porter stemmer")
    roots = list(spec.submodule_search_locations)
    before = set(sys.modules)
    for name, paths in (("nltk", roots), ("nltk.stem", [f"{root}/stem" for root in roots])):
        package = types.ModuleType(name)
        package.__path__ = paths
        package.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
        package.__spec__.submodule_search_locations = paths
        sys.modules[name] = package
    try:
        return importlib.import_module("nltk.stem.porter").PorterStemmer
    finally:
        for name in set(sys.modules) - before:
            if name == "nltk" or name.startswith("nltk."):
                del sys.modules[name]


class RougeTokenizer:
    """`rouge_score.tokenize.tokenize(text, PorterStemmer())`, in two steps for `TokenEncoder`.

    rouge-score lower-cases, replaces `NON_ALPHANUM_RE` matches by spaces, splits on `SPACES_RE`,
    stems pieces longer than 3 characters with nltk's PorterStemmer and keeps the results matching
    `VALID_TOKEN_RE` (rouge-score's own compiled patterns). After the replacement a text holds
    only [a-z0-9] and single spaces, so `str.split()` gives the same pieces bar the empty ones,
    which `VALID_TOKEN_RE` drops anyway. The piece -> token map is a pure function (memoised by
    the encoder).
    """

    def __init__(self) -> None:
        self._stem = porter_stemmer_class()().stem

    @staticmethod
    def split(text: str) -> list[str]:
        """A text's pieces."""
        return rouge_tokenize_module.NON_ALPHANUM_RE.sub(" ", text.lower()).split()

    def token(self, piece: str) -> str:
        """The token a piece becomes ("" if dropped)."""
        token = self._stem(piece) if len(piece) > 3 else piece
        return token if rouge_tokenize_module.VALID_TOKEN_RE.match(token) else ""


_ENCODER: TokenEncoder | None = None
_ENCODER_LOCK = threading.Lock()


def rouge_encoder() -> TokenEncoder:
    """The process' ROUGE `TokenEncoder` (created on first use: it loads the stemmer)."""
    global _ENCODER
    with _ENCODER_LOCK:
        if _ENCODER is None:
            tokenizer = RougeTokenizer()
            _ENCODER = TokenEncoder(tokenizer.split, tokenizer.token)
        return _ENCODER


def rouge_sentences(text: str) -> list[str]:
    """rougeLsum's sentences: newline-separated, empty strings dropped (`split_summaries=False`)."""
    return [s for s in text.split("\n") if len(s)]


def _fmeasure(precision: np.ndarray, recall: np.ndarray) -> np.ndarray:
    """`rouge_score.scoring.fmeasure`, elementwise, with the same operation order."""
    total = precision + recall
    with np.errstate(divide="ignore", invalid="ignore"):
        f = 2 * precision * recall / total
    return np.where(total > 0, f, 0.0)


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den as Python's int true division (exact for counts below 2**53); 0 where den == 0."""
    num = num.astype(np.float64)
    den = den.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)


class _TextTable:
    """The hypotheses' and the references' tokens (and rougeLsum sentences), as CSR id arrays for
    the kernel: text i < len(hypotheses) is hypothesis i, text len(hypotheses) + j reference j."""

    def __init__(
        self, hypotheses: Sequence[str], references: Sequence[str], with_sentences: bool
    ) -> None:
        encoder = rouge_encoder()
        texts = [*hypotheses, *references]
        with encoder.lock:
            encoder.start()
            h_ids, h_off = encoder.encode(hypotheses)
            r_ids, r_off = encoder.encode(references, remember=True)
            self.ids = np.concatenate([h_ids, r_ids])
            self.offsets = np.concatenate([h_off, r_off[1:] + h_off[-1]])
            sentences = Interner()
            per_text = [
                [sentences(x) for x in rouge_sentences(t)] if with_sentences else [] for t in texts
            ]
            s_ids, s_off = encoder.encode(sentences.items)  # type: ignore[arg-type]
            self.vocab_size = encoder.size
        self.lengths = np.diff(self.offsets)
        self.tsent = np.zeros(len(texts) + 1, np.int64)
        np.cumsum([len(x) for x in per_text], out=self.tsent[1:])
        occurrences = np.fromiter(chain.from_iterable(per_text), np.int64, count=self.tsent[-1])
        self.soff = np.zeros(len(occurrences) + 1, np.int64)
        np.cumsum(np.diff(s_off)[occurrences], out=self.soff[1:])
        parts = [s_ids[s_off[d] : s_off[d + 1]] for d in occurrences]
        self.stoks = np.concatenate(parts) if parts else np.zeros(0, np.int32)
        # total sentence tokens per text (rougeLsum's m and n)
        self.sent_lengths = self.soff[self.tsent[1:]] - self.soff[self.tsent[:-1]]
        self.n_sents = np.diff(self.tsent)


def _pair_scores(
    table: _TextTable, pair_h: np.ndarray, pair_r: np.ndarray, types: Sequence[str], threads: int
) -> dict[str, np.ndarray]:
    """F-measures for each (hypothesis text, reference text) pair."""
    want = np.array([t in types for t in ROUGE_TYPES], dtype=np.bool_)
    counts = np.zeros((len(pair_h), 4), np.int64)
    if len(pair_h):
        uni, bi, bi_off = rouge_kernel.ngram_keys(table.ids, table.offsets, table.vocab_size)
        args = (
            table.ids,
            table.offsets,
            uni,
            bi,
            bi_off,
            table.stoks,
            table.soff,
            table.tsent,
            pair_h,
            pair_r,
            want,
            table.vocab_size,
            counts,
        )
        run_chunked(lambda k0, k1: rouge_kernel.rouge_counts(k0, k1, *args), len(pair_h), threads)
    hyp_len = table.lengths[pair_h]
    ref_len = table.lengths[pair_r]
    out: dict[str, np.ndarray] = {}
    for t in types:
        if t in ("rouge1", "rouge2"):
            n = 1 if t == "rouge1" else 2
            inter = counts[:, n - 1]
            precision = _ratio(inter, np.maximum(hyp_len - n + 1, 1))
            recall = _ratio(inter, np.maximum(ref_len - n + 1, 1))
            out[t] = _fmeasure(precision, recall)
        elif t == "rougeL":
            ok = (hyp_len > 0) & (ref_len > 0)
            f = _fmeasure(_ratio(counts[:, 2], hyp_len), _ratio(counts[:, 2], ref_len))
            out[t] = np.where(ok, f, 0.0)
        else:  # rougeLsum
            n_tok = table.sent_lengths[pair_h]
            m_tok = table.sent_lengths[pair_r]
            ok = (table.n_sents[pair_h] > 0) & (table.n_sents[pair_r] > 0)
            ok &= (n_tok > 0) & (m_tok > 0)
            f = _fmeasure(_ratio(counts[:, 3], n_tok), _ratio(counts[:, 3], m_tok))
            out[t] = np.where(ok, f, 0.0)
    return out


def rouge_fast(
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str]],
    rouge_types: Sequence[str],
    threads: int = 1,
) -> dict[str, np.ndarray]:
    """Per-segment ROUGE F-measures (max over references) through the compiled kernel."""
    types = [t for t in ROUGE_TYPES if t in rouge_types]
    n_refs = [len(rs) for rs in references]
    flat_refs = list(chain.from_iterable(references))  # pair k's reference
    table = _TextTable(hypotheses, flat_refs, with_sentences="rougeLsum" in types)
    pair_h = np.repeat(np.arange(len(hypotheses), dtype=np.int64), n_refs)
    pair_r = np.arange(len(flat_refs), dtype=np.int64) + len(hypotheses)
    per_pair = _pair_scores(table, pair_h, pair_r, types, threads)
    if not n_refs:
        return {t: np.zeros(0) for t in types}
    starts = np.zeros(len(n_refs), np.int64)  # each segment's first pair
    np.cumsum(n_refs[:-1], out=starts[1:])
    return {t: np.maximum.reduceat(per_pair[t], starts) for t in types}


def rouge_scores(
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str]],
    rouge_types: Sequence[str],
    threads: int = 1,
) -> dict[str, np.ndarray]:
    """Per-segment ROUGE on the active backend (`ROUGE_BACKEND`)."""
    if ROUGE_BACKEND == "numba":
        return rouge_fast(hypotheses, references, rouge_types, threads)
    return rouge_reference(hypotheses, references, rouge_types)
