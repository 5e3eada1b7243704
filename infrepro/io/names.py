"""Names whose characters would mislead, refused up front naming the code point, the file, the
line and the column (docs/reference.md, "Names").

- **Look-alikes**: two spellings equal once invisible characters are dropped, NFKC applied and
  surrounding whitespace trimmed (``comp`` and ``comp `` from a spreadsheet export, ``é``
  composed and decomposed, ``comp`` and ``comp`` + U+200B ZERO WIDTH SPACE, full-width
  ``ｃｏｍｐ``) would become two systems, runs, segments, facets or levels that every table shows
  with identical names. The message names both spellings, both lines and the code points in
  which they differ.
- **Invisible characters** (Unicode's default-ignorable code points: format characters such as
  U+200B, U+00AD SOFT HYPHEN, U+FEFF, U+2060 WORD JOINER; fillers; tags), even without a plain
  twin: a name holding one cannot be typed or searched as it reads (the config's baseline, a
  filter on a table), and it splits the system as soon as another file spells it plainly. The
  joiners U+200C and U+200D and the variation selectors are part of how some scripts and emoji
  are spelled (Persian, the Indic scripts, ``👩‍💻``) and stay.
- **Bidirectional controls** (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069): they
  reorder the text around the name, the numbers of a sentence included, in every output that
  cannot isolate it (CSV, LaTeX, Markdown, a terminal). The HTML report isolates every name that
  holds right-to-left text besides (``infrepro.report.bidi``).
- **Spreadsheet formulas** (OWASP, CSV injection): a name that starts with ``=``, ``+``, ``-``,
  ``@``, a tab or a carriage return (or their full-width forms) starts cells of the tables a
  user opens in a spreadsheet, which would run it; a name that is a number (``-1``, ``+0.5``)
  is no formula and stays. Segment ids are exempt: no table holds them.

Which names are checked, and why: every name that becomes a level of a model factor or a column
of the evaluation table, because there a look-alike pair splits one thing in two silently —
systems, run ids, segment ids and facet levels (values of the runs sheet, the test set or the
scores file), and facet, property and metric names (columns of those files and names of the
config). Text the workflow only shows (references, hypotheses, bin labels it makes itself) is
not a name and is not checked.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Sequence
from pathlib import Path

from infrepro.io.errors import InputError, escaped

BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
# Default-ignorable code points besides the format characters (DerivedCoreProperties.txt:
# Other_Default_Ignorable_Code_Point and Variation_Selector); U+180E is a format character
_OTHER_IGNORABLE = (
    (0x034F, 0x034F),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x2065, 0x2065),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0xE0000, 0xE0FFF),
)
# Format characters that show: prepended concatenation marks, interlinear annotation and
# Egyptian hieroglyph format controls (not default-ignorable)
_VISIBLE_FORMAT = frozenset(
    "\u0600\u0601\u0602\u0603\u0604\u0605\u06dd\u070f\u0890\u0891\u08e2"
    "\U000110bd\U000110cd\ufff9\ufffa\ufffb"
) | frozenset(map(chr, range(0x13430, 0x13441)))
# Invisible, yet part of a spelling: joiners shape Persian, the Indic scripts and emoji
# sequences; variation selectors pick an emoji's or an ideograph's form
SPELLING = frozenset("\u200c\u200d\u180b\u180c\u180d\u180f") | frozenset(
    map(chr, (*range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)))
)
# The first characters that make a cell a formula (OWASP, CSV injection), as NFKC reads them
FORMULA_START = {"=": "=", "+": "+", "-": "-", "@": "@", "\t": "a tab", "\r": "a carriage return"}
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


# the default-ignorable code points str.isprintable() lets through (letters and marks)
_PRINTABLE_IGNORABLE = re.compile(
    "[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180d\u180f\u3164\ufe00-\ufe0f\uffa0"
    "\U000e0100-\U000e01ef]"
)


def _plain(name: str) -> bool:
    """Whether ``name`` holds no invisible character and no bidirectional control (at C speed:
    every format character is not printable)."""
    return name.isprintable() and _PRINTABLE_IGNORABLE.search(name) is None


@functools.cache
def invisible(char: str) -> bool:
    """Whether ``char`` is default-ignorable: it shows nothing where it stands."""
    if unicodedata.category(char) == "Cf":
        return char not in _VISIBLE_FORMAT
    code = ord(char)
    return any(low <= code <= high for low, high in _OTHER_IGNORABLE)


def name_key(name: str) -> str:
    """A name as it looks: without invisible characters, NFKC-normalised, without surrounding
    whitespace."""
    if name.isascii():  # the common case, at every parse: nothing invisible, NFKC the same
        return name.strip()
    shown = name if _plain(name) else "".join(c for c in name if not invisible(c))
    return unicodedata.normalize("NFKC", shown).strip()


def code_point(char: str) -> str:
    """``U+200B ZERO WIDTH SPACE``."""
    return f"U+{ord(char):04X} {unicodedata.name(char, 'unnamed')}"


def spelling(name: str) -> str:
    """A name quoted so that its whitespace and invisible characters show, with its code points
    escaped when that is what tells it from a lookalike (``'café' (caf\\u0065\\u0301)``)."""
    quoted = "".join(escaped(c) if invisible(c) or c in BIDI_CONTROLS else c for c in repr(name))
    if not name.isascii():
        quoted += f" ({ascii(name)[1:-1]})"
    return quoted


def difference(one: str, other: str) -> str:
    """Where two spellings differ, as code points: ``U+200B ZERO WIDTH SPACE where the other
    has nothing``, ``U+00E9 LATIN SMALL LETTER E WITH ACUTE where the other has U+0065 LATIN
    SMALL LETTER E, U+0301 COMBINING ACUTE ACCENT``."""
    start = 0
    while start < min(len(one), len(other)) and one[start] == other[start]:
        start += 1
    end = 0
    while end < min(len(one), len(other)) - start and one[-1 - end] == other[-1 - end]:
        end += 1
    a, b = one[start : len(one) - end], other[start : len(other) - end]
    return (
        f"{', '.join(map(code_point, a)) or 'nothing'} where the other has "
        f"{', '.join(map(code_point, b)) or 'nothing'}"
    )


def character_problem(name: str, *, formulas: bool = True) -> str | None:
    """What is wrong with the characters of ``name`` (None: nothing): a bidirectional control or
    an invisible character, named with its position; with ``formulas``, a first character that
    makes a table's cell a spreadsheet formula."""
    for position, char in enumerate("" if _plain(name) else name, start=1):
        if char in BIDI_CONTROLS:
            return (
                f"holds {code_point(char)} (character {position}), a bidirectional control "
                "that reorders the text around the name (the numbers of a sentence too) "
                "wherever it is shown; remove it"
            )
        if invisible(char) and char not in SPELLING:
            return (
                f"holds {code_point(char)} (character {position}), which shows nothing: the "
                "name would not read as it is spelled; remove it"
            )
    if not formulas:
        return None
    first = unicodedata.normalize("NFKC", name.lstrip(" ")[:1])
    if first in FORMULA_START and not _NUMBER.fullmatch(name.strip()):
        shown = FORMULA_START[first]
        return (
            f"starts with {shown if len(shown) > 1 else repr(shown)}, which makes the cells "
            "of the tables that hold it spreadsheet formulas (CSV injection); rename it"
        )
    return None


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


