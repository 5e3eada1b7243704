"""A seeded synthetic experiment the size of the paper's CNN/DailyMail study (no downloads).

Test set: ``n_segments`` inputs (11,490 at full scale), each a news-like source of about 700
words (log-normal length) and a 3-4 sentence reference of about 55 words whose sentences also
occur, lightly edited, in the source. Runs: ``baseline`` over 18 seeds and ``competitor`` over a
3 lambda x 2 noise x 5 seed grid (48 runs). A hypothesis (about 60 words, one line) copies most
reference sentences, sometimes in another order, with dropped spans, moved phrases (so TER
shifts happen), substitutions and inserted novel phrases, padded with novel sentences. The edit
rate depends on the system, lambda, noise, seed and a per-segment difficulty, so the analyses
have effects to find.

Words are drawn from a Zipfian vocabulary of function words, real content words and made-up
(stemmable) words. Every random draw comes from a child of ``SeedSequence([seed, ...])`` keyed by
segment block or run, so the files are byte-identical across calls and a run's hypotheses do not
depend on which other runs exist (adding seeds leaves the old files unchanged).
"""

from __future__ import annotations

import bisect
import math
import random
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from synthetic_words import CONTENT, NAMES, SUFFIXES, SYLLABLES

FULL_SEGMENTS = 11_490
LAMBDAS = ("0.1", "0.5", "0.9")
NOISES = ("gauss", "drop")
BASELINE_SEEDS = 18
COMPETITOR_SEEDS = 5

# Edit rate (expected edit operations per reference word) of a run.
BASE_RATE = {"baseline": 0.16, "competitor": 0.15}
LAMBDA_RATE = {"0.1": -0.02, "0.5": 0.0, "0.9": 0.03}
NOISE_RATE = {"gauss": -0.005, "drop": 0.005}
SEED_SD = 0.01
SEGMENT_SD = 0.06

_FUNCTION = (
    "the of and to a in is that it for was on with as he be at by this had not are but from "
    "or have an they which one you were her all she there would their we him been has when "
    "who will more no if out so said after also about new first last into up over than"
).split()
_CONTENT = (
    CONTENT
    + (
        "extraordinary investigation responsibility international administration controversial "
        "unfortunately independently environmental"
    ).split()
)


@dataclass(frozen=True)
class RunSpec:
    """One run of the synthetic experiment."""

    run_id: str
    system: str
    seed: int
    lam: str = ""
    noise: str = ""


