"""The one door to Snakemake's internals (infrepro.workflow.snakemake_door): open only for a
tested Snakemake and without INFREPRO_PLAIN_SNAKEMAKE, shut (no patch) otherwise, and what it
uses present in the Snakemake installed."""

from __future__ import annotations

import re
import threading
import tomllib
from collections.abc import Iterator

import pytest
import snakemake.api  # noqa: F401  (snakemake.workflow is importable only after it)
from snakemake.io import _IOFile
from snakemake.persistence import PersistenceBase
from snakemake.scheduling.job_scheduler import JobScheduler
from snakemake.workflow import Workflow
from workflow_helpers import REPO_ROOT

from infrepro.workflow import snakemake_door as door


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """No switch set, the door's decision not yet made, and Snakemake's methods restored to the
    ones the test found (whatever the test installs is undone)."""
    monkeypatch.delenv(door.PLAIN_VARIABLE, raising=False)
    monkeypatch.delenv(door.VERSION_VARIABLE, raising=False)
    monkeypatch.setattr(_IOFile, "checksum", _IOFile.checksum)
    serializer = PersistenceBase.__dict__["_serialize_param"]
    monkeypatch.setattr(PersistenceBase, "_serialize_param", serializer)
    door.internals_allowed.cache_clear()
    yield monkeypatch
    door.internals_allowed.cache_clear()


def test_versions_inside_and_outside_the_tested_range() -> None:
    first, untested = door.TESTED_SNAKEMAKE
    assert door.tested(first) and door.tested(first + ".0") and door.tested(first + ".9")
    assert door.tested("9.27.1") and door.tested("9.27.1.post2+g123")
    for version in ("9.26.1", "9.28.0", untested, "10.0.0", "10.0a1", "8.30.0", "9"):
        assert not door.tested(version), version
    with pytest.raises(ValueError, match="not a version number"):
        door.tested("main")


def pinned(name: str) -> str:
    """The version constraints.txt pins for a package."""
    constraints = (REPO_ROOT / "constraints.txt").read_text()
    match = re.search(rf"^{re.escape(name)}==(\S+)$", constraints, re.M)
    assert match, f"constraints.txt pins no {name}"
    return match.group(1)


def test_the_pinned_snakemake_is_tested_and_the_package_bounds_its_major_version() -> None:
    """constraints.txt's Snakemake (the one CI installs) is inside the tested range: a new pin
    must be tested with the door open before the range lets it in. pyproject.toml allows no
    Snakemake of another major version than the tested one."""
    version = pinned("snakemake")
    assert door.tested(version), (version, door.TESTED_SNAKEMAKE)
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
    (requirement,) = [d for d in project["project"]["dependencies"] if d.startswith("snakemake")]
    major = door.version_key(version)[0]
    assert requirement.replace(" ", "") == f"snakemake>={major}.0,<{major + 1}"


def test_a_tested_snakemake_opens_the_door(fresh: pytest.MonkeyPatch) -> None:
    fresh.setenv(door.VERSION_VARIABLE, door.TESTED_SNAKEMAKE[0])
    assert door.internals_allowed()
    assert door.open_door()
    assert getattr(_IOFile.checksum, "remembers", False)
    assert PersistenceBase.__dict__["_serialize_param"].fget is door._serializer


def shut_twice(capsys: pytest.CaptureFixture[str]) -> list[str]:
    """Asked twice, the door stays shut and patches nothing; the lines it wrote to stderr."""
    original_checksum = _IOFile.checksum
    original_serializer = PersistenceBase.__dict__["_serialize_param"]
    assert not door.open_door()
    assert not door.open_door()
    assert _IOFile.checksum is original_checksum
    assert PersistenceBase.__dict__["_serialize_param"] is original_serializer
    return capsys.readouterr().err.splitlines()


@pytest.mark.parametrize("value", ["1", "yes", "true"])
def test_the_switch_shuts_the_door_and_says_so_once(
    fresh: pytest.MonkeyPatch, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Whatever the version: no patch, one line naming the variable, none about versions."""
    fresh.setenv(door.PLAIN_VARIABLE, value)
    fresh.setenv(door.VERSION_VARIABLE, "10.0.0")
    lines = shut_twice(capsys)
    assert lines == [f"infrepro: {door.PLAIN_VARIABLE} is set: running as plain Snakemake"]


@pytest.mark.parametrize("value", ["", "0", " 0 "])
def test_the_switch_unset_or_zero_leaves_the_door_to_the_version(
    fresh: pytest.MonkeyPatch, value: str
) -> None:
    fresh.setenv(door.PLAIN_VARIABLE, value)
    fresh.setenv(door.VERSION_VARIABLE, "9.27.1")
    assert door.internals_allowed()


@pytest.mark.parametrize("version", ["9.28.0", "10.1.0", "9.20.0"])
def test_an_untested_snakemake_shuts_the_door_and_says_so_once(
    fresh: pytest.MonkeyPatch, version: str, capsys: pytest.CaptureFixture[str]
) -> None:
    fresh.setenv(door.VERSION_VARIABLE, version)
    lines = shut_twice(capsys)
    assert not door.internals_allowed()
    assert len(lines) == 1, lines
    first, untested = door.TESTED_SNAKEMAKE
    assert f"Snakemake {version} " in lines[0] and f">={first},<{untested}" in lines[0]
    assert "plain Snakemake" in lines[0]


def test_without_the_variable_the_installed_version_decides(fresh: pytest.MonkeyPatch) -> None:
    import importlib.metadata

    installed = importlib.metadata.version("snakemake")
    assert door.installed_snakemake() == installed
    assert door.internals_allowed() == door.tested(installed)


class _Scheduler:
    """Stands in for Snakemake's JobScheduler: its timers run a lambda defined in a method of
    this (misspelled, as Snakemake spells it) name."""

    def __init__(self) -> None:
        self.released = threading.Event()

    def _schedule_reevalutation(self, delay: float) -> threading.Timer:
        timer = threading.Timer(delay, lambda: self.released.set())
        timer.start()
        return timer


def test_only_the_schedulers_timers_are_cancelled() -> None:
    scheduler = _Scheduler()
    theirs = scheduler._schedule_reevalutation(30.0)
    other_fired = threading.Event()
    other = threading.Timer(30.0, other_fired.set)
    other.start()
    try:
        assert door.cancel_scheduler_timers() == 1
        theirs.join(timeout=5)
        assert not theirs.is_alive() and not scheduler.released.is_set()
        assert other.is_alive()
    finally:
        other.cancel()
        theirs.cancel()


def test_the_installed_snakemake_has_what_the_door_uses(fresh: pytest.MonkeyPatch) -> None:
    """Each internal the door uses is where it was when the range was tested (CI installs the
    pinned, tested Snakemake): a patch that would be left alone, a timer renamed or an
    attribute gone fails here, not silently in a run. An untested Snakemake keeps the door
    shut, whatever it has."""
    if not door.tested(door.installed_snakemake()):
        assert not door.open_door()
        return
    assert door.remember_checksums()
    assert door.serialize_params_lazily()
    assert callable(getattr(JobScheduler, door.SCHEDULER_TIMER))
    for name in ("is_main_process", "local_exec", "overwrite_configfiles"):
        assert isinstance(getattr(Workflow, name), property), name
    workflow = object.__new__(Workflow)
    workflow.configfiles = ["a.yaml"]
    assert door.configfiles(workflow) == ["a.yaml"]
