"""The headline's shared notes name the systems whose cards are shown and give the others'
values as a range: at 200 systems they listed every system (5,000 px of the page)."""

from __future__ import annotations

import pandas as pd

from infrepro.core.vocabulary import TABLE_SPECS, VCA_RUN_AWARE
from infrepro.report.sections.headline import metaparameter_note, reliability_note

PHI = {"base": 0.73, "s1": 0.91, "s2": 0.62, "s3": 0.80, "s4": 0.55}
SHARE = {"base": 3.0, "s1": 9.1, "s2": 0.4, "s3": 12.5, "s4": 2.0}


def frame(name: str, rows: list[dict[str, object]]) -> pd.DataFrame:
    return pd.DataFrame(rows).reindex(columns=list(TABLE_SPECS[name].names))


def tables() -> dict[str, pd.DataFrame]:
    reliability = [
        {"metric": "ter", "system": s, "vca": VCA_RUN_AWARE, "converged": True, "phi": phi,
         "label": "moderate", "n_per_facet_for_phi_08": float("nan"),
         "runs_for_phi_08": float("nan"), "retrain_sd_points": float("nan"),
         "metaparam_sd_points": float("nan")}
        for s, phi in PHI.items()
    ]  # fmt: skip
    importance = [
        {"metric": "ter", "system": s, "facet": "seed", "variance": 1e-4, "percent": share,
         "rank": 1, "dominant": True}
        for s, share in SHARE.items()
    ]  # fmt: skip
    return {
        "reliability": frame("reliability", reliability),
        "importance": frame("importance", importance),
        "variance_components": frame("variance_components", []),
    }


def test_reliability_note_names_the_shown_systems_and_ranges_the_others() -> None:
    text = reliability_note(tables(), "ter", ["base", "s1"], ["s2", "s3", "s4"])
    assert "base 0.73 (moderate" in text and "s1 0.91 (moderate" in text
    assert "φ of the other 3 systems 0.55–0.80 (each under Reliability)" in text
    assert not any(f"{s} 0." in text for s in ("s2", "s3", "s4"))
    alone = reliability_note(tables(), "ter", ["base", "s1"])
    assert "other" not in alone and alone.startswith(text.split(";")[0])


def test_metaparameter_note_names_the_shown_systems_and_ranges_the_others() -> None:
    text = metaparameter_note(tables(), "ter", ["base", "s1"], ["s2", "s3", "s4"])
    assert "seed explains 9.1% of s1's score variance" in text
    assert "the first meta-parameter's share of the other 3 systems 0.4–12.5%" in text
    assert "s3's" not in text
