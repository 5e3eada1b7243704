"""Each kept store's version (infrepro.plumbing.kept.KeptStore.version) and the kept values'
keys (infrepro.plumbing.memo.content_digest) change with every library whose change could change
what they hold: a store written under numba 0.60 is not read under 0.61, nor one written on
another BLAS."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from importlib import metadata

import pytest
import threadpoolctl

from infrepro.analyses.common.units import UnitStore
from infrepro.experiment.kept import ExperimentStore
from infrepro.metrics.kept_tokens import TokenStore
from infrepro.plots.cache import FigureStore
from infrepro.plumbing import memo, sources

# What each store's values are computed with, besides the package's source and Python.
NUMBERS = ("numpy", "scipy", "pandas", "matplotlib", "numba", "llvmlite")
DEPENDS_ON: dict[str, tuple[Callable[[], str], tuple[str, ...]]] = {
    "units": (UnitStore.version, NUMBERS),
    "figures": (FigureStore.version, NUMBERS),
    "unit and figure keys": (lambda: memo.content_digest("a key", 1.0), NUMBERS),
    "tokens": (TokenStore.version, ("nltk", "rouge-score")),
    "experiment": (ExperimentStore.version, ("pandas", "numpy", "pyarrow")),
}
CASES = [(store, library) for store, (_, libraries) in DEPENDS_ON.items() for library in libraries]
WITH_BLAS = ("units", "figures", "unit and figure keys")


def forget() -> None:
    sources.library_versions.cache_clear()
    memo.code_digest.cache_clear()


@pytest.fixture(autouse=True)
def afresh() -> Iterator[None]:
    """Versions computed afresh in each test, and again after it (without its patches)."""
    forget()
    yield
    forget()


@pytest.mark.parametrize(("store", "library"), CASES)
def test_another_library_version_another_key(
    store: str, library: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    version, _ = DEPENDS_ON[store]
    before = version()
    installed = metadata.version

    def other(name: str) -> str:
        return "0.0.0-other" if name == library else installed(name)

    monkeypatch.setattr(metadata, "version", other)
    forget()
    assert version() != before


@pytest.mark.parametrize("store", sorted(DEPENDS_ON))
def test_another_python_another_key(store: str, monkeypatch: pytest.MonkeyPatch) -> None:
    version, _ = DEPENDS_ON[store]
    before = version()
    monkeypatch.setattr("platform.python_version", lambda: "3.99.0")
    forget()
    assert version() != before


@pytest.mark.parametrize("store", WITH_BLAS)
@pytest.mark.parametrize("field", ["internal_api", "version", "filepath", "architecture"])
def test_another_blas_another_key(store: str, field: str, monkeypatch: pytest.MonkeyPatch) -> None:
    version, _ = DEPENDS_ON[store]
    before = version()
    loaded = threadpoolctl.threadpool_info()
    assert any(info["user_api"] == "blas" for info in loaded)  # numpy's BLAS, at least

    def other() -> list[dict[str, object]]:
        return [{**info, field: "other"} if info["user_api"] == "blas" else info for info in loaded]

    monkeypatch.setattr(threadpoolctl, "threadpool_info", other)
    forget()
    assert version() != before


def test_a_blas_thread_count_is_no_part_of_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """The workers and the engine set BLAS to one thread for every fit (jobs.py, lmm/blas.py):
    the process' default count, which the key is computed under, decides no number."""
    before = memo.code_digest()
    loaded = threadpoolctl.threadpool_info()
    monkeypatch.setattr(
        threadpoolctl, "threadpool_info", lambda: [{**i, "num_threads": 64} for i in loaded]
    )
    forget()
    assert memo.code_digest() == before


def test_a_missing_library_is_named_not_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", missing)
    assert sources.library_versions("krippendorff") == "krippendorff absent"
