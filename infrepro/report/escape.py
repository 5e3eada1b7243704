"""User names as text of the paste-ready files (``results/paper/<stem>.md``, ``.tex``).

A system or metric name is data, never syntax: whatever it holds (newlines, ``|``, ``\\``,
``<script>``, ``&amp;``, edge spaces, any script), the Markdown cell parses back to exactly that
name with a GitHub-Flavored-Markdown parser, and the LaTeX sets it. Markdown escapes the
characters that mean something inline in GFM (backslash escapes, valid for every ASCII
punctuation character) and writes characters a table row or a paragraph cannot hold as numeric
character references (``&#10;`` for a newline, ``&#32;`` for an edge space): no raw HTML, so
it reads the same where a renderer drops HTML. LaTeX escapes TeX's special characters and sets
every other character of a name as itself (:func:`latex_name`: ``Γάμμα`` stays ``Γάμμα``, never
a math α); text that pdflatex cannot set (scripts beyond Latin, emoji) makes the table a
LuaLaTeX one, with font fallbacks for those scripts (a font the machine lacks is left out with
a warning) and right-to-left runs set right to left (``\\textdir``). The file states its engine
and preamble in its first lines (:func:`latex_header`).
"""

from __future__ import annotations

import re
import unicodedata

# -- Markdown (GFM) -------------------------------------------------------------------------------
# ASCII punctuation with an inline meaning in GFM (escapes, code, emphasis, links and images,
# autolinks and HTML, entities, table cells, strikethrough) or in common renderers ($ math).
_MD_ACTIVE = frozenset("\\`*_[]<>&|~$")
# A paragraph's first character could open a block (heading, list, quote, fence, HTML, ...).
_MD_BLOCK_START = re.compile(r"^(\d{1,9})([.)])")


def _md_char(char: str) -> str:
    if char in _MD_ACTIVE:
        return "\\" + char
    code = ord(char)
    if code < 0x20 or code == 0x7F:  # a line break ends a table row; others are invisible
        return f"&#{code};" if code else "&#xFFFD;"  # NUL is U+FFFD in CommonMark anyway
    return char


def _md(text: str) -> str:
    """Every character escaped; white space at either end as references (GFM trims it)."""
    stripped = text.strip()
    if not stripped:
        return "".join(f"&#{ord(c)};" for c in text)
    start = text.index(stripped)
    head, tail = text[:start], text[start + len(stripped) :]
    body = "".join(map(_md_char, stripped))
    return "".join(f"&#{ord(c)};" for c in head) + body + "".join(f"&#{ord(c)};" for c in tail)


def markdown_cell(text: str) -> str:
    """``text`` as the content of a GFM table cell that parses back to exactly ``text``."""
    return _md(text)


def markdown_text(text: str) -> str:
    """``text`` as a one-line GFM paragraph (a caption) that parses back to exactly ``text``:
    as a cell, and a first character that could open a block (``#``, ``-``, ``1.``) escaped."""
    out = _md(text)
    if out[:1] in ("#", "+", "-", "=", ">"):
        return "\\" + out
    return _MD_BLOCK_START.sub(r"\1\\\2", out, count=1)


# -- LaTeX ----------------------------------------------------------------------------------------
PDFLATEX = "pdflatex"
LUALATEX = "lualatex"
PDFLATEX_PREAMBLE = (r"\usepackage[T1]{fontenc}", r"\usepackage{booktabs}")
# Fallback fonts for what Latin Modern lacks, first match wins (Debian's fonts-noto-core,
# fonts-wqy-microhei, fonts-symbola, fonts-unifont): (font, luaotfload features); right-to-left
# scripts in node mode, whose runs latex_text sets inside \textdir TRT; complex scripts shaped by
# HarfBuzz.
FALLBACK_FONTS = (
    ("NotoSerif", "mode=node;"),  # Greek, Cyrillic, more Latin
    ("NotoSansArabic", "mode=node;script=arab;"),
    ("NotoSansHebrew", "mode=node;script=hebr;"),
    ("NotoSansDevanagari", "mode=harf;script=dev2;"),
    ("WenQuanYiMicroHei", "mode=harf;"),  # CJK, Hangul
    ("Symbola", "mode=harf;"),  # symbols, emoji (monochrome)
    ("Unifont", "mode=node;"),  # the rest of the Basic Multilingual Plane
    ("UnifontUpper", "mode=node;"),  # and beyond it
)