class Vocabulary:
    """Words and their sampling probabilities: 40 % function words, 55 % Zipfian content words
    (real ones first, then made-up ones), 5 % names and numbers."""

    def __init__(self, size: int = 20_000) -> None:
        rng = np.random.default_rng(zlib.crc32(b"paper-scale-vocabulary"))
        content = list(_CONTENT)
        seen = set(content) | set(_FUNCTION) | set(NAMES)
        while len(content) < size:
            parts = rng.choice(SYLLABLES, size=int(rng.integers(2, 5)))
            word = "".join(parts) + SUFFIXES[int(rng.integers(len(SUFFIXES)))]
            if word not in seen:
                seen.add(word)
                content.append(word)
        self.words: list[str] = [*_FUNCTION, *content, *NAMES]
        zipf = 1.0 / (np.arange(1, len(content) + 1) + 2.0)
        self.p = np.concatenate(
            [
                np.full(len(_FUNCTION), 0.40 / len(_FUNCTION)),
                0.55 * zipf / zipf.sum(),
                np.full(len(NAMES), 0.05 / len(NAMES)),
            ]
        )
        self.p /= self.p.sum()
        self.cdf = np.cumsum(self.p)
        self.cdf[-1] = 1.0

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` word ids (inverse-CDF sampling: one search per draw, no per-call set-up)."""
        return np.searchsorted(self.cdf, rng.random(n), side="right")

    def draw_list(self, rng: random.Random, n: int) -> list[int]:
        """``n`` word ids from a ``random.Random`` (fast for the few words of an edit)."""
        cdf = self._cdf_list
        return [bisect.bisect_right(cdf, rng.random()) for _ in range(n)]

    @property
    def _cdf_list(self) -> list[float]:
        if not hasattr(self, "_cdf_cache"):
            self._cdf_cache = self.cdf.tolist()
        return self._cdf_cache


def _rng(seed: int, *key: int | str) -> np.random.Generator:
    ints = [seed, *(k if isinstance(k, int) else zlib.crc32(k.encode()) for k in key)]
    return np.random.default_rng(np.random.SeedSequence(ints))


def _render(vocab: Vocabulary, sentences: list[list[int]]) -> str:
    """Sentences of word ids as one line of text: capitalised first word, final full stop."""
    words = vocab.words
    out = []
    for sentence in sentences:
        if not sentence:
            continue
        text = [words[w] for w in sentence]
        text[0] = text[0][:1].upper() + text[0][1:]
        out.append(" ".join(text) + ".")
    return " ".join(out)


def _sentences(rng: np.random.Generator, vocab: Vocabulary, n_words: int, mean: float) -> list:
    """About ``n_words`` word ids cut into sentences of about ``mean`` words."""
    ids = vocab.draw(rng, n_words).tolist()
    out, start = [], 0
    while start < len(ids):
        k = max(5, int(rng.normal(mean, mean / 4)))
        out.append(ids[start : start + k])
        start += k
    return out


def make_testset(n_segments: int, seed: int, vocab: Vocabulary) -> list[dict[str, object]]:
    """Per segment: id, reference sentences (word ids) and source and reference text."""
    rows = []
    for s in range(n_segments):
        rng = _rng(seed, "segment", s)
        n_ref = int(rng.choice([3, 4, 4]))
        ref = [vocab.draw(rng, max(6, int(rng.normal(55 / 3.7, 4)))).tolist() for _ in range(n_ref)]
        n_src = int(np.clip(rng.lognormal(np.log(610), 0.35), 150, 2500))
        source = _sentences(rng, vocab, n_src, 22.0)
        for sent in ref:  # the summary's content occurs in the article
            source.insert(int(rng.integers(0, len(source) + 1)), list(sent))
        rows.append(
            {
                "segment_id": f"cnn-{s:05d}",
                "ref_ids": ref,
                "difficulty": float(rng.normal(0.0, SEGMENT_SD)),
                "source": _render(vocab, source),
                "reference": _render(vocab, ref),
            }
        )
    return rows


def _edit(words: list[int], rng: random.Random, vocab: Vocabulary, n_ops: int) -> None:
    """Apply ``n_ops`` random edits in place: drop a span, insert a novel phrase, move a phrase,
    or substitute a word."""
    for _ in range(n_ops):
        u = rng.random()
        n = len(words)
        if u < 0.25 and n > 4:
            a = rng.randrange(n)
            del words[a : a + rng.randint(1, 3)]
        elif u < 0.5:
            b = rng.randint(0, n)
            words[b:b] = vocab.draw_list(rng, rng.randint(1, 4))
        elif u < 0.75 and n > 3:
            a = rng.randrange(n)
            block = words[a : a + rng.randint(2, 4)]
            del words[a : a + len(block)]
            b = rng.randint(0, len(words))
            words[b:b] = block
        elif n:
            words[rng.randrange(n)] = vocab.draw_list(rng, 1)[0]


def _poisson(rng: random.Random, mean: float) -> int:
    """A Poisson draw by inversion (means here are small)."""
    u, k, p = rng.random(), 0, math.exp(-mean)
    cumulative = p
    while u > cumulative and k < 1000:
        k += 1
        p *= mean / k
        cumulative += p
    return k


def run_rate(run: RunSpec, seed: int) -> float:
    """The run's planted edit rate (system, lambda, noise and seed effects)."""
    rate = BASE_RATE[run.system] + LAMBDA_RATE.get(run.lam, 0.0) + NOISE_RATE.get(run.noise, 0.0)
    return rate + float(_rng(seed, "seed-effect", run.run_id).normal(0.0, SEED_SD))


def make_hypotheses(
    run: RunSpec, testset: list[dict[str, object]], seed: int, vocab: Vocabulary
) -> list[str]:
    """One hypothesis per segment (about 60 words, one line)."""
    rng = random.Random(f"{seed}-run-{run.run_id}")
    rate = run_rate(run, seed)
    out = []
    for row in testset:
        ref: list[list[int]] = row["ref_ids"]  # type: ignore[assignment]
        order = list(range(len(ref)))
        if rng.random() < 0.4:
            rng.shuffle(order)
        seg_rate = max(0.02, rate + float(row["difficulty"]))  # type: ignore[arg-type]
        hyp = []
        for k in order:
            if rng.random() < 0.1:
                continue
            words = list(ref[k])
            _edit(words, rng, vocab, _poisson(rng, seg_rate * len(words)))
            hyp.append(words)
        target = max(30, int(rng.gauss(60, 8)))
        while sum(map(len, hyp)) + 6 < target:
            novel = vocab.draw_list(rng, max(5, int(rng.gauss(13, 3))))
            hyp.insert(rng.randint(0, len(hyp)), novel)
        out.append(_render(vocab, hyp))
    return out


def runs_grid(extra_seeds: int = 0) -> list[RunSpec]:
    """18 baseline seeds, the competitor's 3 x 2 x 5 grid, then ``extra_seeds`` baseline seeds."""
    runs = [RunSpec(f"baseline_s{e}", "baseline", e) for e in range(1, BASELINE_SEEDS + 1)]
    for lam in LAMBDAS:
        for noise in NOISES:
            for e in range(1, COMPETITOR_SEEDS + 1):
                runs.append(RunSpec(f"competitor_l{lam}_{noise}_s{e}", "competitor", e, lam, noise))
    extra = range(BASELINE_SEEDS + 1, BASELINE_SEEDS + 1 + extra_seeds)
    return runs + [RunSpec(f"baseline_s{e}", "baseline", e) for e in extra]


def write_runs_sheet(path: Path, runs: list[RunSpec], seed: int) -> None:
    """runs.tsv with a dev score (TER-like, lower is better) per run."""
    lines = ["run_id\tsystem\thypotheses\tdev_score\tlambda\tnoise\tseed"]
    for run in runs:
        dev = 0.45 + 2 * run_rate(run, seed) + float(_rng(seed, "dev", run.run_id).normal(0, 0.01))
        lines.append(
            f"{run.run_id}\t{run.system}\thyps/{run.run_id}.txt\t{dev:.4f}\t{run.lam}\t"
            f"{run.noise}\t{run.seed}"
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", newline="\n")


def write_config(workdir: Path) -> Path:
    """The workflow config: TER and ROUGE-1/2/L, every built-in property, all analyses."""
    path = workdir / "config.yaml"
    path.write_text(
        'experiment: "Paper-scale synthetic summarization study (CNN/DailyMail size)"\n'
        "testset: testset.tsv\n"
        "runs: runs.tsv\n"
        "baseline: baseline\n"
        "metrics: [ter, rouge1, rouge2, rougeL]\n"
        "properties: [length, readability, word_rarity, word_rarity_sum]\n"
        "property_options:\n  n_bins: 3\n"
        "analyses:\n  dev_score_better: lower\n"
        "scoring:\n  implementation: fast\n  threads: 1\n"
        "report:\n  date: '2024-01-01'\n",
        encoding="utf-8",
        newline="\n",
    )
    return path


def generate(workdir: Path, scale: float = 1.0, seed: int = 6) -> tuple[list[RunSpec], list]:
    """Write testset.tsv, runs.tsv, hyps/*.txt and config.yaml into ``workdir``."""
    n_segments = max(30, round(FULL_SEGMENTS * scale))
    vocab = Vocabulary()
    testset = make_testset(n_segments, seed, vocab)
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "hyps").mkdir(exist_ok=True)
    lines = ["segment_id\tsource\treference"]
    lines += [f"{r['segment_id']}\t{r['source']}\t{r['reference']}" for r in testset]
    (workdir / "testset.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8", newline="\n")
    runs = runs_grid()
    for run in runs:
        write_hypotheses(workdir, run, testset, seed, vocab)
    write_runs_sheet(workdir / "runs.tsv", runs, seed)
    write_config(workdir)
    return runs, testset


def write_hypotheses(
    workdir: Path, run: RunSpec, testset: list, seed: int, vocab: Vocabulary
) -> None:
    """hyps/<run_id>.txt, one hypothesis per line in test-set order."""
    text = "\n".join(make_hypotheses(run, testset, seed, vocab)) + "\n"
    (workdir / "hyps" / f"{run.run_id}.txt").write_text(text, encoding="utf-8", newline="\n")


def add_seeds(workdir: Path, testset: list, n: int, seed: int = 6) -> list[RunSpec]:
    """Append ``n`` baseline seeds to the runs sheet (and write their hypotheses)."""
    vocab = Vocabulary()
    runs = runs_grid(extra_seeds=n)
    new = runs[len(runs) - n :]
    for run in new:
        write_hypotheses(workdir, run, testset, seed, vocab)
    write_runs_sheet(workdir / "runs.tsv", runs, seed)
    return new
