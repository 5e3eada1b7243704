"""Provenance tables: input checksums (relative paths) and software versions."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from infrepro.report import checksums, input_checksums, sha256, software_table

# FIPS 180-2, appendix B.1: SHA-256("abc")
ABC = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def test_sha256_matches_the_standard_test_vector(tmp_path: Path) -> None:
    path = tmp_path / "abc.txt"
    path.write_bytes(b"abc")
    assert sha256(path) == ABC


def test_checksums_are_relative_unique_and_sized(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "a.tsv").write_bytes(b"abc")
    (data / "b.txt").write_bytes(b"x" * 3_000_000)  # larger than one read chunk
    table = input_checksums(
        [data / "a.tsv", str(data / ".." / "data" / "a.tsv"), data / "b.txt"], root=tmp_path
    )
    assert list(table.columns) == ["path", "sha256", "bytes"]
    assert list(table["path"]) == ["data/a.tsv", "data/b.txt"]
    assert table["sha256"].iloc[0] == ABC
    assert table["sha256"].iloc[1] == hashlib.sha256(b"x" * 3_000_000).hexdigest()
    assert list(table["bytes"]) == [3, 3_000_000]


def test_known_digests_are_taken_and_the_others_computed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The workflow passes the parse's digests (by portable path): those files are not read
    again; a file they do not name is hashed."""
    monkeypatch.chdir(tmp_path)
    Path("a.tsv").write_bytes(b"abc")
    Path("b.txt").write_bytes(b"xyz")
    read: list[str] = []
    real = checksums.sha256
    monkeypatch.setattr(checksums, "sha256", lambda path: read.append(str(path)) or real(path))
    table = input_checksums(["a.tsv", "b.txt"], known={"a.tsv": ABC})
    assert read == ["b.txt"]
    assert list(table["sha256"]) == [ABC, hashlib.sha256(b"xyz").hexdigest()]


def test_software_table_lists_installed_versions() -> None:
    table = software_table().set_index("package")["version"]
    assert table["numpy"] == np.__version__
    assert "python" in table.index and "matplotlib" in table.index
