"""Names that only look alike: two spellings equal after Unicode NFC normalisation and trimming
of surrounding whitespace (``comp`` and ``comp `` from a spreadsheet export, ``é`` composed and
decomposed) would become two systems, runs, segments, facets or levels that the report shows
with identical names. They are refused up front, naming both spellings and where each is.

Which names are checked, and why: every name that becomes a level of a model factor or a column
of the evaluation table, because a lookalike pair there splits one thing in two silently —
systems, run ids, segment ids and facet levels (values of the runs sheet, the test set or the
scores file), and facet, property and metric names (columns of those files and names of the
config). Text the workflow only shows (references, hypotheses, bin labels it makes itself) is
not a name and is not checked.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from pathlib import Path

from infrepro.io.errors import InputError


def name_key(name: str) -> str:
    """A name as it looks: NFC-normalised, without surrounding whitespace."""
    return unicodedata.normalize("NFC", name).strip()


def spelling(name: str) -> str:
    """A name quoted so that its whitespace shows, with its code points escaped when that is
    what tells it from a lookalike (``'café' (caf\\u0065\\u0301)``)."""
    quoted = repr(name)
    if not name.isascii():
        quoted += f" ({ascii(name)[1:-1]})"
    return quoted


def lookalikes(names: Iterable[str]) -> tuple[int, int] | None:
    """The positions of the first two different spellings with the same :func:`name_key`, in
    order of first appearance; None when there are none."""
    first: dict[str, int] = {}  # spelling -> its first position
    by_key: dict[str, int] = {}  # key -> position of its first spelling
    for position, name in enumerate(names):
        if name in first:
            continue
        first[name] = position
        key = name_key(name)
        if key in by_key:
            return by_key[key], position
        by_key[key] = position
    return None


def check_lookalikes(
    names: Sequence[str],
    path: str | Path | None,
    what: str,
    *,
    lines: Sequence[int] | None = None,
    column: str | None = None,
) -> None:
    """Refuse two spellings of ``names`` that only look alike, naming both and, with ``lines``
    (the file line of each name), both lines; ``what`` is the role (``system``, ``facet``)."""
    pair = lookalikes(names)
    if pair is None:
        return
    a, b = pair
    where = f" (line {lines[a]})" if lines is not None else ""
    raise InputError(
        path,
        lookalike_problem(f"{what} {spelling(names[b])}", f"{what} {spelling(names[a])}{where}"),
        line=None if lines is None else int(lines[b]),
        column=column,
    )


def lookalike_problem(one: str, other: str) -> str:
    """The message for two names (each described, e.g. ``system 'comp '``) that look alike."""
    return (
        f"{one} and {other} differ only by surrounding whitespace or Unicode normalisation: "
        "they would be counted apart while every table shows them alike; spell them the same"
    )
