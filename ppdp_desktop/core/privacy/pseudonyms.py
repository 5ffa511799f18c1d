"""Pseudonymous record ids, unique by construction and computed record by record.

Record ``i``'s id is ``"R"`` followed by the 32 lowercase hexadecimal digits of
``AES-256(key, i)``, ``i`` written as one 16-byte big-endian block (a single-block encryption, i.e.
AES in ECB mode over the block of every record). AES is a permutation of 128-bit blocks, so two
records never share an id and no global duplicate check is needed; without the key an id reveals
nothing about the record (it is never a hash of an identifier, which anyone could reverse by hashing
guessed names), and with the key, :meth:`PseudonymKey.index_of` gives the record's index back by
decrypting. The key is the only thing the sealed key file stores about the ids.

The key is 32 random bytes from the operating system, or, for a job with a fixed seed (testing, and
replaying a project with ``ppdp run --seed``), words 0..3 of the job's keyed stream
"(pseudonyms)"/"key" (:mod:`~ppdp_desktop.core.privacy.keyed`), so the same seed gives the same
release byte for byte, however the records are processed.
"""
from __future__ import annotations

import secrets
from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import pyarrow as pa
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from ppdp_desktop.core.errors import ParameterError

if TYPE_CHECKING:
    from ppdp_desktop.core.privacy.keyed import KeyedRandomness

__all__ = ["PSEUDONYM_COLUMN", "PSEUDONYM_STREAM", "PseudonymKey", "make_pseudonyms"]

PSEUDONYM_COLUMN = "pseudonym"
PSEUDONYM_STREAM = "(pseudonyms)"
KEY_BYTES = 32
PREFIX = b"R"
ID_CHARS = len(PREFIX) + 32  # "R" + 32 hexadecimal digits
#: records per cipher call (16 MiB of blocks): large enough to be fast, small enough to stay in memory
CHUNK = 1 << 20
#: the most ids one Arrow string array holds (its 32-bit offsets address at most 2**31 - 1 bytes)
MAX_IDS_PER_ARRAY = (2**31 - 1) // ID_CHARS
_HEX = np.frombuffer(b"".join(b"%02x" % b for b in range(256)), dtype=np.uint16)  # byte -> its two digits
_DIGITS = b"0123456789abcdef"
#: two characters (read as one little-endian uint16) -> the byte they write in hex, or 256 if they are not hex
_PAIR = np.full(1 << 16, 256, dtype=np.uint16)
_PAIR[[a | b << 8 for a in _DIGITS for b in _DIGITS]] = np.arange(256, dtype=np.uint16)
_INVALID_LANES = np.uint64(0x0100_0100_0100_0100)  # the 256 bit of four uint16 lanes


