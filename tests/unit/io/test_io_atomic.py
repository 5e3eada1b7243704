"""Atomic writes: the file mode follows the umask, read without changing it from any thread."""

from __future__ import annotations

import os
import stat
import threading
import time
from pathlib import Path

import pytest

from infrepro.plumbing import atomic


@pytest.fixture
def umask_022() -> object:
    """Run the test under umask 022 and restore the caller's umask after."""
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def test_current_umask_does_not_set_the_umask(
    umask_022: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(_mask: int) -> int:
        raise AssertionError("current_umask() changed the process umask")

    monkeypatch.setattr(os, "umask", refuse)
    assert atomic.current_umask() == 0o022


def test_threads_writing_files_keep_the_umask(
    tmp_path: Path, umask_022: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Atomic writes and plain open() from several threads: every file 0644, umask still 022.

    ``os.umask`` is slowed down (it yields to other threads after each call), so that any write
    path which sets the umask, even for an instant, shows up as files with the wrong mode.
    """
    real_umask = os.umask

    def slow_umask(mask: int) -> int:
        previous = real_umask(mask)
        time.sleep(0.0005)
        return previous

    monkeypatch.setattr(os, "umask", slow_umask)
    per_thread = 150

    def work(index: int) -> None:
        for number in range(per_thread):
            atomic.write_text(tmp_path / f"atomic-{index}-{number}.txt", "x")
            with open(tmp_path / f"plain-{index}-{number}.txt", "w") as handle:
                handle.write("x")

    threads = [threading.Thread(target=work, args=(index,)) for index in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    modes = [stat.S_IMODE(path.stat().st_mode) for path in tmp_path.iterdir()]
    assert len(modes) == 3 * 2 * per_thread
    wrong = sum(mode != 0o644 for mode in modes)
    assert wrong == 0, f"{wrong} of {len(modes)} files did not get mode 0644"
    assert real_umask(0o022) == 0o022, "the process umask did not stay 022"
