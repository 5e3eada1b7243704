"""The error type for bad user input: it names the file, and where known the line and column."""

from __future__ import annotations

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
        where = self.path or "<config>"
        if self.line is not None:
            where += f":{self.line}"
        prefix = f"{where}: "
        if self.column is not None:
            prefix += f"column '{self.column}': "
        return prefix + self.problem


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """``1 line``, ``2 lines``: a count with its noun in the right number, for messages."""
    return f"{count} {noun if count == 1 else (nouns or noun + 's')}"