def check_names(
    names: Sequence[str],
    path: str | Path | None,
    what: str,
    *,
    lines: Sequence[int] | None = None,
    column: str | None = None,
    formulas: bool = True,
) -> None:
    """Refuse two spellings of ``names`` that only look alike, naming both, where they differ
    and, with ``lines`` (the file line of each name), both lines; then a name whose characters
    mislead (:func:`character_problem`). ``what`` is the role (``system``, ``facet``)."""
    pair = lookalikes(names)
    if pair is not None:
        a, b = pair
        where = f" (line {lines[a]})" if lines is not None else ""
        raise InputError(
            path,
            lookalike_problem(
                f"{what} {spelling(names[b])}",
                f"{what} {spelling(names[a])}{where}",
                difference(names[b], names[a]),
            ),
            line=None if lines is None else int(lines[b]),
            column=column,
        )
    seen: set[str] = set()
    for position, name in enumerate(names):
        if name in seen:
            continue
        seen.add(name)
        problem = character_problem(name, formulas=formulas)
        if problem is not None:
            raise InputError(
                path,
                f"{what} {spelling(name)} {problem}",
                line=None if lines is None else int(lines[position]),
                column=column,
            )


def lookalike_problem(one: str, other: str, differ: str) -> str:
    """The message for two names (each described, e.g. ``system 'comp '``) that look alike and
    how their code points differ (:func:`difference`)."""
    return (
        f"{one} and {other} differ only by invisible characters, surrounding whitespace or "
        f"Unicode normalisation ({differ}): they would be counted apart while every table "
        "shows them alike; spell them the same"
    )
