"""Strict text decoding and line splitting."""

from __future__ import annotations

from pathlib import Path

import pytest

from infrepro.io import InputError
from infrepro.io.text import decode_utf8, read_lines, split_lines


def test_bom_is_dropped_and_crlf_folded() -> None:
    assert decode_utf8(b"\xef\xbb\xbfa\r\nb\r\n", "f.txt") == "a\nb\n"


def test_invalid_utf8_names_byte_offset_and_line(tmp_path: Path) -> None:
    path = tmp_path / "h.txt"
    path.write_bytes(b"ok\nstill ok\nbad \xff here\n")
    with pytest.raises(InputError) as err:
        read_lines(path)
    message = str(err.value)
    assert str(path) in message
    assert ":3:" in message
    assert "byte offset 16" in message


def test_nul_byte_is_rejected_with_line(tmp_path: Path) -> None:
    path = tmp_path / "h.txt"
    path.write_bytes(b"a\nb\x00c\n")
    with pytest.raises(InputError, match=r":2: NUL byte at byte offset 3"):
        read_lines(path)


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        ("", []),
        ("a", ["a"]),
        ("a\n", ["a"]),
        ("a\n\n", ["a", ""]),
        ("\n", [""]),
        ("a\x0cb\u2028c\n", ["a\x0cb\u2028c"]),
    ],
)
def test_split_lines_only_on_newline(text: str, lines: list[str]) -> None:
    assert split_lines(text) == lines


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="file not found"):
        read_lines(tmp_path / "nope.txt")
