"""Snakemake hashes each input file once per version while it runs, not once per output of
every job that reads it (infrepro.workflow.snakemake_door.remember_checksums;
snakemake/snakemake#4240)."""

from __future__ import annotations

import asyncio
import hashlib
import os
from pathlib import Path
from types import SimpleNamespace

import pytest
from snakemake.io import IOFile, _IOFile

from infrepro.workflow import snakemake_door as checksums


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The memo installed on Snakemake's own method (undone after the test), and the files its
    hashing reads."""
    read: list[str] = []
    original = hashlib.file_digest

    def counting(handle, algorithm):  # noqa: ANN001, ANN202
        read.append(handle.name)
        return original(handle, algorithm)

    monkeypatch.setattr(_IOFile, "checksum", _IOFile.checksum)
    monkeypatch.setattr(hashlib, "file_digest", counting)
    assert checksums.remember_checksums()
    return read


def io_file(path: Path) -> _IOFile:
    """A file as a job's input (a rule of a workflow whose I/O cache is off, as while jobs
    run)."""
    workflow = SimpleNamespace(iocache=SimpleNamespace(active=False, checksum={}))
    rule = SimpleNamespace(workflow=workflow, pathvars=SimpleNamespace(apply=lambda path: path))
    return IOFile(str(path), rule=rule)


def digest(path: Path) -> str | None:
    return asyncio.run(io_file(path).checksum(10**9))


def test_a_file_is_hashed_once_per_version(tmp_path: Path, installed: list[str]) -> None:
    path = tmp_path / "evaluation.parquet"
    path.write_bytes(b"first")
    first = digest(path)
    assert first == "sha256:" + hashlib.sha256(b"first").hexdigest()
    assert digest(path) == first and len(installed) == 1
    path.write_bytes(b"other")  # same size, a new version
    assert digest(path) == "sha256:" + hashlib.sha256(b"other").hexdigest()
    assert len(installed) == 2
    tmp = tmp_path / "tmp"
    tmp.write_bytes(b"third")
    os.replace(tmp, path)  # an atomic write: another inode
    assert digest(path) == "sha256:" + hashlib.sha256(b"third").hexdigest()


def test_above_the_size_limit_or_absent_is_snakemakes_answer(
    tmp_path: Path, installed: list[str]
) -> None:
    path = tmp_path / "big.csv"
    path.write_bytes(b"0123456789")
    assert asyncio.run(io_file(path).checksum(5)) is None
    assert digest(tmp_path / "absent.csv") is None
    assert installed == []


def test_left_alone_when_snakemakes_method_differs(monkeypatch: pytest.MonkeyPatch) -> None:
    async def other(self, threshold=None):  # noqa: ANN001, ANN202
        return None

    monkeypatch.setattr(_IOFile, "checksum", other)
    assert not checksums.remember_checksums()
    assert _IOFile.checksum is other
