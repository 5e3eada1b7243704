"""infrepro.lmm: random-intercept linear mixed models fitted as lme4 fits them.

``fit(formula, data, reml=...)`` minimizes lme4's profiled deviance (Bates et al. 2015) on
precomputed cross-products with a structured (block-diagonal + Schur complement) factorization;
``lrt(m0, m1)`` is the GLRT of nested ML fits.
"""

from .errors import LmmError
from .fit import deviance_function, fit
from .formula import ParsedFormula, RandomTerm, parse_formula
from .lrt import LrtResult, lrt
from .result import LmmResult

__all__ = [
    "LmmError",
    "LmmResult",
    "LrtResult",
    "ParsedFormula",
    "RandomTerm",
    "deviance_function",
    "fit",
    "lrt",
    "parse_formula",
]
