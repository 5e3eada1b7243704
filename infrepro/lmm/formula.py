"""Parse lme4-style formulas whose random terms each carry one variance parameter.

Supported fixed part: ``y ~ 1 + a + x + a*b + a:x``, ``0 +`` / ``- 1`` to drop the intercept,
``a/b`` (``a + a:b``), parentheses and backquoted names. Fixed terms are ordered as R's
``terms()`` orders them (by degree, then by appearance) and the variables inside a term follow
their first appearance in the formula, so coefficient names match R's ``model.matrix``.

Supported random terms (each becomes one column of Z per level, scaled by one theta):
- intercepts ``(1|g)``, ``(1|g1:g2)``, ``(1|g1/g2)``;
- one uncorrelated slope ``(0 + x|g)``, and ``(1 + x + z || g)``, which lme4 expands into
  ``(1|g) + (0 + x|g) + (0 + z|g)`` (uncorrelated intercept and slopes);
- intercepts restricted to rows of one factor level, ``(0 + dummy(f, "A")|g)``: with one such
  term per level, each level (e.g. each system) gets its own variance of g (e.g. runs); and
  slopes restricted the same way, ``(0 + dummy(f, "A"):x|g)``.
Correlated slopes ``(1 + x|g)``, other function calls, ``^`` and offsets raise
:class:`LmmError` naming the term.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from infrepro.core.vocabulary import string_literal
from infrepro.lmm.errors import LmmError

_TOKEN = re.compile(
    r"\s*(?:(?P<name>[A-Za-z_.][A-Za-z0-9_.]*)|`(?P<quoted>[^`]+)`|(?P<number>\d+(?:\.\d*)?)"
    r"|\"(?P<string>(?:[^\"\\]|\\.)*)\"|'(?P<sstring>(?:[^'\\]|\\.)*)'"
    r"|(?P<op>\|\||[~+\-*:/|(),]))"
)

Term = frozenset[str]
_STRING = re.compile(r"\"((?:[^\"\\]|\\.)*)\"|'((?:[^'\\]|\\.)*)'")


def unquoted(text: str) -> str:
    """``text`` (a term, a formula) with each string literal replaced by its value: a sort key
    that orders terms by the levels they name, not by how the levels had to be quoted."""

    def value(match: re.Match[str]) -> str:
        inner = match.group(1) if match.group(1) is not None else match.group(2)
        return re.sub(r"\\(.)", r"\1", inner)

    return _STRING.sub(value, text)


_NO_INTERCEPT: Term = frozenset(["(Intercept)"])


@dataclass(frozen=True)
class RandomTerm:
    """One random term with one variance parameter.

    ``variables`` are the grouping variables (their interaction is the grouping factor). The
    column of Z for a level holds 1 on its rows (an intercept), ``x`` (``slope``), or 1 only on
    rows where ``indicator[0] == indicator[1]``. ``name`` labels the term in results: the
    grouping factor for intercepts (``a:b``), else ``effect|group`` (``x|run_id``).
    """

    name: str
    variables: tuple[str, ...]
    slope: str | None = None
    indicator: tuple[str, str] | None = None

    @property
    def group(self) -> str:
        """The grouping factor as written (``a:b``)."""
        return ":".join(self.variables)

    @property
    def effect(self) -> str:
        """What the term's columns hold, as lme4 names it."""
        if self.indicator is not None:
            dummy = f"dummy({self.indicator[0]}, {string_literal(self.indicator[1])})"
            return dummy if self.slope is None else f"{dummy}:{self.slope}"
        if self.slope is not None:
            return self.slope
        return "(Intercept)"

    @property
    def written(self) -> str:
        """The term in lme4 notation: ``(1|g)``, ``(0 + x|g)``."""
        if not self.weighted:
            return f"(1|{self.group})"
        return f"(0 + {self.effect}|{self.group})"

    @property
    def weighted(self) -> bool:
        """True when Z's entries are not all 0/1 indicators of the grouping factor."""
        return self.slope is not None or self.indicator is not None


@dataclass(frozen=True)
class ParsedFormula:
    """A parsed formula: response, fixed terms in R's order, random-intercept terms."""

    formula: str
    response: str
    intercept: bool
    fixed_terms: tuple[tuple[str, ...], ...]
    random_terms: tuple[RandomTerm, ...]
    fixed_variables: tuple[str, ...]

    @property
    def random_names(self) -> tuple[str, ...]:
        """Names of the random terms, in formula order."""
        return tuple(t.name for t in self.random_terms)


