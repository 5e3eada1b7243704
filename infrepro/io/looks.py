"""The look column: in which batch each run arrived (docs/method.md §4e.1).

A run's look value is an integer or an ISO date or date-time (``2025-03-01``,
``2025-03-01T14:00``); the looks are the distinct values in order. This module reads one value
(``look_key``), checks a column of them with the file, line and column of the first bad one
(``look_values``), and stores each as normalised text (``2``, ``2025-03-01T00:00:00``) that
``look_key`` reads back to the same key. Standard library only.
"""

from __future__ import annotations

import datetime
import math
import numbers
import re
from collections.abc import Sequence
from pathlib import Path

from infrepro.io.errors import InputError

_INTEGER = re.compile(r"[+-]?\d+")
LookKey = int | datetime.datetime
PROBLEM = "a look is an integer or an ISO date or date-time (2025-03-01, 2025-03-01T14:00)"


def look_key(value: object) -> LookKey:
    """The sortable key of one look value: an int, or a naive date-time (an aware one in UTC;
    a date at midnight). ValueError for an empty value or anything else."""
    return _key(_read(value))


def _key(value: int | datetime.datetime) -> LookKey:
    if isinstance(value, datetime.datetime) and value.tzinfo is not None:
        return value.astimezone(datetime.UTC).replace(tzinfo=None)
    return value


def _read(value: object) -> int | datetime.datetime:
    """One look value as an int or a date-time, aware when it names a time zone."""
    if isinstance(value, bool) or value is None:
        raise ValueError("empty")
    if isinstance(value, datetime.datetime):
        return value
    if isinstance(value, datetime.date):
        return datetime.datetime.combine(value, datetime.time())
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        number = float(value)
        if math.isnan(number):
            raise ValueError("empty")
        if not number.is_integer():
            raise ValueError(f"{value!r} is not a whole number")
        return int(number)
    text = str(value).strip()
    if not text:
        raise ValueError("empty")
    if _INTEGER.fullmatch(text):
        return int(text)
    try:
        return _read(datetime.datetime.fromisoformat(text))
    except ValueError:
        raise ValueError(f"'{text}' is neither an integer nor an ISO date") from None


def look_text(key: LookKey) -> str:
    """A key as the runs table stores it (read back by ``look_key`` to the same key)."""
    return key.isoformat() if isinstance(key, datetime.datetime) else str(key)


def look_values(
    values: Sequence[object], path: str | Path, lines: Sequence[int], column: str
) -> list[str]:
    """Check a look column (``lines``: the file line of each value) and return its values as
    normalised text: every value an integer or every value an ISO date or date-time, the dates
    all with a time zone or all without (a plain date has no place in UTC: it would be read as
    UTC, silently reordering the looks); the first bad value is refused with its file, line and
    column."""
    keys: list[LookKey] = []
    zoned: dict[bool, tuple[object, int]] = {}  # has a time zone -> the first such value, line
    for value, line in zip(values, lines, strict=True):
        try:
            read = _read(value)
        except ValueError as err:
            what = "no look value" if str(err) == "empty" else str(err)
            raise InputError(
                path,
                f"{what}; every run needs one: {PROBLEM}",
                line=int(line),
                column=column,
            ) from None
        key = _key(read)
        if keys and isinstance(key, int) != isinstance(keys[0], int):
            first = "integers" if isinstance(keys[0], int) else "dates"
            raise InputError(
                path,
                f"look '{look_text(key)}' mixes kinds: the looks above are {first}; give every "
                "run an integer or every run a date",
                line=int(line),
                column=column,
            )
        if isinstance(read, datetime.datetime):
            aware = read.tzinfo is not None
            zoned.setdefault(aware, (value, int(line)))
            if (not aware) in zoned:
                other, other_line = zoned[not aware]
                has = "has a time zone" if aware else "has no time zone"
                others = "has none" if aware else "has one"
                raise InputError(
                    path,
                    f"look '{str(value).strip()}' {has}, but '{str(other).strip()}' (line "
                    f"{other_line}) {others}: a date without a zone cannot be ordered against "
                    "one with a zone; give every look a time zone (e.g. +00:00) or none",
                    line=int(line),
                    column=column,
                )
        keys.append(key)
    return [look_text(k) for k in keys]


def look_numbers(values: Sequence[object]) -> list[int]:
    """The look (1, 2, ...) of each run from its look value: integers, or ISO dates or
    date-times (``2025-03-01``, ``2025-03-01T14:00``), ordered; equal values are one look
    (``look_key``). Mixed kinds or a missing value are an error (a run must
    say in which batch it arrived)."""
    keys: list[object] = []
    for v in values:
        try:
            keys.append(look_key(v))
        except ValueError as err:
            what = "every run needs a look value" if str(err) == "empty" else f"look value {v!r}"
            raise ValueError(f"{what}: an integer or an ISO date") from None
    if len({type(k) for k in keys}) > 1:
        raise ValueError("look values mix integers and dates")
    order = {k: i + 1 for i, k in enumerate(sorted(set(keys)))}  # type: ignore[type-var]
    return [order[k] for k in keys]