def lualatex_preamble(fonts: tuple[tuple[str, str], ...] = FALLBACK_FONTS) -> tuple[str, ...]:
    """The LuaLaTeX preamble: Latin Modern with ``fonts`` as fallbacks, each one only if the
    machine has it (fontspec's ``\\IfFontExistsTF``); a missing one is left out with a warning
    naming it, so that the others still set their scripts (luaotfload stops at a missing
    fallback font)."""
    return (
        r"\usepackage{booktabs}",
        r"\usepackage{fontspec}",
        r"\directlua{infrepro_fonts = {}}",
        r"\providecommand{\infreprofont}[2]{\IfFontExistsTF{#1}"
        r'{\directlua{table.insert(infrepro_fonts, "#1:#2")}}'
        r"{\PackageWarningNoLine{infrepro}{Font #1 not found: left out of the fallback fonts}}}",
        *(rf"\infreprofont{{{font}}}{{{features}}}" for font, features in fonts),
        r'\directlua{luaotfload.add_fallback("infrepro", infrepro_fonts)}',
        r"\setmainfont{Latin Modern Roman}[RawFeature={fallback=infrepro}]",
    )


LUALATEX_PREAMBLE = lualatex_preamble()
FONT_PACKAGES = "fonts-noto-core, fonts-wqy-microhei, fonts-symbola and fonts-unifont"

# Characters pdflatex sets with \usepackage[T1]{fontenc} (LaTeX's default UTF-8 input): ASCII,
# Latin-1 and Latin Extended-A less the nine T1 has no glyph for, and common punctuation.
_T1_MISSING = frozenset("\u0126\u0127\u0138\u013f\u0140\u0149\u0166\u0167\u017f")
PDFLATEX_CHARS = frozenset(
    [chr(c) for c in range(0x20, 0x7F)]
    + [chr(c) for c in range(0xA0, 0x180) if chr(c) not in _T1_MISSING]
    + list("‐‑‒–—―‖‘’‚“”„†‡•…‰‹›€™←↑→↓\n")
)

