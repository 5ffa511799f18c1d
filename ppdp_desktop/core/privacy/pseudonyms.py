"""Random pseudonymous record ids.

Each released record gets a fresh id drawn from the operating system's secure source — never a
hash of the identifier, which anyone could reverse by hashing guessed names. Only the sealed key
maps a pseudonym back to the removed identifiers. A job with a fixed seed (testing, and replaying a
project with ``ppdp run --seed``) draws them from its keyed streams instead (record ``i``'s id is word ``i``
of the stream "(pseudonyms)"/"id", :mod:`~ppdp_desktop.core.privacy.keyed`), so the same seed gives the same
release byte for byte, however the records are processed.
"""
from __future__ import annotations

import secrets
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import pyarrow as pa

if TYPE_CHECKING:
    from ppdp_desktop.core.privacy.keyed import KeyedRandomness

PSEUDONYM_COLUMN = "pseudonym"
_BYTES = 8  # 64 bits per id; duplicates are still checked and redrawn
_CHUNK = 1 << 16  # build in blocks so a large release never holds the interpreter for long


def _draw(n: int, rng: np.random.Generator | None = None) -> np.ndarray:
    data = secrets.token_bytes(_BYTES * n) if rng is None else rng.bytes(_BYTES * n)
    return np.frombuffer(data, dtype=np.uint64).copy()


PSEUDONYM_STREAM = "(pseudonyms)"


def make_pseudonyms(n: int, rng: np.random.Generator | None = None, keyed: "KeyedRandomness | None" = None) -> pd.Series:
    """``n`` distinct ids like ``"R3f9c0a1b2d4e5f60"``, as an Arrow-backed string Series: record ``i``'s from the
    job's ``keyed`` streams when its seed is fixed (or from ``rng``), else from the operating system."""
    values = keyed.stream(PSEUDONYM_STREAM, "id").words(0, n).copy() if keyed is not None else _draw(n, rng)
    retry = 0
    while n and len(pd.unique(values)) < n:  # astronomically rare
        duplicated = pd.Series(values).duplicated().to_numpy()
        retry += 1
        values[duplicated] = (keyed.stream(PSEUDONYM_STREAM, f"id, retry {retry}").words(0, n)[duplicated]
                              if keyed is not None else _draw(int(duplicated.sum()), rng))
    chunks = []
    for start in range(0, n, _CHUNK):
        block = values[start : start + _CHUNK]
        hexed = np.frombuffer(block.tobytes().hex().encode("ascii"), dtype="S16")
        chunks.append(pa.array(np.char.add(b"R", hexed)).cast(pa.string()))
    array = pa.chunked_array(chunks, type=pa.string())
    return pd.Series(pd.arrays.ArrowStringArray(array), name=PSEUDONYM_COLUMN)
