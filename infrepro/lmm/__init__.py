"""infrepro.lmm: linear mixed models with one variance parameter per random term (intercepts,
uncorrelated slopes, per-level intercepts), fitted as lme4 fits them.

``fit(formula, data, reml=...)`` minimizes lme4's profiled deviance (Bates et al. 2015) on
precomputed cross-products with a structured (block-diagonal + Schur complement) factorization;
``lrt(m0, m1)`` is the GLRT of nested ML fits; ``LmmResult.contest(L, method)`` tests fixed-effect
contrasts with Kenward-Roger or Satterthwaite denominator df (ddf.py).
"""

from infrepro.lmm.cache import FitCache
from infrepro.lmm.ddf import KENWARD_ROGER, SATTERTHWAITE, ContrastTest
from infrepro.lmm.errors import LmmError
from infrepro.lmm.fit import FEW_LEVELS, deviance_function, fit
from infrepro.lmm.formula import ParsedFormula, RandomTerm, parse_formula
from infrepro.lmm.lrt import LrtResult, lrt
from infrepro.lmm.result import LmmResult

__all__ = [
    "FEW_LEVELS",
    "KENWARD_ROGER",
    "SATTERTHWAITE",
    "ContrastTest",
    "FitCache",
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
