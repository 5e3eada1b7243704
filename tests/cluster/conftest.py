"""Fixtures and markers of the SLURM cluster test."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "cluster: starts a single-node SLURM cluster (opt-in: INFREPRO_SLURM_TEST)"
    )
