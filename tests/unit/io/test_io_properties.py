"""Property-based tests of the input readers: every input is accepted consistently or rejected
with a specific InputError; never another exception, never a silent misalignment."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from infrepro.io import InputError, read_hypotheses, read_runs_sheet, read_testset
from infrepro.io.names import character_problem, lookalikes

TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r\t\x00"),
    max_size=40,
)
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


_SCRATCH: list[Path] = []


@pytest.fixture(autouse=True, scope="module")
def scratch_root() -> Iterator[None]:
    """One folder for the module's many examples, removed afterwards (hypothesis cannot use
    function-scoped fixtures such as tmp_path)."""
    root = Path(tempfile.mkdtemp(prefix="infrepro io tests "))
    _SCRATCH.append(root)
    yield
    _SCRATCH.remove(root)
    shutil.rmtree(root)


def scratch_folder(prefix: str) -> Path:
    """A new folder whose path contains a space, under the module's scratch root."""
    return Path(tempfile.mkdtemp(prefix=prefix, dir=_SCRATCH[-1]))


def write(data: bytes, name: str = "file.txt") -> Path:
    folder = scratch_folder("infrepro io ")
    path = folder / name
    path.write_bytes(data)
    return path


@SETTINGS
@given(st.lists(TEXT, min_size=1, max_size=20), st.booleans(), st.booleans())
def test_line_endings_and_bom_do_not_change_hypotheses(
    lines: list[str], crlf: bool, bom: bool
) -> None:
    ids = [f"s{i}" for i in range(len(lines))]
    newline = "\r\n" if crlf else "\n"
    data = ("\ufeff" if bom else "") + "".join(line + newline for line in lines)
    assert read_hypotheses(write(data.encode("utf-8")), ids) == lines


@SETTINGS
@given(st.lists(TEXT, min_size=1, max_size=20), st.integers(min_value=-3, max_value=3))
def test_wrong_line_count_is_rejected(lines: list[str], delta: int) -> None:
    n_segments = len(lines) + delta
    if n_segments < 0 or delta == 0:
        return
    path = write("".join(line + "\n" for line in lines).encode("utf-8"))
    try:
        read_hypotheses(path, [f"s{i}" for i in range(n_segments)])
    except InputError as err:
        lines_said = f"{len(lines)} line" + ("" if len(lines) == 1 else "s")
        segments_said = f"{n_segments} segment" + ("" if n_segments == 1 else "s")
        assert f"has {lines_said} but the test set has {segments_said}" in str(err)
    else:
        raise AssertionError("a wrong line count was accepted")


@SETTINGS
@given(st.binary(max_size=200), st.integers(min_value=0, max_value=5))
def test_arbitrary_bytes_parse_or_fail_cleanly(data: bytes, n_segments: int) -> None:
    ids = [f"s{i}" for i in range(n_segments)]
    try:
        hypotheses = read_hypotheses(write(data), ids)
    except InputError as err:
        assert "file.txt" in str(err)
    else:
        assert len(hypotheses) == n_segments


@SETTINGS
@given(st.lists(TEXT, min_size=2, max_size=10), st.data())
def test_invalid_utf8_reports_its_byte_offset(lines: list[str], data: st.DataObject) -> None:
    encoded = "".join(line + "\n" for line in lines).encode("utf-8")
    boundaries = [i for i in range(len(encoded) + 1) if _is_boundary(encoded, i)]
    offset = data.draw(st.sampled_from(boundaries))
    broken = encoded[:offset] + b"\xff" + encoded[offset:]
    try:
        read_hypotheses(write(broken), [f"s{i}" for i in range(len(lines))])
    except InputError as err:
        line = encoded[:offset].count(b"\n") + 1
        assert f":{line}: invalid UTF-8 at byte offset {offset}" in str(err)
    else:
        raise AssertionError("invalid UTF-8 was accepted")


def _is_boundary(encoded: bytes, index: int) -> bool:
    return index == len(encoded) or (encoded[index] & 0xC0) != 0x80


@SETTINGS
@given(st.lists(TEXT, min_size=1, max_size=5), st.integers(min_value=0, max_value=4))
def test_nul_bytes_are_rejected(lines: list[str], where: int) -> None:
    encoded = "".join(line + "\n" for line in lines).encode("utf-8")
    position = min(where, len(encoded))
    broken = encoded[:position] + b"\x00" + encoded[position:]
    try:
        read_hypotheses(write(broken), [f"s{i}" for i in range(len(lines))])
    except InputError as err:
        assert "NUL byte" in str(err)
    else:
        raise AssertionError("a NUL byte was accepted")


@SETTINGS
@given(st.lists(st.tuples(TEXT, TEXT), min_size=1, max_size=15))
def test_testset_round_trip_with_unicode(rows: list[tuple[str, str]]) -> None:
    body = "".join(f"id{i}\t{src}\t{ref}\n" for i, (src, ref) in enumerate(rows))
    path = write(("segment_id\tsource\treference\n" + body).encode("utf-8"), "t.tsv")
    try:
        table = read_testset(path)
    except InputError as err:
        assert "value is empty" in str(err)  # a blank reference
        assert any(not ref.strip() for _, ref in rows)
    else:
        assert list(table["source"]) == [src for src, _ in rows]
        assert list(table["reference"]) == [ref for _, ref in rows]


@SETTINGS
@given(st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=2, max_size=8))
def test_duplicate_ids_are_rejected_or_unique(ids: list[str]) -> None:
    body = "".join(f"{i}\tref {i}\n" for i in ids)
    path = write(("segment_id\treference\n" + body).encode("utf-8"), "t.tsv")
    try:
        table = read_testset(path)
    except InputError as err:
        assert "duplicate segment_id" in str(err)
        assert len(set(ids)) < len(ids)
    else:
        assert len(set(table["segment_id"])) == len(ids)


def test_tab_inside_a_text_field_is_rejected() -> None:
    path = write(b"segment_id\treference\na\tone\ttwo\n", "t.tsv")
    try:
        read_testset(path)
    except InputError as err:
        assert ":2: expected 2 tab-separated fields" in str(err)
    else:
        raise AssertionError("a stray tab was accepted")


def test_very_long_line_is_accepted() -> None:
    long_line = "word " * 200_000  # about 1 MB
    path = write((long_line + "\nshort\n").encode("utf-8"))
    assert read_hypotheses(path, ["a", "b"]) == [long_line, "short"]


@SETTINGS
@given(st.lists(TEXT.filter(lambda s: s.strip() != ""), min_size=1, max_size=6))
def test_runs_sheet_with_unicode_facets(values: list[str]) -> None:
    folder = scratch_folder("runs sheet ")
    (folder / "h y p.txt").write_text("x\n", encoding="utf-8")
    body = "".join(f"r{i}\tsys\th y p.txt\t{v}\n" for i, v in enumerate(values))
    sheet = folder / "runs.tsv"
    sheet.write_text("run_id\tsystem\thypotheses\tprompt\n" + body, encoding="utf-8")
    levels = [v.strip() for v in values]
    misleading = lookalikes(levels) is not None or any(map(character_problem, levels))
    try:
        runs = read_runs_sheet(sheet)
    except InputError as err:  # a level whose characters mislead (infrepro.io.names)
        assert misleading, err
    else:
        assert not misleading
        assert list(runs["prompt"]) == levels
