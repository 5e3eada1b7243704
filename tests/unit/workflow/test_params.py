"""Snakemake's params check imports pandas only when a param can be a pandas object
(infrepro.workflow.snakemake_door.serialize_params_lazily): the same text for every param,
without the import on a no-op."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pandas as pd
import pytest
from snakemake.persistence import PersistenceBase
from snakemake.persistence.file import FilePersistence

from infrepro.workflow import snakemake_door as params

VALUES = [
    "report",
    3,
    0.05,
    None,
    ("a", 1),
    ["1", "NA", "comp "],
    {"ter": "lower", "rouge1": "higher"},
    frozenset({"x"}),
]


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch) -> FilePersistence:
    """The lazy choice installed (undone after the test), on a PersistenceBase without its set-up
    (its serializers use no state)."""
    original = PersistenceBase.__dict__["_serialize_param"]
    monkeypatch.setattr(PersistenceBase, "_serialize_param", original)
    assert params.serialize_params_lazily()
    assert params.serialize_params_lazily()  # installed once
    return object.__new__(FilePersistence)  # Snakemake's default store


def test_same_text_as_snakemakes_serializer(installed: FilePersistence) -> None:
    for value in [*VALUES, pd.DataFrame({"a": [1, 2]}), pd.Series([0.5]), pd.Index(["x"])]:
        assert installed._serialize_param(value) == installed._serialize_param_pandas(value)


def test_a_dataframe_param_is_hashed_by_content(installed: FilePersistence) -> None:
    one = installed._serialize_param(pd.DataFrame({"a": [1, 2]}))
    assert one == installed._serialize_param(pd.DataFrame({"a": [1, 2]}))
    assert one != installed._serialize_param(pd.DataFrame({"a": [1, 3]}))


def test_no_pandas_import_before_pandas_is_needed() -> None:
    """In a process that has not imported pandas, serializing params leaves it unimported and
    gives Snakemake's built-in text."""
    code = textwrap.dedent(
        f"""
        import sys
        from snakemake.persistence.file import FilePersistence
        from infrepro.workflow.snakemake_door import serialize_params_lazily
        assert "pandas" not in sys.modules, "imported before the test"
        assert serialize_params_lazily()
        persistence = object.__new__(FilePersistence)
        texts = [persistence._serialize_param(v) for v in {VALUES!r}]
        assert "pandas" not in sys.modules, "imported by the params check"
        assert texts == [persistence._serialize_param_builtin(v) for v in {VALUES!r}]
        print("ok")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_left_alone_when_snakemakes_method_differs(monkeypatch: pytest.MonkeyPatch) -> None:
    def other(self, value):  # noqa: ANN001, ANN202
        return repr(value)

    monkeypatch.setattr(PersistenceBase, "_serialize_param", other)
    assert not params.serialize_params_lazily()
    assert PersistenceBase._serialize_param is other