_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "|": r"\textbar{}",
    "`": r"\textasciigrave{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
}
# Characters set as commands (pdflatex has no UTF-8 mapping for them, or it is a text one)
_LATEX_TEXT = {
    "±": r"$\pm$",
    "–": r"\textendash{}",
    "\u2212": "$-$",
    "α": r"$\alpha$",
    "\u2020": r"\dag{}",
    "\u2021": r"\ddag{}",
    "\u00a7": r"\S{}",
    "\u00b6": r"\P{}",
}
_LATEX_CHAR = re.compile(r"[\\&%$#_{}~^|<>`±–\u2212α\u2020\u2021\u00a7\u00b6]")
_LATEX_SPECIAL_CHAR = re.compile(r"[\\&%$#_{}~^|<>`]")
_PERCENT = re.compile(r" (?=\\%)")  # "95 %": the space never breaks
# TeX's ligatures of text characters (-- en dash, '' and ,, quotes, !` and ?` inverted marks)
_LIGATURE = re.compile(r"(?<=-)(?=-)|(?<=')(?=')|(?<=,)(?=,)|(?<=[!?])(?=\\textasciigrave)")
# Explicit bidi controls: TeX cannot follow them; runs are set by \textdir instead
_BIDI_CONTROLS = frozenset("\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_RTL = frozenset({"R", "AL"})
_NUMBER = frozenset({"EN", "AN"})


def _latex_plain(text: str, commands: bool = True) -> str:
    """Special characters escaped, with ``commands`` ±, −, –, α, daggers and § as commands; a
    line break or other control character a space."""
    text = "".join(
        " " if unicodedata.category(c) in ("Cc", "Zl", "Zp") else c
        for c in text
        if c not in _BIDI_CONTROLS
    )
    pattern, table = (_LATEX_CHAR, _LATEX_TEXT) if commands else (_LATEX_SPECIAL_CHAR, {})
    out = pattern.sub(lambda m: _LATEX_SPECIAL.get(m.group(), table.get(m.group())), text)
    return _LIGATURE.sub("{}", _PERCENT.sub("~", out))


def _rtl_spans(text: str) -> list[tuple[int, int]]:
    """The right-to-left runs of ``text`` in a left-to-right line (the Unicode bidirectional
    algorithm's resolution for one level of embedding): from a strong right-to-left character
    over neutrals and numbers up to the last right-to-left character or number before the next
    strong left-to-right character."""
    classes = [unicodedata.bidirectional(c) for c in text]
    spans = []
    i = 0
    while i < len(text):
        if classes[i] not in _RTL:
            i += 1
            continue
        end = last = i
        while end < len(text) and classes[end] != "L":
            if classes[end] in _RTL or classes[end] in _NUMBER or classes[end] == "NSM":
                last = end
            end += 1
        spans.append((i, last + 1))
        i = last + 1
    return spans


def _rtl(text: str, commands: bool = True) -> str:
    """A right-to-left run, its numbers (``12``, ``1.5``) left to right within it."""
    classes = [unicodedata.bidirectional(c) for c in text]
    parts, i = [], 0
    while i < len(text):
        j = i
        if classes[i] in _NUMBER:
            while j + 1 < len(text) and (
                classes[j + 1] in _NUMBER
                or classes[j + 1] in ("CS", "ES", "ET")
                and j + 2 < len(text)
                and classes[j + 2] in _NUMBER
            ):
                j += 1
            parts.append(r"{\textdir TLT " + _latex_plain(text[i : j + 1], commands) + "}")
        else:
            while j + 1 < len(text) and classes[j + 1] not in _NUMBER:
                j += 1
            parts.append(_latex_plain(text[i : j + 1], commands))
        i = j + 1
    return r"{\textdir TRT " + "".join(parts) + "}"


def latex_text(text: str, commands: bool = True) -> str:
    """Plain text as LaTeX: TeX's special characters escaped, with ``commands`` the workflow's
    ±, −, –, α, daggers and § as commands (pdflatex has no text α), line breaks as spaces,
    right-to-left runs (Arabic, Hebrew, ...) inside ``\\textdir TRT`` (LuaLaTeX only, as their
    scripts are). Other characters stay as they are: :func:`latex_engine` says which engine sets
    them."""
    spans = _rtl_spans(text)
    if not spans:
        return _latex_plain(text, commands)
    out, at = [], 0
    for start, end in spans:
        out += [_latex_plain(text[at:start], commands), _rtl(text[start:end], commands)]
        at = end
    return "".join(out) + _latex_plain(text[at:], commands)


def latex_name(name: str) -> str:
    """A user's name as LaTeX: as :func:`latex_text`, but every character other than TeX's
    special ones set as itself (``Γάμμα``, never ``Γάμμ$\\alpha$``); a character pdflatex
    cannot set makes the table a LuaLaTeX one (:func:`latex_engine`)."""
    return latex_text(name, commands=False)


def latex_comment(text: str) -> str:
    """``text`` on one comment line: line breaks (which would end the comment) as spaces."""
    return "".join(" " if unicodedata.category(c) in ("Cc", "Zl", "Zp") else c for c in text)


def latex_engine(tex: str) -> str:
    """``pdflatex`` when it can set every character of ``tex``, else ``lualatex``."""
    return PDFLATEX if set(tex) <= PDFLATEX_CHARS else LUALATEX


def latex_preamble(engine: str) -> tuple[str, ...]:
    """The preamble lines a table needs with ``engine``."""
    return PDFLATEX_PREAMBLE if engine == PDFLATEX else LUALATEX_PREAMBLE


def latex_header(tex: str) -> str:
    """Comment lines for the top of a table's file: the engine that sets ``tex`` and the
    preamble it needs, one line each after ``% Preamble:`` (tests read them back)."""
    engine = latex_engine(tex)
    if engine == PDFLATEX:
        lines = [f"% Engine: {PDFLATEX} (lualatex and xelatex set it too)."]
    else:
        lines = [
            f"% Engine: {LUALATEX} (names in scripts pdflatex cannot set). The fonts are Debian's",
            f"% {FONT_PACKAGES}; any with these scripts will do, and one that is missing",
            "% is left out with a warning.",
        ]
    lines.append("% Preamble:")
    lines += [f"%   {line}" for line in latex_preamble(engine)]
    return "\n".join(lines) + "\n"