class PseudonymKey:
    """The secret that makes and reverses a release's pseudonyms (see the module docstring).

    Parameters
    ----------
    key : bytes
        32 secret bytes (the AES-256 key).

    Examples
    --------
    >>> key = PseudonymKey(bytes(32))
    >>> ids = key.ids(0, 3)
    >>> len(ids[0].as_py()), ids[0].as_py()[0]
    (33, 'R')
    >>> key.index_of(ids.to_pylist() + ["nobody"]).tolist()
    [0, 1, 2, -1]
    """

    __slots__ = ("_key",)

    def __init__(self, key: bytes) -> None:
        if not isinstance(key, (bytes, bytearray)) or len(key) != KEY_BYTES:
            size = len(key) if isinstance(key, (bytes, bytearray)) else type(key).__name__
            raise ParameterError(f"A pseudonym key must be {KEY_BYTES} bytes; got {size}.")
        self._key = bytes(key)

    @classmethod
    def random(cls) -> PseudonymKey:
        """A fresh key from the operating system's secure source."""
        return cls(secrets.token_bytes(KEY_BYTES))

    @classmethod
    def from_seed(cls, keyed: KeyedRandomness) -> PseudonymKey:
        """The key of a job with a fixed seed: words 0..3 (little-endian) of its stream "(pseudonyms)"/"key"."""
        return cls(keyed.stream(PSEUDONYM_STREAM, "key").words(0, 4).astype("<u8").tobytes())

    @classmethod
    def from_hex(cls, text: str) -> PseudonymKey:
        """The key written by :meth:`hex` (64 hexadecimal digits); ParameterError otherwise."""
        try:
            return cls(bytes.fromhex(text))
        except (TypeError, ValueError):
            raise ParameterError("A pseudonym key must be 64 hexadecimal digits.") from None

    def hex(self) -> str:
        """The key as 64 lowercase hexadecimal digits (kept only in the sealed key file)."""
        return self._key.hex()

    def __repr__(self) -> str:  # never show the key
        return "PseudonymKey(<secret key>)"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PseudonymKey) and secrets.compare_digest(self._key, other._key)

    def __hash__(self) -> int:
        return hash((PseudonymKey, self._key))

    def _cipher(self) -> Cipher:
        return Cipher(algorithms.AES(self._key), modes.ECB())

    # --- index -> id -------------------------------------------------------------------------------
    def ids(self, start: int, stop: int) -> pa.StringArray:
        """The ids of records ``start .. stop - 1``, in record order.

        Parameters
        ----------
        start, stop : int
            ``0 <= start <= stop < 2**63``, at most :data:`MAX_IDS_PER_ARRAY` records (ask for more in blocks).

        Returns
        -------
        pyarrow.StringArray
            ``stop - start`` distinct strings ``"R" + 32 hex digits``.
        """
        start, stop = _check_range(start, stop)
        n = stop - start
        data = np.empty((n, ID_CHARS), dtype=np.uint8)
        data[:, 0] = PREFIX[0]
        encryptor = self._cipher().encryptor()
        for first in range(start, stop, CHUNK):
            last = min(first + CHUNK, stop)
            blocks = np.zeros((last - first, 2), dtype=np.uint64)  # high 64 bits 0, low 64 bits the index
            blocks[:, 1] = np.arange(first, last, dtype=np.uint64)
            if np.little_endian:  # the block is big-endian
                blocks[:, 1].byteswap(inplace=True)
            cipher = np.frombuffer(encryptor.update(blocks.tobytes()), dtype=np.uint8)
            hexed = np.take(_HEX, cipher).view(np.uint8)
            data[first - start:last - start, 1:] = hexed.reshape(last - first, ID_CHARS - 1)
        offsets = np.arange(0, (n + 1) * ID_CHARS, ID_CHARS, dtype=np.int32)
        return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data))

    # --- id -> index -------------------------------------------------------------------------------
    def index_of(self, ids: Iterable[str | None] | pa.Array | pa.ChunkedArray | pd.Series, n: int | None = None
                 ) -> np.ndarray:
        """The record index of each id (vectorized), ``-1`` where the text is not an id of this key.

        Parameters
        ----------
        ids : sequence of str
            Texts to look up (a list, numpy array, pandas Series or Arrow array); missing values, and
            anything that is not a text, give -1.
        n : int, optional
            The number of records: an id that decrypts to an index ``>= n`` gives -1 too.

        Returns
        -------
        numpy.ndarray
            int64, one entry per input.
        """
        limit = np.uint64(2**63 - 1 if n is None else max(int(n), 0))
        parts = [self._index_of(chunk, limit) for chunk in _string_chunks(ids)]
        return np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)

    def _index_of(self, array: pa.StringArray, limit: np.uint64) -> np.ndarray:
        result = np.full(len(array), -1, dtype=np.int64)
        if not len(array):
            return result
        offsets = np.frombuffer(array.buffers()[1], dtype=np.int32, count=len(array) + 1, offset=4 * array.offset)
        shaped = np.diff(offsets) == ID_CHARS
        if array.null_count:
            shaped &= array.is_valid().to_numpy(zero_copy_only=False)
        positions = np.flatnonzero(shaped)
        if not len(positions):
            return result
        data = _packed_bytes(array.filter(pa.array(shaped))).reshape(len(positions), ID_CHARS)
        pairs = np.take(_PAIR, np.ascontiguousarray(data[:, 1:]).view("<u2"))  # two digits -> a byte, or 256
        lanes = pairs.view(np.uint64)
        invalid = (lanes[:, 0] | lanes[:, 1] | lanes[:, 2] | lanes[:, 3]) & _INVALID_LANES
        valid = (data[:, 0] == PREFIX[0]) & (invalid == 0)  # "R" and 32 lowercase hex digits
        positions, blocks = positions[valid], pairs[valid].astype(np.uint8)
        plain = np.frombuffer(self._cipher().decryptor().update(blocks.tobytes()), dtype=">u8").reshape(-1, 2)
        high, low = plain[:, 0], plain[:, 1]
        found = (high == 0) & (low < limit)
        result[positions[found]] = low[found].astype(np.int64)
        return result


