"""Numbers as README.md writes them, in digits or in English words, for the tests that check
README's counts against the suite (tests/unit/docs/test_readme_counts.py) and against the plan
of a workflow run (tests/e2e/test_readme.py), and its results to their printed digits
(tests/e2e/test_kreutzer_example.py)."""

from __future__ import annotations

import re

UNITS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen"
).split()
TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()  # 20, 30, ...
WORD = r"[A-Za-z0-9][\w,-]*"  # one number as written: 27, 1,041, Twenty-seven, sixteen
# a decimal result as printed: 2, 0.05905, 3.959e-08 (not a section §1, a name's digit, a path)
PRINTED = re.compile(r"(?<![\w.§/-])\d+(?:\.\d+)?(?:e[-+]\d+)?(?![\w.]\w)")


def number(text: str) -> int:
    """The number ``text`` writes: digits (``24``, ``1,041``) or English words below a
    thousand (``Twenty-seven``, ``one hundred and five``); ValueError for anything else."""
    words = text.strip().lower()
    if re.fullmatch(r"\d{1,3}(,\d{3})+|\d+", words):
        return int(words.replace(",", ""))
    total = 0
    for word in re.split(r"[\s-]+", words):
        if word in UNITS:
            total += UNITS.index(word)
        elif word in TENS:
            total += 10 * (TENS.index(word) + 2)
        elif word == "hundred" and 0 < total < 10:
            total *= 100
        elif not (word == "and" and total >= 100):
            raise ValueError(f"not a number: {text!r}")
    return total


def is_number(text: str) -> bool:
    """Whether ``text`` is a number as number() reads it."""
    try:
        number(text)
    except ValueError:
        return False
    return True


def printed_numbers(text: str) -> list[str]:
    """The decimal numbers ``text`` prints, in order, as printed."""
    return PRINTED.findall(text)


def as_printed(value: float, printed: str) -> str:
    """``value`` with the digits of ``printed``: ``3.959e-08``, ``0.05905``, ``2``."""
    mantissa, _, exponent = printed.partition("e")
    decimals = len(mantissa.partition(".")[2])
    return f"{value:.{decimals}e}" if exponent else f"{value:.{decimals}f}"
