"""A run's hypotheses, aligned to the test set's segment order."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from infrepro.core.vocabulary import SEGMENT
from infrepro.io.errors import InputError, plural
from infrepro.io.tables import LINE_COLUMN, check_unique, read_jsonl, require_columns
from infrepro.io.text import read_lines, require_file


def read_hypotheses(path: str | Path, segment_ids: Sequence[str]) -> list[str]:
    """Read one run's hypotheses in test-set order.

    A text file holds one hypothesis per line in test-set order (an empty line is a valid, empty
    hypothesis); a ``.jsonl`` file holds ``segment_id`` and ``hypothesis`` per line in any order.
    """
    file = Path(path)
    require_file(file, "hypotheses file")
    if file.suffix == ".jsonl":
        return _read_jsonl_hypotheses(file, segment_ids)
    lines = read_lines(file)
    if len(lines) != len(segment_ids):
        raise InputError(
            file,
            f"has {plural(len(lines), 'line')} but the test set has "
            f"{plural(len(segment_ids), 'segment')}; "
            "expected one hypothesis per line in test-set order",
        )
    return lines


def _read_jsonl_hypotheses(file: Path, segment_ids: Sequence[str]) -> list[str]:
    frame = read_jsonl(file)
    require_columns(frame, file, [SEGMENT, "hypothesis"])
    frame[SEGMENT] = frame[SEGMENT].map(str)
    check_unique(frame, file, SEGMENT)
    known = set(segment_ids)
    by_id: dict[str, str] = {}
    for seg, hyp, line in zip(frame[SEGMENT], frame["hypothesis"], frame[LINE_COLUMN], strict=True):
        if seg not in known:
            raise InputError(
                file,
                f"{SEGMENT} '{seg}' is not in the test set",
                line=int(line),
                column=SEGMENT,
            )
        if not isinstance(hyp, str):
            raise InputError(
                file,
                f"expected text, found {type(hyp).__name__}",
                line=int(line),
                column="hypothesis",
            )
        by_id[seg] = hyp
    missing = [seg for seg in segment_ids if seg not in by_id]
    if missing:
        shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
        raise InputError(file, f"{len(missing)} test-set segments have no hypothesis: {shown}")
    return [by_id[seg] for seg in segment_ids]