@dataclass(frozen=True)
class _Tok:
    kind: str  # "name", "number", "op"
    text: str
    pos: int  # start and end of the token in the formula text
    end: int


def _tokenize(text: str) -> list[_Tok]:
    tokens: list[_Tok] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if m is None:
            bad = text[pos:].strip()[:20]
            raise LmmError(f"unsupported syntax in formula {text!r} near {bad!r}")
        end = m.end()
        start = m.end() - len(m.group(0).lstrip())
        if m.group("name") is not None:
            tokens.append(_Tok("name", m.group("name"), start, end))
        elif m.group("quoted") is not None:
            tokens.append(_Tok("name", m.group("quoted"), start, end))
        elif m.group("number") is not None:
            tokens.append(_Tok("number", m.group("number"), start, end))
        elif m.group("string") is not None or m.group("sstring") is not None:
            text_ = m.group("string") if m.group("string") is not None else m.group("sstring")
            text_ = re.sub(r"\\(.)", r"\1", text_)  # R's escapes: \" \' \\
            tokens.append(_Tok("string", text_, start, end))
        else:
            tokens.append(_Tok("op", m.group("op"), start, end))
        pos = end
    return tokens


class _Parser:
    """Recursive-descent parser over the right-hand side tokens."""

    def __init__(self, text: str, tokens: list[_Tok]) -> None:
        self.text = text
        self.toks = tokens
        self.i = 0
        self.order: list[str] = []  # fixed variables by first appearance

    # -- helpers ---------------------------------------------------------------------------
    def peek(self, ahead: int = 0) -> _Tok | None:
        j = self.i + ahead
        return self.toks[j] if j < len(self.toks) else None

    def take(self) -> _Tok:
        tok = self.peek()
        if tok is None:
            raise LmmError(f"formula {self.text!r} ends unexpectedly")
        self.i += 1
        return tok

    def _matching_paren(self, start: int) -> int:
        depth = 0
        for j in range(start, len(self.toks)):
            t = self.toks[j]
            if t.kind == "op" and t.text == "(":
                depth += 1
            elif t.kind == "op" and t.text == ")":
                depth -= 1
                if depth == 0:
                    return j
        raise LmmError(f"unbalanced parentheses in formula {self.text!r}")

    def _source(self, first: int, last: int) -> str:
        """The formula text spanned by tokens first..last (inclusive)."""
        return self.text[self.toks[first].pos : self.toks[last].end]

    # -- grammar ---------------------------------------------------------------------------
    def parse_rhs(self) -> tuple[bool, list[Term], list[RandomTerm]]:
        fixed: list[Term] = []
        removed: list[Term] = []
        random: list[RandomTerm] = []
        sign = "+"
        tok = self.peek()
        if tok is not None and tok.kind == "op" and tok.text in "+-":
            sign = self.take().text
        while True:
            self._summand(sign, fixed, removed, random)
            nxt = self.peek()
            if nxt is None:
                break
            if nxt.kind == "op" and nxt.text in "+-":
                sign = self.take().text
                continue
            raise LmmError(f"unexpected {nxt.text!r} in formula {self.text!r}")
        intercept = _NO_INTERCEPT not in removed
        removed = [t for t in removed if t != _NO_INTERCEPT]
        return intercept, [t for t in fixed if t not in removed], random

    def _summand(
        self, sign: str, fixed: list[Term], removed: list[Term], random: list[RandomTerm]
    ) -> None:
        tok = self.peek()
        if tok is not None and tok.kind == "op" and tok.text == "(":
            close = self._matching_paren(self.i)
            inner = self.toks[self.i + 1 : close]
            if any(t.kind == "op" and t.text in ("|", "||") for t in inner):
                source = self._source(self.i, close)
                if sign == "-":
                    raise LmmError(f"cannot remove a random term: {source}")
                random.extend(_random_term(source, inner))
                self.i = close + 1
                return
        if tok is not None and tok.kind == "number":
            self.take()
            if tok.text not in ("0", "1"):
                raise LmmError(f"unsupported number {tok.text!r} in formula {self.text!r}")
            # "+ 1" keeps the intercept, "+ 0" / "- 1" drop it
            if (sign == "+" and tok.text == "0") or (sign == "-" and tok.text == "1"):
                removed.append(_NO_INTERCEPT)
            return
        terms = self.parse_cross()
        target = fixed if sign == "+" else removed
        for t in terms:
            if t not in target:
                target.append(t)

    def parse_cross(self) -> list[Term]:
        """a*b, a/b: lowest precedence inside a summand."""
        left = self.parse_inter()
        while True:
            tok = self.peek()
            if tok is not None and tok.kind == "op" and tok.text in ("*", "/"):
                op = self.take().text
                right = self.parse_inter()
                if op == "*":
                    left = _unique(left + right + [a | b for b in right for a in left])
                else:  # a/b == a + a:b (all variables of a interacted with b)
                    whole: Term = frozenset().union(*left)
                    left = _unique(left + [whole | b for b in right])
            else:
                return left

    def parse_inter(self) -> list[Term]:
        left = self.parse_atom()
        while True:
            tok = self.peek()
            if tok is not None and tok.kind == "op" and tok.text == ":":
                self.take()
                right = self.parse_atom()
                left = _unique([a | b for b in right for a in left])
            else:
                return left

    def parse_atom(self) -> list[Term]:
        tok = self.take()
        if tok.kind == "name":
            nxt = self.peek()
            if nxt is not None and nxt.kind == "op" and nxt.text == "(":
                close = self._matching_paren(self.i)
                raise LmmError(
                    f"function calls are not supported in formulas: "
                    f"{tok.text}{self._source(self.i, close)}"
                )
            if tok.text not in self.order:
                self.order.append(tok.text)
            return [frozenset([tok.text])]
        if tok.kind == "op" and tok.text == "(":
            close = self._matching_paren(self.i - 1)
            sub = _Parser(self.text, self.toks[self.i : close])
            sub.order = self.order
            terms = sub.parse_sum_in_parens()
            self.i = close + 1
            return terms
        raise LmmError(f"unsupported term {tok.text!r} in formula {self.text!r}")

    def parse_sum_in_parens(self) -> list[Term]:
        terms: list[Term] = []
        while True:
            terms = _unique(terms + self.parse_cross())
            tok = self.peek()
            if tok is None:
                return terms
            if tok.kind == "op" and tok.text == "+":
                self.take()
                continue
            raise LmmError(f"unsupported {tok.text!r} inside parentheses in {self.text!r}")


