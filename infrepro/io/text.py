"""Strict UTF-8 text reading that reports problems by file, line and byte offset.

Lines are split on ``\\n`` only (after folding ``\\r\\n``), never with ``str.splitlines``,
which also splits on form feeds, ``\\x1c`` or U+2028 and would silently misalign hypotheses
with references.
"""

from __future__ import annotations

from pathlib import Path

from .errors import InputError

BOM = b"\xef\xbb\xbf"


def decode_utf8(data: bytes, path: str | Path) -> str:
    """Decode bytes as UTF-8 (a leading BOM is dropped); reject NUL bytes and invalid sequences.

    Byte offsets in messages count from the start of the file, BOM included.
    """
    start = len(BOM) if data.startswith(BOM) else 0
    nul = data.find(b"\x00", start)
    if nul >= 0:
        raise InputError(
            path, f"NUL byte at byte offset {nul}; is this a binary file?", line=_line_of(data, nul)
        )
    try:
        text = data[start:].decode("utf-8")
    except UnicodeDecodeError as err:
        offset = start + err.start
        raise InputError(
            path,
            f"invalid UTF-8 at byte offset {offset} ({err.reason}); files must be UTF-8",
            line=_line_of(data, offset),
        ) from None
    return text.replace("\r\n", "\n")


def _line_of(data: bytes, offset: int) -> int:
    """The 1-based line number that contains byte ``offset``."""
    return data.count(b"\n", 0, offset) + 1


def split_lines(text: str) -> list[str]:
    """Split on newlines; a final newline ends the last line rather than starting an empty one."""
    if text == "":
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def read_lines(path: str | Path) -> list[str]:
    """Read a UTF-8 text file as a list of lines (see module docstring for the rules)."""
    file = Path(path)
    if not file.is_file():
        raise InputError(file, "file not found")
    return split_lines(decode_utf8(file.read_bytes(), file))
