"""ROUGE's piece -> token memo kept from one scoring run to the next
(infrepro.metrics.kept_tokens): the same scores, the stemmer not called for kept pieces."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from infrepro.metrics import kept_tokens, rouge
from infrepro.metrics._texts import TokenEncoder

REFERENCES = [["The cats were running quickly home."], ["Generously organised meetings, again."]]
HYPOTHESES = ["A cat runs home quickly.", "The meetings were organised generously."]


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A fresh ROUGE encoder for this process (as in a new worker), and the pieces it stems."""
    stemmed: list[str] = []
    tokenizer = rouge.RougeTokenizer()

    def token(piece: str) -> str:
        stemmed.append(piece)
        return tokenizer.token(piece)

    monkeypatch.setattr(rouge, "_ENCODER", TokenEncoder(tokenizer.split, token))
    monkeypatch.setattr(kept_tokens, "_LEARNED", set())
    return stemmed


def scores() -> dict[str, np.ndarray]:
    return rouge.rouge_fast(HYPOTHESES, REFERENCES, ["rouge1", "rouge2", "rougeL"])


def test_a_learned_memo_encodes_as_the_tokenizer_does() -> None:
    tokenizer = rouge.RougeTokenizer()
    plain = TokenEncoder(tokenizer.split, tokenizer.token)
    texts = [*HYPOTHESES, *(r for rs in REFERENCES for r in rs)]
    expected = plain.encode(texts)
    called: list[str] = []
    learned = TokenEncoder(tokenizer.split, lambda p: called.append(p) or tokenizer.token(p))
    learned.learn(plain.pieces())
    ids, offsets = learned.encode(texts)
    assert called == [] and np.array_equal(ids, expected[0])
    assert np.array_equal(offsets, expected[1])
    assert learned.pieces() == plain.pieces()


def test_the_next_worker_takes_the_kept_stems(
    tmp_path: Path, fresh: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    store = str(tmp_path / "tokens.json")
    with kept_tokens.kept_tokens(store, ["rouge1", "ter"]):
        first = scores()
    assert fresh and Path(store).is_file()
    long_pieces = {p for p in fresh if len(p) > 3}
    fresh.clear()
    tokenizer = rouge.RougeTokenizer()
    monkeypatch.setattr(
        rouge, "_ENCODER", TokenEncoder(tokenizer.split, lambda p: fresh.append(p) or "x")
    )  # a "stemmer" that would change every score: it must not be called
    monkeypatch.setattr(kept_tokens, "_LEARNED", set())
    with kept_tokens.kept_tokens(store, ["rouge1"]):
        again = scores()
    assert fresh == [] and long_pieces
    for name, values in first.items():
        assert np.array_equal(values, again[name])


@pytest.mark.parametrize("corrupt", ["version", "values"])
def test_a_foreign_or_malformed_store_is_ignored(
    tmp_path: Path, fresh: list[str], corrupt: str
) -> None:
    store = tmp_path / "tokens.json"
    with kept_tokens.kept_tokens(str(store), ["rouge1"]):
        first = scores()
    saved = json.loads(store.read_text())
    if corrupt == "version":
        saved["code"] = "other code"
    else:
        saved["entries"]["rouge"] = {piece: 1 for piece in saved["entries"]["rouge"]}
    store.write_text(json.dumps(saved))
    kept_tokens._LEARNED.clear()
    rouge._ENCODER.start_afresh()
    rouge._ENCODER.learn({})
    fresh.clear()
    with kept_tokens.kept_tokens(str(store), ["rouge1"]):
        again = scores()
    assert fresh  # stemmed afresh
    assert all(np.array_equal(first[m], again[m]) for m in first)


def test_no_rouge_no_store(tmp_path: Path) -> None:
    store = tmp_path / "tokens.json"
    with kept_tokens.kept_tokens(str(store), ["ter", "bleu"]):
        pass
    assert not store.exists()


def test_rewritten_only_when_much_is_new(tmp_path: Path, fresh: list[str]) -> None:
    store = tmp_path / "tokens.json"
    with kept_tokens.kept_tokens(str(store), ["rouge1"]):
        scores()
    written = store.stat().st_mtime_ns, store.stat().st_ino
    with kept_tokens.kept_tokens(str(store), ["rouge1"]):
        rouge.rouge_fast(["cats running home"], REFERENCES[:1], ["rouge1"])  # no new piece
    assert (store.stat().st_mtime_ns, store.stat().st_ino) == written
    many = " ".join(f"word{i}x" for i in range(200))  # twenty times the pieces it holds
    with kept_tokens.kept_tokens(str(store), ["rouge1"]):
        rouge.rouge_fast([many], [["Cats ran home."]], ["rouge1"])
    assert "word7x" in json.loads(store.read_text())["entries"]["rouge"]


def test_nothing_encoded_nothing_written(tmp_path: Path, fresh: list[str]) -> None:
    """A job that scored with the reference packages (the kernels compiling) writes no memo."""
    store = tmp_path / "tokens.json"
    with kept_tokens.kept_tokens(str(store), ["rouge1"]):
        pass
    assert not store.exists()
