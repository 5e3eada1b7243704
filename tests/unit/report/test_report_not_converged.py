"""The headline cards name a VCA fit that did not converge instead of showing phi or shares
from it (docs/method.md §4.6.1)."""

from __future__ import annotations

import pandas as pd

from infrepro.core.vocabulary import NOT_CONVERGED, TABLE_SPECS, VCA_RUN_AWARE
from infrepro.report.sections.headline import metaparameter_note, reliability_note


def frame(name: str, rows: list[dict[str, object]]) -> pd.DataFrame:
    return pd.DataFrame(rows).reindex(columns=list(TABLE_SPECS[name].names))


def reliability_row(system: str, converged: bool, **values: object) -> dict[str, object]:
    return {
        "metric": "ter",
        "system": system,
        "vca": VCA_RUN_AWARE,
        "converged": converged,
        "phi": float("nan"),
        "label": NOT_CONVERGED,
        "n_per_facet_for_phi_08": float("nan"),
        "runs_for_phi_08": float("nan"),
        "retrain_sd_points": float("nan"),
        "metaparam_sd_points": float("nan"),
        **values,
    }


def tables() -> dict[str, pd.DataFrame]:
    return {
        "reliability": frame(
            "reliability",
            [
                reliability_row("base", False, retrain_sd_points=0.0, metaparam_sd_points=0.0),
                reliability_row("comp", True, phi=0.91, label="excellent", retrain_sd_points=2.7),
            ],
        ),
        "variance_components": frame(
            "variance_components",
            [
                {
                    "metric": "ter",
                    "system": "base",
                    "vca": VCA_RUN_AWARE,
                    "component": c,
                    "variance": 0.0,
                    "percent": float("nan"),
                    "converged": False,
                }
                for c in ("segment_id", "seed", "Residual")
            ],
        ),
        "importance": frame(
            "importance",
            [
                {
                    "metric": "ter",
                    "system": "comp",
                    "facet": "seed",
                    "variance": 1e-4,
                    "percent": 9.1,
                    "rank": 1,
                    "dominant": True,
                }
            ],
        ),
    }


def test_reliability_card_says_not_estimated_for_a_non_converged_vca() -> None:
    text = reliability_note(tables(), "ter", ["base", "comp"])
    assert f"base not estimated (VCA fit {NOT_CONVERGED}" in text
    assert "base 0.00" not in text and "base –" not in text
    assert "comp 0.91 (excellent" in text


def test_metaparameter_card_gives_no_share_for_a_non_converged_vca() -> None:
    text = metaparameter_note(tables(), "ter", ["base", "comp"])
    assert f"no shares for base (VCA fit {NOT_CONVERGED})" in text
    assert "seed explains 9.1% of comp's score variance" in text
