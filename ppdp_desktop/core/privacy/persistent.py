"""Persistent randomness: a patient's draws as a function of the custodian's secret, who the patient is and
what is drawn -- not of the job's seed or the row's position (issue 30).

Why
---
Drawing fresh randomness for every release lets an attacker who links a patient's records across releases (by
their unchanged columns) average the noise away: ten fine-grain releases of adult.csv let 55.7 % of matched records
exceed the posterior bound rho2. Under persistent randomness an unchanged patient gets the *same* draws, so the
same released value, in every release (permanent randomized response, as in Google's RAPPOR): k releases show one
draw, and the bound of one release holds for all of them. A patient whose value, or the mechanism that randomizes
it (its retention, the domain), changed gets a fresh, independent draw; the release ledger counts those
(:mod:`ppdp_desktop.core.repeat.accounting`).

Construction
------------
* The **custodian secret** (32 bytes, sealed on the custodian's PC) gives, with HKDF-SHA256, one AES-256 key per
  use: ``HKDF(secret, salt=SALT, info=b"identity")`` for identity digests and
  ``HKDF(secret, salt=SALT, info=b"stream" + stream_tag(labels))`` for each stream ``(column, draw[, retry])``.
* A record's **identity** is the text of its identifier columns (the whole original record when none is tagged),
  fingerprinted with two differently keyed SipHash-2-4 hashes (pandas' ``hash_array``, vectorized; the keys are
  public constants: this step only has to tell records apart) into 128 bits, then encrypted with the identity key:
  the first 8 bytes are the identity digest. Without the secret the digests are random numbers (AES is a
  pseudo-random permutation), so a ledger or a key file that holds them does not let anyone test a guessed
  patient number.
* A record's **mechanism digest** for a column is a 64-bit hash of (column, the true value's label, the value's
  retention p, the number of values it can be replaced by, the whole domain in order), computed per value of the
  domain (:func:`mechanism_digests`) and indexed by the records' codes.
* Word ``w`` of a record in stream ``labels`` = the first 8 bytes (little-endian) of
  ``AES-256-ECB(stream key, identity digest || mechanism digest)``. Every draw of :mod:`.keyed` (uniforms,
  Bernoulli, Lemire integers with their retry streams) is made from these words exactly as from ChaCha20 words, so
  the methods' code does not change; the words depend on the record's own content only, so memory, streaming and
  Dask give the same bytes.

Two records with the same identity and the same value get the same draws (a patient's duplicate rows are released
alike). AES-ECB is used here as a pseudo-random function on 16-byte blocks, one block per record, which is what
it is: the blocks of two different (identity, mechanism) pairs are different, so their words are independent.
"""
from __future__ import annotations

import hashlib
import struct
from collections.abc import Sequence

import numpy as np
import pandas as pd
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from ppdp_desktop.core.data.dictionary import mostly_distinct
from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.privacy.ecb_blocks import ChunkedECB

__all__ = ["PersistentKeys", "identity_fingerprints", "mechanism_digests", "prf_words"]

SALT = b"ppdp-desktop persistent randomness v1"
#: the public SipHash keys of the two identity fingerprints (16 characters each; they only tell records apart)
_FINGERPRINT_KEYS = ("ppdp-identity-01", "ppdp-identity-02")
_MIX = np.uint64(0x9E3779B97F4A7C15)  # combining the columns' hashes: odd multiplier (golden ratio)


def _hkdf(secret: bytes, info: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=SALT, info=info).derive(secret)


#: records per cipher call of :func:`prf_words`: 4 MiB of blocks, so a 1M-record table is not copied whole as blocks,
#: their bytes and the cipher text (~56 MB of temporaries at 1M records before; issue 34's memory)
PRF_CHUNK = 1 << 18


