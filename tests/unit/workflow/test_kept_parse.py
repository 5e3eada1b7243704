"""What a parse keeps for the next one (infrepro.experiment.kept, infrepro.workflow.digests): the
checked Experiment and the input files' SHA-256, given back only while the config, the code and
every file's state are as they were; any change runs the full check or reads the file again."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from workflow_helpers import MiniExperiment, make_mini_experiment

from infrepro.experiment import kept
from infrepro.experiment.kept import kept_experiment
from infrepro.io.config import check_config
from infrepro.io.errors import InputError
from infrepro.workflow import digests
from infrepro.workflow.digests import KeptDigests

STORE = ".snakemake/infrepro/experiment.json"


@pytest.fixture
def experiment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    make_mini_experiment(tmp_path, n_segments=5, metrics=("ter", "rouge1"), properties=("length",))
    monkeypatch.chdir(tmp_path)
    config = json.loads(json.dumps(_config(tmp_path)))
    check_config(config)
    return config


def _config(root: Path) -> dict:
    import yaml

    config = yaml.safe_load((root / "config.yaml").read_text())
    config["better"] = {"rouge1": "higher", "ter": "lower"}  # not the metrics' order
    return config


def count_checks(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Calls of the full check (load_experiment), with their check_hypotheses."""
    from infrepro.experiment import load

    calls: list[bool] = []
    original = load.load_experiment

    def counted(config, *, check_hypotheses=True, **others):
        calls.append(check_hypotheses)
        return original(config, check_hypotheses=check_hypotheses, **others)

    monkeypatch.setattr(load, "load_experiment", counted)
    return calls


def test_an_unchanged_experiment_comes_back_equal_without_a_check(experiment, monkeypatch) -> None:
    calls = count_checks(monkeypatch)
    first = kept_experiment(experiment, check_hypotheses=True, path=STORE)
    again = kept_experiment(experiment, check_hypotheses=True, path=STORE)
    assert calls == [True]
    assert again == first
    # dict order too: Snakemake compares a rule's params by their repr
    assert list(again.better.items()) == list(first.better.items())
    assert repr(again) == repr(first)
    assert again.hypotheses_path(again.run_ids[0]) == first.hypotheses_path(first.run_ids[0])
    # a job process (no hypotheses check) may use it; a new check is not needed
    kept_experiment(experiment, check_hypotheses=False, path=STORE)
    assert calls == [True]


def test_a_content_change_behind_an_old_mtime_is_checked_again(experiment, monkeypatch) -> None:
    calls = count_checks(monkeypatch)
    kept_experiment(experiment, check_hypotheses=True, path=STORE)
    hyp = Path("hyps/comp_s1.txt")
    before = hyp.stat()
    lines = hyp.read_text().splitlines()
    hyp.write_text("\n".join(lines[:-1]) + "\n")  # a line short: the check must refuse it
    os.utime(hyp, ns=(before.st_atime_ns, before.st_mtime_ns))  # as `touch -d`, `cp -p` do
    with pytest.raises(InputError, match="comp_s1"):
        kept_experiment(experiment, check_hypotheses=True, path=STORE)
    assert calls == [True, True]


@pytest.mark.parametrize("change", ["config", "code", "order", "store", "skipped"])
def test_any_other_change_runs_the_check(experiment, monkeypatch, change: str) -> None:
    calls = count_checks(monkeypatch)
    kept_experiment(experiment, check_hypotheses=change != "skipped", path=STORE)
    if change == "config":
        experiment["report"]["alpha"] = 0.01
    elif change == "order":
        experiment["better"] = dict(reversed(list(experiment["better"].items())))
    elif change == "code":
        monkeypatch.setattr(kept, "source_digest", lambda: b"other code")
    elif change == "store":
        Path(STORE).write_text("{not json")
    again = kept_experiment(experiment, check_hypotheses=True, path=STORE)
    assert len(calls) == 2 and calls[-1] is True
    from infrepro.experiment.load import load_experiment

    assert repr(again) == repr(load_experiment(experiment))  # the check's own record


def count_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The hypotheses files the checks read."""
    from infrepro.experiment import load

    read: list[str] = []
    original = load.read_hypotheses

    def counted(path, segment_ids):
        read.append(Path(path).name)
        return original(path, segment_ids)

    monkeypatch.setattr(load, "read_hypotheses", counted)
    return read


def test_new_seeds_read_only_their_hypotheses(experiment, monkeypatch, tmp_path) -> None:
    read = count_reads(monkeypatch)
    first = kept_experiment(experiment, check_hypotheses=True, path=STORE)
    assert sorted(read) == sorted(f"{run}.txt" for run in first.run_ids)
    read.clear()
    MiniExperiment(tmp_path, 5).add_run("comp_s3", "comp", "3", 203)  # a new seed arrives
    again = kept_experiment(experiment, check_hypotheses=True, path=STORE)
    assert read == ["comp_s3.txt"] and "comp_s3" in again.run_ids
    read.clear()
    Path("hyps/base_s1.txt").write_text("one line\n")  # an old run's file changed: read, refused
    with pytest.raises(InputError, match="base_s1"):
        kept_experiment(experiment, check_hypotheses=True, path=STORE)
    assert read == ["base_s1.txt"]


def test_another_test_set_reads_every_hypotheses_file(experiment, monkeypatch) -> None:
    read = count_reads(monkeypatch)
    first = kept_experiment(experiment, check_hypotheses=True, path=STORE)
    read.clear()
    testset = Path("testset.tsv")
    testset.write_text(testset.read_text().replace("s000", "s999"))  # other segment ids
    kept_experiment(experiment, check_hypotheses=True, path=STORE)
    assert sorted(read) == sorted(f"{run}.txt" for run in first.run_ids)


def count_testset_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The test sets the checks read."""
    from infrepro.experiment import load

    read: list[str] = []
    original = load.read_testset

    def counted(path):
        read.append(Path(path).name)
        return original(path)

    monkeypatch.setattr(load, "read_testset", counted)
    return read


