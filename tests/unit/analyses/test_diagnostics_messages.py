"""diagnostics.csv says what happened: a test that fails on a fitted model says the model was
fitted (it was reported as if the model had been skipped); a system whose facets named in
analyses.metaparam_facets do not vary says so (it read 'no facet with two or more levels')."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from label_experiments import generate, run_in_process  # noqa: E402


def diagnostics(tables: dict[str, str]) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(tables["diagnostics"]), dtype=str, keep_default_na=False)


def test_a_failed_test_on_a_fitted_model_says_the_model_was_fitted(tmp_path) -> None:
    """Design 0's run-aware system x plenx model is fitted at the boundary and its KR df for
    the joint test are -2: the row names the fitted model as fitted and the df as the cause."""
    diag = diagnostics(run_in_process(generate(0), tmp_path, ["conditional"]))
    fitted = diag[(diag["analysis"] == "conditional_runaware") & (diag["property"] == "plenx")]
    assert list(fitted["status"]) == ["fitted"] and list(fitted["singular"]) == ["True"]
    (reason,) = diag[
        (diag["analysis"] == "conditional_runaware_joint") & (diag["property"] == "plenx")
    ]["reason"]
    model = fitted["model"].iloc[0]
    assert reason == (
        f"the model {model} was fitted (singular: a variance is estimated at 0), but its "
        "Kenward-Roger df for this test are -2, not a positive number: the test is not reported"
    )


def test_a_named_facet_a_system_lacks_is_named(tmp_path) -> None:
    """metaparam_facets = [facB]; sysA's runs share one level of facB but vary in facA."""
    experiment = generate(next(d for d in range(50) if len(generate(d).facets) == 2))
    scores = experiment.scores
    scores.loc[scores["system"] == "sysA", "facB"] = experiment.levels["facB"][0]
    base_config = experiment.config

    def config(path, analyses):
        out = base_config(path, analyses)
        out["analyses"]["metaparam_facets"] = ["facB"]
        return out

    experiment.config = config
    diag = diagnostics(run_in_process(experiment, tmp_path, ["metaparam"]))
    skipped = diag[(diag["analysis"] == "metaparam") & (diag["status"] == "skipped")]
    reasons = dict(zip(skipped["subset"], skipped["reason"], strict=True))
    assert reasons["sysA"] == (
        "sysA: 'facB' (named in analyses.metaparam_facets) has fewer than two levels among its "
        "runs, so it is not tested; its varying facets: 'facA'"
    )
    assert "no facet with two or more levels" not in " ".join(skipped["reason"])
