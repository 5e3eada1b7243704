"""Every model formula the analyses fit, in one place (docs/method.md §4).

Two families:
- the paper's models (ML fits, GLRTs): runs are fixed, so the inference is conditional on the
  trained runs (paper eq. 3-4, 6-7);
- the run-aware models (REML fits, t/F tests with Kenward-Roger or Satterthwaite df): runs are
  draws of training configurations, each system with its own run variance (``dummy()`` terms),
  and runs with their own slopes on a data property (``(1 + d || run_id)``).
"""

from __future__ import annotations

from collections.abc import Sequence

SEGMENT_TERM = "(1|segment_id)"
RUN_TERM = "(1|run_id)"


def comparison_formulas(metric: str, run_aware: bool) -> tuple[str, str]:
    """H1 and H0 of the paper's system comparison (eq. 3-4), optionally + (1|run_id)."""
    random = SEGMENT_TERM + (f" + {RUN_TERM}" if run_aware else "")
    return f"{metric} ~ system + {random}", f"{metric} ~ 1 + {random}"


def property_formulas(metric: str, factor: str, prop: str) -> dict[str, str]:
    """The paper's H1 and two H0s of the conditional tests (eq. 6-7, thesis ch. 2)."""
    return {
        "h1": f"{metric} ~ {factor} * {prop} + {SEGMENT_TERM}",
        "h0_joint": f"{metric} ~ {prop} + {SEGMENT_TERM}",
        "h0_interaction": f"{metric} ~ {factor} + {prop} + {SEGMENT_TERM}",
    }


def _string(level: str) -> str:
    quote = '"' if '"' not in level else "'"
    return f"{quote}{level}{quote}"


def dummy_term(factor: str, level: str, group: str) -> str:
    """lme4's ``(0 + dummy(factor, "level")|group)``: a variance of group for one level."""
    return f"(0 + dummy({factor}, {_string(level)})|{group})"


def run_terms(systems_with_runs: Sequence[str], pooled: bool) -> str:
    """A run variance per system, or one shared ``(1|run_id)`` when ``pooled``."""
    if pooled:
        return RUN_TERM
    return " + ".join(dummy_term("system", s, "run_id") for s in systems_with_runs)


def headline_formula(metric: str, systems: Sequence[str], pooled: bool) -> str:
    """The run-aware comparison: ``score ~ system + (1|s) + per-system run intercepts``."""
    return f"{metric} ~ system + {SEGMENT_TERM} + {run_terms(systems, pooled)}"


def facet_aware_formula(
    metric: str, systems: Sequence[str], facet_groups: dict[str, list[str]]
) -> str:
    """The headline model plus per-system intercepts of the facets their runs share (and
    their crossings): facet levels are draws from their population."""
    extra = [dummy_term("system", s, g) for s, groups in facet_groups.items() for g in groups]
    return " + ".join([headline_formula(metric, systems, pooled=False), *extra])


def runaware_property_formula(
    metric: str, factor: str, prop: str, numeric: bool, run_part: str
) -> str:
    """The run-aware conditional model: runs get their own slope on a numeric property
    (``(1 + d || run_id)``); for a categorical one, run intercepts (``run_part``) plus a run
    effect per level (``(1|run_id:d)``), the categorical analogue of a random slope."""
    runs = f"(1 + {prop} || run_id)" if numeric else f"{run_part} + (1|run_id:{prop})"
    return f"{metric} ~ {factor} * {prop} + {SEGMENT_TERM} + {runs}"


def effect_scale_formula(metric: str) -> str:
    """The model whose sqrt(segment + run + residual variance) scales every effect size."""
    return f"{metric} ~ system + {SEGMENT_TERM} + {RUN_TERM}"
