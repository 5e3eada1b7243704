"""Shared pytest fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The repository's root folder."""
    return REPO_ROOT


@pytest.fixture(scope="session")
def shared_data_dir() -> Path:
    """`../shared/data` beside the checkout; tests that need it skip when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not present")
    return SHARED_DATA


@pytest.fixture(scope="session")
def kreutzer_dir(shared_data_dir: Path) -> Path:
    """The Kreutzer et al. (2020) TER data folder."""
    path = shared_data_dir / "kreutzer2020"
    if not path.is_dir():
        pytest.skip("../shared/data/kreutzer2020 is not present")
    return path