def _unique(terms: list[Term]) -> list[Term]:
    out: list[Term] = []
    for t in terms:
        if t not in out:
            out.append(t)
    return out


def _grouping(source: str, rhs: list[_Tok]) -> list[list[str]]:
    """The grouping side of a random term: names joined by ':' (interaction), '/' (nesting)."""
    if not rhs:
        raise LmmError(f"random-effects term {source} has no grouping factor")
    groups: list[list[str]] = [[]]
    expect_name = True
    for t in rhs:
        if expect_name:
            if t.kind != "name":
                raise LmmError(f"unsupported grouping expression in random term {source}")
            groups[-1].append(t.text)
            expect_name = False
        else:
            if t.kind != "op" or t.text not in (":", "/"):
                raise LmmError(f"unsupported grouping expression in random term {source}")
            if t.text == "/":
                groups.append([])
            expect_name = True
    if expect_name:
        raise LmmError(f"random term {source} ends unexpectedly")
    return groups


def _effects(source: str, lhs: list[_Tok]) -> tuple[bool, list[RandomTerm]]:
    """The effect side of a random term: whether it has an intercept, and its other effects
    (slopes and dummy() indicators) as terms without grouping variables."""
    intercept = True
    effects: list[RandomTerm] = []
    i = 0
    sign = "+"
    while i < len(lhs):
        t = lhs[i]
        if t.kind == "op" and t.text in "+-":
            sign = t.text
            i += 1
            continue
        if t.kind == "number" and t.text in ("0", "1"):
            if (sign == "+" and t.text == "0") or (sign == "-" and t.text == "1"):
                intercept = False
            i += 1
        elif t.kind == "name" and sign == "+":
            nxt = lhs[i + 1] if i + 1 < len(lhs) else None
            if nxt is not None and nxt.kind == "op" and nxt.text == "(":
                call = lhs[i : i + 6]
                kinds = [(c.kind, c.text if c.kind == "op" else "") for c in call]
                if t.text != "dummy" or kinds[1:] != [
                    ("op", "("),
                    ("name", ""),
                    ("op", ","),
                    ("string", ""),
                    ("op", ")"),
                ]:
                    raise LmmError(
                        f"unsupported function in random term {source}: only "
                        'dummy(factor, "level") is supported'
                    )
                slope = None
                after = lhs[i + 6 : i + 8]
                if len(after) == 2 and after[0].text == ":" and after[1].kind == "name":
                    slope = after[1].text  # dummy(f, "A"):x, a slope on one level's rows
                    i += 2
                indicator = (call[2].text, call[4].text)
                effects.append(RandomTerm("", (), slope=slope, indicator=indicator))
                i += 6
            else:
                effects.append(RandomTerm("", (), slope=t.text))
                i += 1
        else:
            raise LmmError(f"unsupported effect {t.text!r} in random term {source}")
        sign = ""
    if i == 0:
        raise LmmError(f"random term {source} has nothing before the bar")
    return intercept, effects