def prf_words(key: bytes, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """``AES-256-ECB(key, left_i || right_i)``'s first 8 bytes as little-endian uint64, one per record.

    ``left`` and ``right`` are uint64 arrays of one length. ECB encrypts each block on its own, so the records go
    through one cipher :data:`PRF_CHUNK` at a time, into buffers reused from chunk to chunk: the same words, and
    the temporaries stay a few MiB whatever the length (the output is the only full-length array).
    """
    n = len(left)
    if len(right) != n:
        raise ParameterError(f"The two halves of the blocks differ in length ({n} and {len(right)}).")
    result = np.empty(n, dtype=np.uint64)
    step = max(min(n, PRF_CHUNK), 1)
    blocks = np.empty((step, 2), dtype="<u8")
    cipher = ChunkedECB(key, step)
    for a in range(0, n, step):
        m = min(step, n - a)
        blocks[:m, 0] = left[a:a + m]
        blocks[:m, 1] = right[a:a + m]
        result[a:a + m] = cipher.encrypt(blocks[:m]).view("<u8")[0::2]
    return result


class PersistentKeys:
    """The keys derived from a project's custodian secret (held in memory only; never shown)."""

    __slots__ = ("_identity", "_secret")

    def __init__(self, secret: bytes) -> None:
        if not isinstance(secret, bytes | bytearray) or len(secret) != 32:
            raise ParameterError("A custodian secret is 32 bytes.")
        self._secret = bytes(secret)
        self._identity = _hkdf(self._secret, b"identity")

    def __repr__(self) -> str:
        return "PersistentKeys(<secret>)"

    def stream_key(self, tag: bytes) -> bytes:
        """The AES key of one stream (``tag``: :func:`~ppdp_desktop.core.privacy.keyed.stream_tag` of its labels)."""
        return _hkdf(self._secret, b"stream" + tag)

    def identities(self, frame: pd.DataFrame, columns: Sequence[str]) -> np.ndarray:
        """The keyed 64-bit identity digest of every record of ``frame`` from ``columns`` (uint64)."""
        return self.keyed_identities(*identity_fingerprints(frame, columns))

    def keyed_identities(self, first: np.ndarray, second: np.ndarray) -> np.ndarray:
        """The keyed identity digests of records whose :func:`identity_fingerprints` are ``first, second``."""
        return prf_words(self._identity, first, second)

    def digest(self, left: np.ndarray, right: np.ndarray, purpose: bytes) -> np.ndarray:
        """A keyed 64-bit digest per record of the pair ``(left_i, right_i)`` for ``purpose`` (e.g. the ledger's
        draw digests)."""
        return prf_words(_hkdf(self._secret, b"digest " + purpose), left, right)


def _canonical_text(column: pd.Series) -> np.ndarray:
    """The text of each cell as the user reads it, the same whatever dtype the loader gave the column (an integer
    read as float in one chunk and as int in another gives the same text); missing is "". Vectorized."""
    values = column
    if pd.api.types.is_bool_dtype(values.dtype):
        text = values.astype("string")
    elif pd.api.types.is_integer_dtype(values.dtype):
        text = values.astype("Int64").astype("string")
    elif pd.api.types.is_float_dtype(values.dtype):
        floats = values.to_numpy(dtype=np.float64, na_value=np.nan)
        integral = np.isfinite(floats) & (np.floor(floats) == floats) & (np.abs(floats) < 2.0**63)
        text = pd.Series(floats, index=values.index).astype("string")
        if integral.any():
            text[integral] = pd.Series(floats[integral].astype(np.int64)).astype("string").to_numpy()
    else:
        text = values.astype("string")
    return text.fillna("").to_numpy(dtype=object)


def _utf8_cells(column: pd.Series) -> np.ndarray | None:
    """Each cell of an Arrow-backed text column as its UTF-8 bytes (missing: ``b""``); None for any other column.

    pandas hashes a text as its UTF-8 bytes (``str.encode``), so hashing the bytes gives the same fingerprints as
    :func:`_canonical_text` without a Python text object per cell and its encoding once per key (an identifier
    column of 1M cells: 0.50 -> 0.15 CPU s)."""
    dtype = column.dtype
    if isinstance(dtype, pd.StringDtype):
        if dtype.storage != "pyarrow":
            return None
    elif not (isinstance(dtype, pd.ArrowDtype) and str(dtype.pyarrow_dtype) in ("string", "large_string")):
        return None
    import pyarrow as pa
    import pyarrow.compute as pc

    text = pc.fill_null(pa.array(column.array), "")
    binary = pa.large_binary() if pa.types.is_large_string(text.type) else pa.binary()
    return np.asarray(text.cast(binary).to_numpy(zero_copy_only=False), dtype=object)


def identity_fingerprints(frame: pd.DataFrame, columns: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Two 64-bit fingerprints of each record's values in ``columns`` (public, unkeyed: they only tell records
    apart; :meth:`PersistentKeys.identities` keys them). Each distinct text is hashed twice (SipHash in C) and the
    hashes gathered per record by the column's codes; a column whose values are mostly distinct (an identifier) is
    hashed cell by cell, which is cheaper than finding its distinct values first. The same fingerprints either way."""
    if not len(columns):
        raise ParameterError("A record's identity needs at least one column.")
    combined = [np.zeros(len(frame), dtype=np.uint64) for _ in _FINGERPRINT_KEYS]
    for name in columns:
        column = frame[name]
        if mostly_distinct(column):  # cell by cell, a piece at a time (5M cells as Python text would be ~400 MB)
            for start in range(0, len(column), _PIECE):
                stop = min(start + _PIECE, len(column))
                hashed = _hashes(column.iloc[start:stop])
                for i in range(len(combined)):
                    combined[i][start:stop] = combined[i][start:stop] * _MIX ^ hashed[i]
            continue
        codes, uniques = pd.factorize(column, use_na_sentinel=False)  # few distinct values: hash those alone
        hashed = _hashes(pd.Series(uniques))
        for i in range(len(combined)):
            combined[i] = combined[i] * _MIX ^ hashed[i][codes]
    return combined[0], combined[1]


#: cells of a mostly distinct column hashed at a time (:func:`identity_fingerprints`): hashing holds the
#: interpreter lock, ~8 ms for 65,536 cells, so a window's thread waits no longer than that (issue 34)
_PIECE = 1 << 16


def _hashes(column: pd.Series) -> list[np.ndarray]:
    """Each cell's canonical text hashed under each fingerprint key (SipHash in C)."""
    text = _utf8_cells(column)
    if text is None:
        text = _canonical_text(column)
    return [pd.util.hash_array(text, hash_key=key, categorize=False).astype(np.uint64) for key in _FINGERPRINT_KEYS]


def mechanism_digests(column: str, labels: Sequence[object], retention: np.ndarray | Sequence[float],
                      replacements: np.ndarray | Sequence[int] | int) -> np.ndarray:
    """Per value of a domain, a 64-bit digest of what randomizes it: (column, the value's label, its retention p as
    exact float bits, how many values it can be replaced by, the whole domain in order). Two releases draw the same
    for a patient exactly when this digest (and the patient's identity) is the same.

    One SHA-256 per value (a domain has hundreds of values at most), indexed by the records' codes afterwards.
    """
    texts = ["" if v is None else str(v) for v in labels]
    p = np.asarray(retention, dtype=np.float64)
    high = np.broadcast_to(np.asarray(replacements, dtype=np.int64), p.shape)
    if len(texts) != len(p):
        raise ParameterError(f"{len(texts)} labels for {len(p)} retentions.")
    domain = hashlib.sha256()
    for text in texts:
        encoded = text.encode("utf-8")
        domain.update(struct.pack("<I", len(encoded)) + encoded)
    head = hashlib.sha256(b"ppdp mechanism v1\x00" + column.encode("utf-8") + b"\x00" + domain.digest())
    out = np.empty(len(texts), dtype=np.uint64)
    for i, text in enumerate(texts):
        h = head.copy()
        encoded = text.encode("utf-8")
        h.update(struct.pack("<I", len(encoded)) + encoded + struct.pack("<dq", float(p[i]), int(high[i])))
        out[i] = int.from_bytes(h.digest()[:8], "little")
    return out
