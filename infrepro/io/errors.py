"""The error type for bad user input: it names the file, and where known the line and column."""

from __future__ import annotations

import unicodedata
from pathlib import Path


class InputError(ValueError):
    """Bad input, reported as ``file:line: column 'c': problem`` so users can find and fix it."""

    def __init__(
        self,
        path: str | Path | None,
        problem: str,
        *,
        line: int | None = None,
        column: str | None = None,
    ) -> None:
        self.path = None if path is None else str(path)
        self.problem = problem
        self.line = line
        self.column = column
        super().__init__(self._format())

    def _format(self) -> str:
        return located(self.path, self.problem, line=self.line, column=self.column)


def located(
    path: str | Path | None, problem: str, *, line: int | None = None, column: str | None = None
) -> str:
    """``file:line: column 'c': problem``: an error's text, or a warning's about an input. A
    path's invisible and control characters are written as escapes (``outputs/ab\\u202ecd``):
    a right-to-left override in a folder's name would otherwise reverse the rest of the line in
    the terminal."""
    where = "<config>" if path is None else shown_path(str(path))
    if line is not None:
        where += f":{line}"
    prefix = f"{where}: "
    if column is not None:
        prefix += f"column '{column}': "
    return prefix + problem


def shown_path(path: str) -> str:
    """``path`` with each format, control and line-separator character (Unicode categories Cf,
    Cc, Zl, Zp: bidirectional controls, zero-width characters, the byte-order mark) escaped."""
    return "".join(
        escaped(c) if unicodedata.category(c) in ("Cf", "Cc", "Zl", "Zp") else c for c in path
    )


def escaped(char: str) -> str:
    """``\\u202e``: a character as its Python escape, for messages that must show it."""
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """``1 line``, ``2 lines``: a count with its noun in the right number, for messages."""
    return f"{count} {noun if count == 1 else (nouns or noun + 's')}"
