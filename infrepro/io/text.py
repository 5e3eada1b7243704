"""Strict UTF-8 text reading that reports problems by file, line and byte offset.

Lines are split on ``\\n`` only (after folding ``\\r\\n``), never with ``str.splitlines``,
which also splits on form feeds, ``\\x1c`` or U+2028 and would silently misalign hypotheses
with references.
"""

from __future__ import annotations

import stat
from pathlib import Path

from infrepro.io.errors import InputError

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


_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def not_a_file(path: str | Path) -> str | None:
    """Why ``path`` cannot be read as a regular file (``not found``, ``is a directory`` ...), or
    None when it is one. Checked before reading, so a FIFO never blocks start-up."""
    try:
        mode = Path(path).stat().st_mode
    except FileNotFoundError:
        return "not found"
    except OSError as err:
        return f"cannot be read ({err.strerror})"
    if stat.S_ISREG(mode):
        return None
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    return f"is {kind}, not a regular file" if kind.startswith("a ") else f"is {kind}"


def require_file(path: str | Path, what: str = "file") -> None:
    """Raise naming ``path`` and what it is when it is not a readable regular file."""
    problem = not_a_file(path)
    if problem is not None:
        raise InputError(path, f"{what} {problem}")


def read_lines(path: str | Path) -> list[str]:
    """Read a UTF-8 text file as a list of lines (see module docstring for the rules)."""
    file = Path(path)
    require_file(file)
    return split_lines(decode_utf8(file.read_bytes(), file))