def _check_range(start: int, stop: int) -> tuple[int, int]:
    start, stop = int(start), int(stop)
    if not 0 <= start <= stop < 2**63:
        raise ParameterError(
            f"The record range must satisfy 0 <= start <= stop < 2**63; got start={start}, stop={stop}.")
    if stop - start > MAX_IDS_PER_ARRAY:
        raise ParameterError(
            f"At most {MAX_IDS_PER_ARRAY:,} ids are made at once; got {stop - start:,} (ask in blocks).")
    return start, stop


def _string_chunks(values: Iterable[object] | pa.Array | pa.ChunkedArray | pd.Series) -> list[pa.StringArray]:
    """``values`` as Arrow string arrays (nulls kept; an entry that is not a text becomes null)."""
    arrow: pa.Array | pa.ChunkedArray
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        arrow = values
    else:
        if not isinstance(values, (pd.Series, pd.Index, np.ndarray, pd.api.extensions.ExtensionArray)):
            values = list(values)
        try:
            arrow = pa.array(values, type=pa.string(), from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            arrow = pa.array([v if isinstance(v, str) else None for v in values], type=pa.string())
    chunks = arrow.chunks if isinstance(arrow, pa.ChunkedArray) else [arrow]
    out = []
    for chunk in chunks:
        if pa.types.is_dictionary(chunk.type):
            chunk = chunk.dictionary_decode()
        if not (pa.types.is_string(chunk.type) or pa.types.is_large_string(chunk.type)
                or pa.types.is_string_view(chunk.type)):
            raise ParameterError(f"Pseudonyms are texts; got a column of {chunk.type}.")
        out.append(chunk.cast(pa.string()) if not pa.types.is_string(chunk.type) else chunk)
    return out


def _packed_bytes(array: pa.StringArray) -> np.ndarray:
    """The characters of a string array without nulls, back to back (uint8)."""
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int32, count=len(array) + 1, offset=4 * array.offset)
    data = array.buffers()[2]
    if data is None or not len(array):
        return np.empty(0, dtype=np.uint8)
    return np.frombuffer(data, dtype=np.uint8)[offsets[0]:offsets[-1]]


def make_pseudonyms(n: int, keyed: KeyedRandomness | None = None, key: PseudonymKey | None = None) -> pd.Series:
    """The ids of records ``0 .. n - 1``, like ``"R3f9c0a1b2d4e5f60718293a4b5c6d7e8"``, as an Arrow-backed string
    Series named :data:`PSEUDONYM_COLUMN`.

    Parameters
    ----------
    n : int
        Number of records.
    keyed : KeyedRandomness, optional
        The job's keyed randomness when its seed is fixed: the key is :meth:`PseudonymKey.from_seed`.
    key : PseudonymKey, optional
        The key to use (the one the job keeps for its key file); else from ``keyed``, else a random one.
    """
    if key is None:
        key = PseudonymKey.from_seed(keyed) if keyed is not None else PseudonymKey.random()
    step = min(MAX_IDS_PER_ARRAY, 1 << 24)
    chunks = [key.ids(start, min(start + step, n)) for start in range(0, n, step)]
    array = pa.chunked_array(chunks, type=pa.string())
    return pd.Series(pd.arrays.ArrowStringArray(array), name=PSEUDONYM_COLUMN)
