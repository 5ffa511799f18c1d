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

Stable pseudonyms (issue 30, a project's choice): :class:`StablePseudonymKey` gives a patient the same id in
every release of the project: ``"R"`` + the 32 hexadecimal digits of ``AES-256(key, identity)``, where the key is
derived from the project's custodian secret and the block is the record's two 64-bit identity fingerprints
(:func:`~ppdp_desktop.core.privacy.persistent.identity_fingerprints` of its identifier columns). Again a
permutation of blocks: two different identities never share an id, so the ids of a release are distinct exactly
when its records' identities are (the job refuses a release in which two records share one). An id no longer
decrypts to a record's index, so the sealed key keeps each record's id in its record table (the record secret
:data:`STABLE_RECORD`) and never the key, which stays derived from the secret on the custodian's PC.
"""
from __future__ import annotations

import secrets
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import pyarrow as pa
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from ppdp_desktop.core.errors import ParameterError, PrivacyError
from ppdp_desktop.core.privacy.ecb_blocks import ChunkedECB

if TYPE_CHECKING:
    from ppdp_desktop.core.privacy.keyed import KeyedRandomness
    from ppdp_desktop.core.privacy.persistent import PersistentKeys

__all__ = ["PSEUDONYM_COLUMN", "PSEUDONYM_STREAM", "STABLE_RECORD", "PseudonymKey", "StablePseudonymKey",
           "make_pseudonyms"]

PSEUDONYM_COLUMN = "pseudonym"
PSEUDONYM_STREAM = "(pseudonyms)"
KEY_BYTES = 32
PREFIX = b"R"
ID_CHARS = len(PREFIX) + 32  # "R" + 32 hexadecimal digits
#: records per cipher call (1 MiB of blocks): large enough to be fast, small enough that a job does not peak on the
#: blocks, their cipher text and its hex digits, which are reused from call to call (issue 34)
CHUNK = 1 << 16
#: the most ids one Arrow string array holds (its 32-bit offsets address at most 2**31 - 1 bytes)
MAX_IDS_PER_ARRAY = (2**31 - 1) // ID_CHARS
_HEX = np.frombuffer(b"".join(b"%02x" % b for b in range(256)), dtype=np.uint16)  # byte -> its two digits
_DIGITS = b"0123456789abcdef"
#: two characters (read as one little-endian uint16) -> the byte they write in hex, or 256 if they are not hex
_PAIR = np.full(1 << 16, 256, dtype=np.uint16)
_PAIR[[a | b << 8 for a in _DIGITS for b in _DIGITS]] = np.arange(256, dtype=np.uint16)
_INVALID_LANES = np.uint64(0x0100_0100_0100_0100)  # the 256 bit of four uint16 lanes
#: the record secret under which the sealed key keeps each record's stable pseudonym (its record table's column)
STABLE_RECORD = "(pseudonym)"
#: what the stable pseudonyms' key is derived for from the custodian secret (HKDF info ``b"stream" + tag``; a
#: keyed stream's tag is 8 bytes, so this longer one names no stream)
STABLE_TAG = b"(pseudonyms) stable ids v1"


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
    #: whether a record's id follows its identity rather than its index (:class:`StablePseudonymKey`)
    stable = False

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
        return self._ids_of(stop - start, (np.arange(first, min(first + CHUNK, stop), dtype=np.uint64)
                                           for first in range(start, stop, CHUNK)))

    def ids_at(self, records: np.ndarray) -> pa.StringArray:
        """The ids of the records ``records`` (indices in any order: a release's shuffled order), each the id
        :meth:`ids` gives it; made in that order, so a shuffled release needs no shuffled copy of its ids."""
        records = np.asarray(records, dtype=np.int64)
        if len(records) > MAX_IDS_PER_ARRAY:
            raise ParameterError(f"At most {MAX_IDS_PER_ARRAY:,} ids are made at once; got {len(records):,} (ask in "
                                 "blocks).")
        if len(records) and int(records.min()) < 0:
            raise ParameterError(f"A record index is at least 0; got {int(records.min())}.")
        return self._ids_of(len(records), (records[first:first + CHUNK].astype(np.uint64)
                                           for first in range(0, len(records), CHUNK)))

    def _ids_of(self, n: int, parts: Iterable[np.ndarray]) -> pa.StringArray:
        """The ids of ``n`` records whose indices come in ``parts`` (uint64 arrays), in that order."""
        data = np.empty((n, ID_CHARS), dtype=np.uint8)
        writer = _IdWriter(self._key)  # ECB: each block on its own, whatever the parts
        blocks = np.zeros((CHUNK, 2), dtype=">u8")  # high 64 bits 0, low 64 bits the index (big-endian)
        done = 0
        for index in parts:
            m = len(index)
            blocks[:m, 1] = index
            writer.write(data[done:done + m], blocks[:m])
            done += m
        return _string_array(data)

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
        positions, blocks = _id_blocks(array)
        if not len(positions):
            return result
        plain = np.frombuffer(self._cipher().decryptor().update(blocks.tobytes()), dtype=">u8").reshape(-1, 2)
        high, low = plain[:, 0], plain[:, 1]
        found = (high == 0) & (low < limit)
        result[positions[found]] = low[found].astype(np.int64)
        return result


class StablePseudonymKey(PseudonymKey):
    """A project's stable pseudonyms (issue 30): a record's id is a permutation of its identity, not of its index,
    so a patient keeps one id over the project's releases (see the module docstring).

    The key is derived from the project's custodian secret (:meth:`from_secret`) and is never written: the sealed
    key file keeps each record's id in its record table instead. Once the release's records are known, :meth:`bind`
    lets :meth:`index_of` lead an id back to its record (the job's read-back check of the written ids).

    Examples
    --------
    >>> key = StablePseudonymKey(bytes(32))
    >>> first = np.array([1, 2], dtype=np.uint64); second = np.array([7, 7], dtype=np.uint64)
    >>> ids = key.ids_of(first, second).to_pylist()
    >>> ids == key.ids_of(first, second).to_pylist(), len(set(ids)), len(ids[0])
    (True, 2, 33)
    """

    __slots__ = ("_sorted", "_order", "_digest")
    stable = True

    def __init__(self, key: bytes) -> None:
        super().__init__(key)
        self._sorted: np.ndarray | None = None
        self._order: np.ndarray | None = None
        self._digest: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None

    @classmethod
    def from_secret(cls, keys: PersistentKeys) -> StablePseudonymKey:
        """The project's key, derived from its custodian secret (HKDF-SHA256, its own purpose)."""
        return cls(keys.stream_key(STABLE_TAG))

    def __repr__(self) -> str:  # never show the key
        return "StablePseudonymKey(<secret key>)"

    def hex(self) -> str:
        """Refused: the key stays derived from the custodian secret; the sealed key file keeps the ids instead."""
        raise PrivacyError("A stable pseudonym key is derived from the custodian secret and is never written; the "
                           "sealed key keeps each record's pseudonym instead.")

    def ids(self, start: int, stop: int) -> pa.StringArray:
        """Refused: a stable id follows the record's identity (:meth:`ids_of`), not its index."""
        raise PrivacyError("Stable pseudonyms follow each record's identity, not its position; nothing was released.")

    def ids_at(self, records: np.ndarray) -> pa.StringArray:
        """Refused: a stable id is made from the record's identity (:meth:`ids_of`), never from its index."""
        raise PrivacyError("Stable pseudonyms follow each record's identity, not its position; nothing was released.")

    def ids_of(self, first: np.ndarray, second: np.ndarray) -> pa.StringArray:
        """The ids of records whose identity fingerprints are ``first, second`` (uint64 arrays of one length), in
        their order: ``"R"`` + 32 hex digits, equal for equal identities and distinct for distinct ones."""
        n = len(first)
        if len(second) != n:
            raise ParameterError(f"The two halves of the identities differ in length ({n} and {len(second)}).")
        if n > MAX_IDS_PER_ARRAY:
            raise ParameterError(f"At most {MAX_IDS_PER_ARRAY:,} ids are made at once; got {n:,} (ask in blocks).")
        data = np.empty((n, ID_CHARS), dtype=np.uint8)
        writer = _IdWriter(self._key)
        blocks = np.empty((min(n, CHUNK), 2), dtype="<u8")
        for a in range(0, n, CHUNK):
            b = min(a + CHUNK, n)
            blocks[:b - a, 0], blocks[:b - a, 1] = first[a:b], second[a:b]
            writer.write(data[a:b], blocks[:b - a])
        return _string_array(data)

    def bind(self, identities: np.ndarray, digest: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> None:
        """Let :meth:`index_of` find the records of this release: ``identities`` are their identity digests in record
        order (distinct), ``digest(first, second)`` gives the digest of identity fingerprints (the ledger's keyed
        identities)."""
        identities = np.ascontiguousarray(identities, dtype=np.uint64)
        order = np.argsort(identities, kind="stable")
        ordered = identities[order]
        if len(ordered) > 1 and (ordered[1:] == ordered[:-1]).any():
            raise PrivacyError("Two records of the release share an identity, so they would share a stable "
                               "pseudonym; nothing was published.")
        self._sorted, self._order, self._digest = ordered, order, digest

    def _index_of(self, array: pa.StringArray, limit: np.uint64) -> np.ndarray:
        if self._sorted is None or self._order is None or self._digest is None:
            raise PrivacyError("The stable pseudonyms are not bound to the release's records yet, so they cannot be "
                               "checked; nothing was published.")
        result = np.full(len(array), -1, dtype=np.int64)
        positions, blocks = _id_blocks(array)
        if not len(positions) or not len(self._sorted):
            return result
        plain = np.frombuffer(self._cipher().decryptor().update(blocks.tobytes()), dtype="<u8").reshape(-1, 2)
        wanted = self._digest(plain[:, 0].astype(np.uint64), plain[:, 1].astype(np.uint64))
        at = np.minimum(np.searchsorted(self._sorted, wanted), len(self._sorted) - 1)
        index = self._order[at].astype(np.int64)
        found = (self._sorted[at] == wanted) & (index < np.int64(min(int(limit), 2**63 - 1)))
        result[positions[found]] = index[found]
        return result


class _IdWriter:
    """Encrypts up to :data:`CHUNK` blocks at a time and writes them as ids, in buffers kept from call to call (the
    cipher text and its hex digits: no temporaries of the size of the chunk made and freed per chunk)."""

    __slots__ = ("_cipher", "_hexed")

    def __init__(self, key: bytes) -> None:
        self._cipher = ChunkedECB(key, CHUNK)
        self._hexed = np.empty(CHUNK * 16, dtype=np.uint16)  # each cipher byte's two digits

    def write(self, rows: np.ndarray, blocks: np.ndarray) -> None:
        """Fill ``rows`` (uint8, ``(m, ID_CHARS)``) with ``"R"`` and the hexadecimal digits of the encrypted
        ``blocks`` (``(m, 2)`` 8-byte words, ``m <= CHUNK``)."""
        m = len(rows)
        hexed = self._hexed[:16 * m]
        np.take(_HEX, self._cipher.encrypt(blocks), out=hexed)
        rows[:, 0] = PREFIX[0]
        rows[:, 1:] = hexed.view(np.uint8).reshape(m, ID_CHARS - 1)


def _string_array(data: np.ndarray) -> pa.StringArray:
    """Rows of ``ID_CHARS`` characters as an Arrow string array."""
    n = len(data)
    offsets = np.arange(0, (n + 1) * ID_CHARS, ID_CHARS, dtype=np.int32)
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(np.ascontiguousarray(data)))


def _id_blocks(array: pa.StringArray) -> tuple[np.ndarray, np.ndarray]:
    """The positions of the texts of ``array`` that are shaped like ids ("R" and 32 lowercase hex digits), and the
    16-byte blocks they write (uint8, one row each)."""
    if not len(array):
        return np.empty(0, dtype=np.int64), np.empty((0, 16), dtype=np.uint8)
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int32, count=len(array) + 1, offset=4 * array.offset)
    shaped = np.diff(offsets) == ID_CHARS
    if array.null_count:
        shaped &= array.is_valid().to_numpy(zero_copy_only=False)
    positions = np.flatnonzero(shaped)
    if not len(positions):
        return positions, np.empty((0, 16), dtype=np.uint8)
    data = _packed_bytes(array.filter(pa.array(shaped))).reshape(len(positions), ID_CHARS)
    pairs = np.take(_PAIR, np.ascontiguousarray(data[:, 1:]).view("<u2"))  # two digits -> a byte, or 256
    lanes = pairs.view(np.uint64)
    invalid = (lanes[:, 0] | lanes[:, 1] | lanes[:, 2] | lanes[:, 3]) & _INVALID_LANES
    valid = (data[:, 0] == PREFIX[0]) & (invalid == 0)  # "R" and 32 lowercase hex digits
    return positions[valid], pairs[valid].astype(np.uint8)


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