def test_new_seeds_do_not_read_the_test_set_again(experiment, monkeypatch, tmp_path) -> None:
    read = count_testset_reads(monkeypatch)
    kept_experiment(experiment, check_hypotheses=True, path=STORE)
    assert read == ["testset.tsv"]
    MiniExperiment(tmp_path, 5).add_run("comp_s3", "comp", "3", 203)
    again = kept_experiment(experiment, check_hypotheses=True, path=STORE)
    assert read == ["testset.tsv"] and "comp_s3" in again.run_ids
    from infrepro.experiment.load import load_experiment

    assert repr(again) == repr(load_experiment(experiment))  # what a full check finds


def test_a_changed_test_set_is_read_and_checked_again(experiment, monkeypatch, tmp_path) -> None:
    read = count_testset_reads(monkeypatch)
    kept_experiment(experiment, check_hypotheses=True, path=STORE)
    testset = Path("testset.tsv")
    before = testset.stat()
    lines = testset.read_text().splitlines()
    testset.write_text("\n".join([*lines, lines[1]]) + "\n")  # a duplicated segment id
    os.utime(testset, ns=(before.st_atime_ns, before.st_mtime_ns))
    MiniExperiment(tmp_path, 5).add_run("comp_s3", "comp", "3", 203)
    with pytest.raises(InputError, match="testset.tsv"):
        kept_experiment(experiment, check_hypotheses=True, path=STORE)
    assert read == ["testset.tsv"] * 2


def test_other_property_checks_read_the_test_set_again(experiment, monkeypatch) -> None:
    """A user property read from the test set is checked for the config that names it: a
    property made categorical, or a new one, reads the test set again."""
    testset = Path("testset.tsv")
    lines = testset.read_text().splitlines()
    values = ["domain", *(str(i % 2) for i in range(len(lines) - 2)), "inf"]
    testset.write_text("\n".join(f"{a}\t{b}" for a, b in zip(lines, values, strict=True)) + "\n")
    read = count_testset_reads(monkeypatch)
    kept_experiment(experiment, check_hypotheses=True, path=STORE)
    experiment["properties"] = [*experiment["properties"], "domain"]
    experiment["property_options"]["categorical"] = ["domain"]
    kept_experiment(experiment, check_hypotheses=True, path=STORE)
    assert read == ["testset.tsv"] * 2
    experiment["property_options"]["categorical"] = []  # numbers now: "inf" is refused
    with pytest.raises(InputError, match="domain"):
        kept_experiment(experiment, check_hypotheses=True, path=STORE)
    assert read == ["testset.tsv"] * 3


@pytest.mark.parametrize("entry", [None, [], ["x"], "text"])
def test_a_malformed_kept_test_set_is_read_again(experiment, monkeypatch, entry) -> None:
    read = count_testset_reads(monkeypatch)
    kept_experiment(experiment, check_hypotheses=True, path=STORE)
    store = json.loads(Path(STORE).read_text())
    for value in store["entries"].values():
        value["testsets"] = {"testset.tsv": entry}
    Path(STORE).write_text(json.dumps(store))
    Path("runs.tsv").write_text(Path("runs.tsv").read_text())  # a new state: a full check
    kept_experiment(experiment, check_hypotheses=True, path=STORE)
    assert read == ["testset.tsv"] * 2


def test_a_removed_input_is_reported_by_the_check(experiment) -> None:
    kept_experiment(experiment, check_hypotheses=True, path=STORE)
    Path("hyps/base_s2.txt").unlink()
    with pytest.raises(InputError, match="base_s2"):
        kept_experiment(experiment, check_hypotheses=True, path=STORE)


def test_digests_are_kept_by_file_state(experiment, monkeypatch) -> None:
    read: list[str] = []
    original = digests.sha256

    def counted(name):
        read.append(str(name))
        return original(name)

    monkeypatch.setattr(digests, "sha256", counted)
    store = ".snakemake/infrepro/digests.json"
    first = KeptDigests.open(store)
    value = first.sha256("hyps/base_s1.txt")
    first.save()
    again = KeptDigests.open(store)
    assert again.sha256("hyps/base_s1.txt") == value and read == ["hyps/base_s1.txt"]
    hyp = Path("hyps/base_s1.txt")
    before = hyp.stat()
    text = hyp.read_text()
    hyp.write_text(text.replace("a", "b", 1) if "a" in text else "x" + text[1:])  # same size
    os.utime(hyp, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert KeptDigests.open(store).sha256("hyps/base_s1.txt") != value
    assert read == ["hyps/base_s1.txt"] * 2
