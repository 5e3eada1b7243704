"""A decision record for the report's tests (docs/method.md §4c.11): bl against comp in the
``baseline`` family, comp worse by 4.00 TER points over retraining (M's t, KR df 18.9, p 0.0223),
the facet-aware reading p 0.46 at 2.4 df, best vs best (dev-selected) the other way round by
5.00 points; each test changes what it is about. The comparison and its estimand follow the
run counts (§4c.4) unless a test names them."""

from __future__ import annotations

import math

from infrepro.core.decisions import PairDecision, comparison_of, estimand_text, single_look


def p_fields(p_value: str, log10_p: float) -> dict[str, object]:
    """A record's p-value, adjusted the same as unadjusted (one comparison)."""
    return dict(p_value=p_value, log10_p=log10_p, p_adjusted=p_value, log10_p_adjusted=log10_p)


BASE = dict(
    metric="ter",
    family="baseline",
    family_size=1,
    adjust="max-t",
    reference="bl",
    system="comp",
    runs_reference=6,
    runs_system=18,
    improvement=-0.04,
    se=0.015,
    df=18.87,
    df_method="Kenward-Roger",
    test="t with Kenward-Roger df 18.9",
    statistic=-2.67,
    critical=2.09,
    lower=-0.0714,
    upper=-0.0086,
    interval="simultaneous 95 %",
    level=0.05,
    **p_fields("0.0223", -1.652),
    verdict="worse",
    assumption="",
    generalises=False,
    facet_aware_p="0.46",
    log10_facet_aware_p=-0.337,
    facet_aware_df=2.37,
    run_sd_ratio=math.nan,
    run_sd_ratio_lower=math.nan,
    run_sd_ratio_upper=math.nan,
    band=2.0,
    prior_df=math.nan,
    survival="reversed over retraining",
    best_vs_best=0.05,
    min_effect=2.0,
    power=0.31,
    few_runs="",
    model='ter ~ system + (1|segment_id) + (0 + dummy(system, "bl")|run_id)',
    note="",
)

# the base record's test the other way round: comp better by 4.00 points
COMP_BETTER = dict(improvement=0.04, statistic=2.67, lower=0.0086, upper=0.0714, verdict="better")
# no facet-aware reading (no system's runs share facet levels)
NO_FACET_AWARE = dict(facet_aware_p="", log10_facet_aware_p=math.nan, facet_aware_df=math.nan)


def record(**changes) -> PairDecision:
    """The base record with ``changes``, read at one look of its runs (§4e.10)."""
    fields = {**BASE, **changes}
    runs = int(fields["runs_reference"]), int(fields["runs_system"])
    comparison = str(changes.get("comparison", comparison_of(*runs)))
    estimand = estimand_text(comparison, str(fields["reference"]), str(fields["system"]), runs[0])
    derived = {"comparison": comparison, "estimand": estimand}
    return PairDecision(**{**single_look(*runs), **derived, **fields})
