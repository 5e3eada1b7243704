"""Two processes writing one kept store at once (infrepro.plumbing.kept.KeptStore.save): the file
is never corrupt, and the token memo, which every scoring process writes (on a shared file
system, too), loses no writer's entries (a SHARED store merges under a file lock)."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

from infrepro.metrics.kept_tokens import ROUGE, TokenStore
from infrepro.plumbing.kept import KeptStore

WRITES = 150  # saves per process


def write_pieces(path: str, writer: str, start: object) -> None:
    """As a scoring job does: read the memo, add this job's pieces, save; WRITES times."""
    start.wait()  # type: ignore[attr-defined]
    for i in range(WRITES):
        store = TokenStore.open(path)
        pieces = dict(store.previous.get(ROUGE, {}))
        pieces[f"{writer}{i}"] = f"{writer}-token-{i}"
        store.current[ROUGE] = pieces
        store.save()


def write_all(path: str, writer: str, start: object) -> None:
    """A last-writer-wins store: each save replaces the file with this process' whole set."""
    start.wait()  # type: ignore[attr-defined]
    for i in range(WRITES):
        store = KeptStore.open(path)
        store.current = {f"{writer}{j}": [writer, j, 0.1 * j] for j in range(50 + i % 7)}
        store.save()


def run_side_by_side(target: object, path: Path) -> None:
    context = multiprocessing.get_context("fork")
    start = context.Barrier(2)
    writers = [context.Process(target=target, args=(str(path), w, start)) for w in "ab"]
    for process in writers:
        process.start()
    for process in writers:
        process.join(timeout=120)
        assert process.exitcode == 0


def test_two_writers_of_the_token_memo_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    run_side_by_side(write_pieces, path)
    saved = json.loads(path.read_text(encoding="utf-8"))  # valid JSON
    assert saved["code"] == TokenStore.version()
    pieces = TokenStore.open(path).previous[ROUGE]
    expected = {f"{w}{i}": f"{w}-token-{i}" for w in "ab" for i in range(WRITES)}
    assert pieces == expected
    assert [p.name for p in tmp_path.iterdir() if p.suffix == ".tmp"] == []


def test_two_writers_of_a_replaced_store_leave_one_whole_set(tmp_path: Path) -> None:
    path = tmp_path / "store.json"
    run_side_by_side(write_all, path)
    entries = KeptStore.open(path).previous
    writer = next(iter(entries))[0]
    assert entries == {f"{writer}{j}": [writer, j, 0.1 * j] for j in range(len(entries))}
    assert len(entries) == 50 + (WRITES - 1) % 7  # the last save of one writer, whole


def test_a_save_keeps_the_pieces_another_process_saved_since_this_one_read(
    tmp_path: Path,
) -> None:
    path = tmp_path / "tokens.json"
    first, second = TokenStore.open(path), TokenStore.open(path)
    first.current[ROUGE] = {"old": "o", "both": "b"}
    first.save()
    second.current[ROUGE] = {"both": "b", "new": "n"}
    second.save()
    assert TokenStore.open(path).previous[ROUGE] == {"old": "o", "both": "b", "new": "n"}
