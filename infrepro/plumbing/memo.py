"""Values remembered per DataFrame object while it lives, and content digests for values kept
across runs (an analysis's units, the report's figures).

The analyses count the same rows' segments and runs for every fit, and the report looks up the
same tables thousands of times; neither changes a frame in place (they derive new ones), so what
is computed from a frame stays valid for the frame's lifetime.
"""

from __future__ import annotations

import dataclasses
import hashlib
import platform
import weakref
from collections.abc import Mapping
from functools import cache
from typing import Any

import numpy as np
import pandas as pd

from infrepro.plumbing.sources import library_versions, source_digest


class FrameMemo:
    """``memo.of(frame)``: a dict kept for ``frame`` while it lives (keyed by its id, dropped
    with it through a weak reference, so a new frame at a reused id never sees old values)."""

    def __init__(self) -> None:
        self._entries: dict[int, tuple[weakref.ref, dict[str, Any]]] = {}

    def of(self, frame: pd.DataFrame) -> dict[str, Any]:
        key = id(frame)
        entry = self._entries.get(key)
        if entry is None or entry[0]() is not frame:
            entry = (weakref.ref(frame, lambda _, key=key: self._entries.pop(key, None)), {})
            self._entries[key] = entry
        return entry[1]


# ---------------------------------------------------------------------------- across runs


# The libraries whose change could change a kept number or figure: the analyses' and the
# figures' (numba and its compiler llvmlite compile the scorers' kernels), besides the BLAS.
NUMBER_LIBRARIES = ("numpy", "scipy", "pandas", "matplotlib", "numba", "llvmlite", "krippendorff")


@cache
def code_digest() -> str:
    """A digest of the package's source, Python, the versions of the libraries its numbers and
    figures depend on (``NUMBER_LIBRARIES``) and the BLAS libraries they run on: a value kept
    across runs is reused only by the code that made it."""
    digest = hashlib.blake2b(source_digest(), digest_size=16)
    libraries = library_versions(*NUMBER_LIBRARIES)
    digest.update(repr((platform.python_version(), libraries, blas_libraries())).encode())
    return digest.hexdigest()


def blas_libraries() -> list[tuple[object, ...]]:
    """The BLAS libraries numpy and scipy run on (each wheel loads its own), as threadpoolctl
    finds them loaded: implementation, version, file and the CPU kernels it chose. Another BLAS,
    or the same on a CPU with other kernels, can change a result's last digits."""
    import scipy.linalg  # noqa: F401 - loads scipy's BLAS, so that both are found in any process
    from threadpoolctl import threadpool_info

    fields = ("internal_api", "version", "filepath", "architecture", "threading_layer")
    found = [info for info in threadpool_info() if info.get("user_api") == "blas"]
    return sorted(tuple(str(info.get(name)) for name in fields) for info in found)


_FRAME_DIGESTS = FrameMemo()


def frame_digest(frame: pd.DataFrame, index: bool = True) -> bytes:
    """A digest of ``frame``: column names, dtypes, values in row order and (with ``index``) the
    index, remembered per DataFrame object (for frames never modified in place, as the
    analyses' rows; see :func:`content_digest` for the others)."""
    memo = _FRAME_DIGESTS.of(frame)
    name = f"digest:{index}"
    if name not in memo:
        memo[name] = _frame_bytes(frame, index)
    return memo[name]


# Rows up to which a frame's digest reads its cells one by one: pandas' vectorised hash costs
# about 2 ms a frame whatever its size, most of a figure's cache key in the report (hundreds of
# small frames); beyond, the vectorised hash is the faster.
SMALL_FRAME = 5_000


def _frame_bytes(frame: pd.DataFrame, index: bool) -> bytes:
    digest = hashlib.blake2b(digest_size=16)
    digest.update(repr([(str(c), str(t)) for c, t in frame.dtypes.items()]).encode())
    if len(frame) > SMALL_FRAME:
        values = pd.util.hash_pandas_object(frame, index=index).to_numpy()
        digest.update(np.ascontiguousarray(values).tobytes())
        return digest.digest()
    digest.update(f"rows:{len(frame)};".encode())
    for _, column in frame.items():
        digest.update(_cells(column.to_numpy()))
    if index:
        digest.update(b"index:" + _cells(frame.index.to_numpy()))
    return digest.digest()


def _cells(values: np.ndarray) -> bytes:
    """A column's cells as bytes: numbers as their machine values; anything else each as its
    type and text, length-prefixed (so no two columns' cells run into the same bytes), and a
    missing cell (None, NaN, NA) as one marker."""
    if values.dtype.kind in "biufcmM":
        return f"{values.dtype.str}:".encode() + np.ascontiguousarray(values).tobytes()
    parts = []
    for value in values.tolist():
        if value is None or value is pd.NA or (isinstance(value, float) and value != value):
            parts.append("\x00;")
        else:
            text = str(value)
            parts.append(f"{type(value).__name__}:{len(text)}:{text}")
    return "".join(parts).encode("utf-8", "surrogatepass")


class Undigestible(TypeError):
    """A value without a content digest (an object known only by its identity)."""


def content_digest(*values: object) -> str:
    """A digest of plain values: numbers, strings, bytes, None, frames (without their row labels),
    series (with theirs), arrays, and mappings, sequences and dataclasses of them
    (:class:`Undigestible` for anything else). Computed afresh on every call: a frame may have
    changed since."""
    digest = hashlib.blake2b(digest_size=20)
    digest.update(code_digest().encode())
    _digest_into(digest, values)
    return digest.hexdigest()


def _digest_into(digest: Any, value: object) -> None:
    if value is None or isinstance(value, (str, int, float, bool, np.generic)):
        digest.update(f"{type(value).__name__}:{value!r};".encode())
    elif isinstance(value, bytes):  # a digest made elsewhere (frame_digest)
        digest.update(b"bytes:" + value)
    elif isinstance(value, pd.DataFrame):  # a frame's row labels are not data: no code
        # that takes one reads its index (rows filtered from a table keep their old labels)
        digest.update(b"frame:" + _frame_bytes(value, index=False))
    elif isinstance(value, pd.Series):
        digest.update(b"series:" + _frame_bytes(value.to_frame(), index=True))
    elif isinstance(value, np.ndarray):
        digest.update(f"array:{value.dtype}:{value.shape}:".encode())
        digest.update(
            np.ascontiguousarray(value).tobytes()
            if value.dtype != object
            else repr(value.tolist()).encode()
        )
    elif isinstance(value, Mapping):
        digest.update(b"{")
        for key, item in value.items():
            _digest_into(digest, key)
            _digest_into(digest, item)
        digest.update(b"}")
    elif isinstance(value, (list, tuple)):
        digest.update(b"[")
        for item in value:
            _digest_into(digest, item)
        digest.update(b"]")
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        digest.update(type(value).__qualname__.encode())
        _digest_into(digest, {f.name: getattr(value, f.name) for f in dataclasses.fields(value)})
    else:
        raise Undigestible(f"no content digest for a {type(value).__name__}")