def _random_term(source: str, inner: list[_Tok]) -> list[RandomTerm]:
    """Expand one parenthesised random term into terms with one variance parameter each."""
    bars = [j for j, t in enumerate(inner) if t.kind == "op" and t.text in ("|", "||")]
    if len(bars) != 1:
        raise LmmError(f"unsupported random-effects term {source}: one '|' or '||' expected")
    double = inner[bars[0]].text == "||"
    intercept, effects = _effects(source, inner[: bars[0]])
    groups = _grouping(source, inner[bars[0] + 1 :])
    if effects and len(groups) > 1:
        raise LmmError(f"random slopes with a nested grouping (a/b) are not supported: {source}")
    if not double and intercept and effects:
        raise LmmError(
            f"correlated random effects {source} are not supported; use uncorrelated ones "
            "with '||', e.g. (1 + x || g)"
        )
    if not double and len(effects) > 1:
        raise LmmError(f"correlated random effects {source} are not supported; use '||'")
    if not intercept and not effects:
        raise LmmError(f"random term {source} has no effect (neither intercept nor slope)")
    out: list[RandomTerm] = []
    prefix: list[str] = []
    for g in groups:
        prefix = prefix + g
        if len(set(prefix)) != len(prefix):
            raise LmmError(f"grouping variable repeated in random term {source}")
        if intercept:
            out.append(RandomTerm(":".join(prefix), tuple(prefix)))
    for e in effects:
        term = RandomTerm("", tuple(prefix), slope=e.slope, indicator=e.indicator)
        out.append(RandomTerm(f"{term.effect}|{term.group}", term.variables, e.slope, e.indicator))
    return out


def parse_formula(formula: str) -> ParsedFormula:
    """Parse an lme4 formula (see the module docstring); raise LmmError otherwise."""
    if not isinstance(formula, str):
        raise LmmError(f"formula must be a string: {formula!r}")
    tokens = _tokenize(formula)
    tildes = [j for j, t in enumerate(tokens) if t.kind == "op" and t.text == "~"]
    if len(tildes) != 1:  # a "~" inside a quoted level (dummy(system, "A~")) does not count
        raise LmmError(f"formula must contain exactly one '~': {formula!r}")
    tilde = tildes[0]
    lhs = tokens[:tilde]
    if len(lhs) != 1 or lhs[0].kind != "name":
        raise LmmError(f"the response must be a single column name: {formula!r}")
    parser = _Parser(formula, tokens[tilde + 1 :])
    if not parser.toks:
        raise LmmError(f"formula has no right-hand side: {formula!r}")
    intercept, fixed, random = parser.parse_rhs()
    if not random:
        raise LmmError(f"no random-effects terms in formula {formula!r}; use (1|g)")
    names = [r.name for r in random]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise LmmError(f"random term(s) {dupes} appear more than once in {formula!r}")
    response = lhs[0].text
    order = parser.order
    if response in order:
        raise LmmError(f"the response {response!r} also appears on the right-hand side")
    ordered = sorted(fixed, key=len)  # stable: R sorts terms by degree, then appearance
    fixed_terms = tuple(tuple(v for v in order if v in t) for t in ordered)
    used = [v for v in order if any(v in t for t in fixed_terms)]
    return ParsedFormula(
        formula=formula,
        response=response,
        intercept=intercept,
        fixed_terms=fixed_terms,
        random_terms=tuple(random),
        fixed_variables=tuple(used),
    )
