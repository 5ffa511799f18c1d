"""Randomness keyed by record, not by order (issue 19, point 1).

Every random number a privacy method draws for a record is a function of four things only: the
job's secret seed, the name of the stream (a column and a draw, e.g. ``("diag", "keep")``), the
record's index in the table and, for the rare retries of an integer draw, the retry number. It never
depends on how many numbers were drawn before, so a release is byte-identical whether it is
computed in memory, streamed in chunks of any size or spread over any number of partitions.

Why PCG64 is retired for privacy randomness
-------------------------------------------
numpy's PCG64 is a fast statistical generator, not a cryptographic one: its state can be recovered
from a modest run of outputs, and then every other draw of the job (which records were kept, what
replaced them, the shuffle) can be computed by whoever saw them. Its numbers also depend on the
order in which they are consumed, which ties the release to one chunking. ChaCha20 (RFC 8439) is a
stream cipher: without the key its keystream cannot be told from random bits, and any block of it
is computed directly from a counter.

Key
---
The 256-bit ChaCha20 key is ``HKDF-SHA256(ikm=seed, salt=SALT, info=INFO, length=32)`` (RFC 5869)
with ``SALT = b"ppdp-desktop keyed randomness"`` and ``INFO = b"v1 chacha20 job key"``; the seed
(a non-negative integer, 128 bits from :func:`~ppdp_desktop.core.privacy.randomness.new_seed`) is
written big-endian in ``max(16, ceil(bits / 8))`` bytes. HKDF spreads the seed's entropy over the key
and separates this use of the seed from any other use of it.

Addressing: which keystream bytes belong to which record
--------------------------------------------------------
A stream ``(column, draw)`` has an 8-byte tag: the first 8 bytes of
``SHA-256(b"ppdp-desktop keyed stream v1" + label_1 + label_2 [+ retry])``, each label written as a
type byte (``s`` text, ``i`` integer), a 4-byte little-endian length and its UTF-8 (or 8-byte
little-endian) bytes. The stream is the ChaCha20 keystream with a 64-bit block counter ``b`` and the
tag as a 64-bit nonce (the original ChaCha layout; state words 12-13 the counter, 14-15 the tag).
In terms of RFC 8439's 32-bit counter and 96-bit nonce, block ``b`` is produced with

* block counter ``b mod 2**32`` (the first 4 bytes of ``cryptography``'s 16-byte nonce, little-endian),
* nonce ``(b >> 32)`` as 4 little-endian bytes followed by the 8-byte tag.

**Record ``i`` owns the 64-bit word ``i`` of its stream**: bytes ``8*i .. 8*i + 7`` of the keystream,
that is block ``i // 8``, bytes ``8 * (i % 8)`` to ``8 * (i % 8) + 7`` of it, read as a
little-endian unsigned integer ``w``. A range ``[start, stop)`` is computed from block
``start // 8`` on, dropping the first ``start % 8`` words, and is cut into separate cipher calls
where the 32-bit counter would wrap (every ``2**32`` blocks, i.e. ``2**35`` records), so no call ever
relies on a library's behaviour at the wrap. The draws made from ``w``:

* uniform: ``(w >> 11) * 2**-53``, a float64 in [0, 1) with 53 random bits;
* Bernoulli(p): ``uniform < p``, computed exactly as ``w < ceil(p * 2**53) * 2**11``;
* sort key: ``w`` itself (for the final shuffle: a record's position is its rank by
  ``(sort key, index)``, wherever the record was computed);
* integer in ``[0, high)``, ``1 <= high <= 2**32``: Lemire's multiply-and-reject method on 32-bit
  halves: with ``x`` the low half of ``w`` (its bytes 0-3), ``x * high = hi * 2**32 + lo`` and the draw
  is ``hi`` unless ``lo < (2**32 - high) mod high``; then the high half of ``w`` (bytes 4-7) is tried
  the same way, then the word ``i`` of the retry stream ``(column, draw, 1)``, ``(column, draw, 2)``...
  The accepted values are exactly uniform, and a record's result still depends only on its own
  words, so it stays addressable. A half is rejected with probability below ``high / 2**32``
  (below 2e-8 for 50 values).

One stream serves one kind of draw; two draws for a record take two streams. A draw that needs a
variable number of words per record (the exact discrete Laplace sampler of dp-microaggregation) reads its
``j``-th word from word ``i`` of the sub-stream ``(column, draw, "step", j)`` (:meth:`RecordStream.substream`,
:meth:`RecordStream.words_at`), so a record's result still depends on its own words only.
"""
from __future__ import annotations

import hashlib
import math
import struct
from collections.abc import Iterator

import numpy as np
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.privacy.persistent import PersistentKeys, prf_words

__all__ = ["KeyedRandomness", "RecordStream", "derive_key", "key_order", "stream_tag"]

HKDF_SALT = b"ppdp-desktop keyed randomness"
HKDF_INFO = b"v1 chacha20 job key"
STREAM_DOMAIN = b"ppdp-desktop keyed stream v1"

WORDS_PER_BLOCK = 8  # a 64-byte ChaCha20 block holds eight 64-bit words, one per record
BLOCKS_PER_SEGMENT = 1 << 32  # RFC 8439's counter is 32 bits: one nonce per 2**32 blocks
CHUNK_RECORDS = 1 << 17  # records per cipher call: 1 MiB of keystream, stays in the cache
MAX_INTEGER_HIGH = 1 << 32
_TWO_POW_53 = float(1 << 53)
_UNIT = 2.0**-53


def derive_key(seed: int) -> bytes:
    """The job's 256-bit ChaCha20 key: HKDF-SHA256 of the seed (see the module docstring).

    Parameters
    ----------
    seed : int
        The job's secret seed, a non-negative integer.

    Returns
    -------
    bytes
        32 bytes.
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ParameterError(f"The seed must be a non-negative integer; got {seed!r}.")
    seed = int(seed)
    ikm = seed.to_bytes(max(16, (seed.bit_length() + 7) // 8), "big")
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=HKDF_SALT, info=HKDF_INFO).derive(ikm)


def _encode_label(label: str | int) -> bytes:
    if isinstance(label, str):
        data = label.encode("utf-8")
        return b"s" + struct.pack("<I", len(data)) + data
    return b"i" + struct.pack("<I", 8) + struct.pack("<Q", label)


def stream_tag(*labels: str | int) -> bytes:
    """The 8-byte tag (ChaCha20's 64-bit nonce) of the stream named by ``labels``.

    Each label is written with its type and length, so that no two label sequences share an
    encoding; a tag is the first 8 bytes of SHA-256 of the encoding (collisions among a job's
    handful of streams have probability about ``n**2 / 2**65``).
    """
    digest = hashlib.sha256(STREAM_DOMAIN + b"".join(_encode_label(label) for label in labels))
    return digest.digest()[:8]


def key_order(keys: np.ndarray) -> np.ndarray:
    """The order of records by ``(sort key, index)``: ``numpy.argsort(keys, kind="stable")``, computed with numpy's
    vectorized sort, which gives that same order when no two keys tie (random 64-bit keys tie with probability
    about ``n**2 / 2**65``; then the stable sort is used). 1M keys: 0.11 -> 0.03 CPU s."""
    keys = np.asarray(keys)
    order = np.argsort(keys)
    ordered = keys[order]
    if len(keys) > 1 and bool((ordered[1:] == ordered[:-1]).any()):
        return np.argsort(keys, kind="stable")
    return order


def _check_range(start: int, stop: int) -> tuple[int, int]:
    start, stop = int(start), int(stop)
    if start < 0 or stop < start:
        raise ParameterError(
            f"The record range must satisfy 0 <= start <= stop; got start={start}, stop={stop}."
        )
    if stop > WORDS_PER_BLOCK * BLOCKS_PER_SEGMENT * (1 << 32):
        raise ParameterError(f"The record range ends beyond 2**67 records; got stop={stop}.")
    return start, stop


class KeyedRandomness:
    """The job's keyed randomness: named streams of per-record draws from one secret seed.

    Parameters
    ----------
    seed : int
        The job's secret seed (see :func:`~ppdp_desktop.core.privacy.randomness.job_randomness`); the
        ChaCha20 key is derived from it with :func:`derive_key`.

    Examples
    --------
    >>> keyed = KeyedRandomness(2024)
    >>> keep = keyed.stream("diag", "keep").bernoulli(0, 5, 0.7)
    >>> bool((keep == (keyed.stream("diag", "keep").uniforms(0, 5) < 0.7)).all())
    True
    """

    __slots__ = ("_key", "_records")

    def __init__(self, seed: int) -> None:
        self._key = derive_key(seed)
        self._records: _BoundRecords | None = None

    @classmethod
    def from_key(cls, key: bytes) -> KeyedRandomness:
        """Build from a 32-byte ChaCha20 key directly (test vectors, a key kept in a key file)."""
        if len(key) != 32:
            raise ParameterError(f"The key must be 32 bytes; got {len(key)}.")
        obj = cls.__new__(cls)
        obj._key = bytes(key)
        obj._records = None
        return obj

    def with_records(self, keys: PersistentKeys, identities: np.ndarray, start: int) -> KeyedRandomness:
        """This randomness bound to records ``start, ..., start + len(identities) - 1`` whose keyed identity digests
        are ``identities``: :meth:`keep_or_draw` with a ``mechanism`` then draws persistently
        (:mod:`~ppdp_desktop.core.privacy.persistent`); every other stream stays this job's."""
        obj = type(self).__new__(type(self))
        obj._key = self._key
        obj._records = _BoundRecords(keys, np.ascontiguousarray(identities, dtype=np.uint64), int(start))
        return obj

    @property
    def persistent(self) -> bool:
        """Whether :meth:`keep_or_draw` draws persistently when given a mechanism (records are bound)."""
        return self._records is not None

    def __repr__(self) -> str:  # never show the key
        return "KeyedRandomness(<secret key>)"

    def stream(self, column: str, draw: str) -> RecordStream:
        """The stream of draw ``draw`` for column ``column`` (e.g. ``stream("diag", "keep")``)."""
        if not isinstance(column, str) or not isinstance(draw, str):
            raise ParameterError(
                f"A stream is named by two texts (column, draw); got {column!r}, {draw!r}."
            )
        return RecordStream(self._key, (column, draw))

    def keep_or_draw(self, column: str, start: int, stop: int, p: float | np.ndarray, high: int | np.ndarray,
                     draw: str = "value", mechanism: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """What randomizing a column draws for records ``[start, stop)``: whether each keeps its value
        (probability ``p``, stream ``(column, "keep")``) and an integer below ``high`` for its replacement
        (stream ``(column, draw)``).

        ``mechanism``: each record's mechanism digest (:func:`~ppdp_desktop.core.privacy.persistent.mechanism_digests`
        indexed by its true value). When the records are bound (:meth:`with_records`), the two streams are then the
        persistent ones: the same patient, value and mechanism draw the same in every release.
        """
        keep = self.record_stream(column, "keep", start, stop, mechanism).bernoulli(start, stop, p)
        return keep, self.record_stream(column, draw, start, stop, mechanism).integers(start, stop, high)

    def record_stream(self, column: str, draw: str, start: int, stop: int,
                      mechanism: np.ndarray | None = None) -> RecordStream:
        """The stream ``(column, draw)`` for records ``[start, stop)``: the persistent one when the records are
        bound (:meth:`with_records`) and ``mechanism`` gives each record's mechanism digest, else this job's."""
        stream = self.stream(column, draw)
        if mechanism is None or self._records is None:
            return stream
        return self._records.stream(stream, mechanism, start, stop)


class _BoundRecords:
    """The records a job's randomness is bound to: the custodian's keys and their identity digests."""

    __slots__ = ("identities", "keys", "start")

    def __init__(self, keys: PersistentKeys, identities: np.ndarray, start: int) -> None:
        self.keys, self.identities, self.start = keys, identities, start

    def stream(self, stream: RecordStream, mechanism: np.ndarray, start: int, stop: int) -> RecordStream:
        a, b = start - self.start, stop - self.start
        if a < 0 or b > len(self.identities) or len(mechanism) != stop - start:
            raise ParameterError(f"Records {start}-{stop - 1} are not the records the randomness is bound to "
                                 f"({self.start}-{self.start + len(self.identities) - 1}), or their mechanism "
                                 f"digests ({len(mechanism)}) do not match them.")
        return PersistentStream(self.keys, stream.labels, self.identities[a:b],
                                np.ascontiguousarray(mechanism, dtype=np.uint64), start)


class RecordStream:
    """One named stream: record ``i`` owns the keystream's 64-bit word ``i``.

    Every method takes a record range ``[start, stop)`` and returns one value per record; the values
    of a record are the same whichever range it is computed in.
    """

    __slots__ = ("_key", "_labels", "_tag")

    def __init__(self, key: bytes, labels: tuple[str | int, ...]) -> None:
        self._key = key
        self._labels = labels
        self._tag = stream_tag(*labels)

    def __repr__(self) -> str:
        return f"RecordStream{self._labels!r}"

    @property
    def labels(self) -> tuple[str | int, ...]:
        """The stream's name: ``(column, draw[, more labels])``."""
        return self._labels

    def _child(self, labels: tuple[str | int, ...]) -> RecordStream:
        """The stream named ``labels`` under the same key (a retry or a sub-stream)."""
        return RecordStream(self._key, labels)

    # -- the keystream ---------------------------------------------------------------------------
    def _chunks(self, start: int, stop: int) -> Iterator[tuple[int, np.ndarray]]:
        """Yield ``(offset, words)``: the words of records ``start + offset ...`` in order.

        ``words`` is a little-endian uint64 view of a buffer that the next step reuses: consume it
        before asking for the next chunk.
        """
        if stop <= start:
            return
        first_block = start // WORDS_PER_BLOCK
        end_block = -(-stop // WORDS_PER_BLOCK)
        skip = start - first_block * WORDS_PER_BLOCK
        nbytes = min(end_block - first_block, CHUNK_RECORDS // WORDS_PER_BLOCK) * 64
        zeros = bytes(nbytes)
        out = bytearray(nbytes + 64)  # cryptography asks for room beyond the data
        offset = 0
        block = first_block
        while block < end_block:
            segment, counter = divmod(block, BLOCKS_PER_SEGMENT)
            seg_end = min(end_block, (segment + 1) * BLOCKS_PER_SEGMENT)
            nonce = struct.pack("<II", counter, segment) + self._tag
            encryptor = Cipher(algorithms.ChaCha20(self._key, nonce), mode=None).encryptor()
            while block < seg_end:
                nblocks = min(seg_end - block, nbytes // 64)
                size = nblocks * 64
                encryptor.update_into(zeros if size == nbytes else zeros[:size], out)
                words = np.frombuffer(out, dtype="<u8", count=nblocks * WORDS_PER_BLOCK)
                words = words[skip:]
                words = words[: stop - start - offset]
                skip = 0
                yield offset, words
                offset += len(words)
                block += nblocks

    def words(self, start: int, stop: int) -> np.ndarray:
        """The raw 64-bit words of records ``[start, stop)`` (uint64)."""
        start, stop = _check_range(start, stop)
        result = np.empty(stop - start, dtype=np.uint64)
        for offset, words in self._chunks(start, stop):
            result[offset : offset + len(words)] = words
        return result

    def words_at(self, indices: np.ndarray) -> np.ndarray:
        """The raw 64-bit words of the records at ``indices`` (ascending, no repeats), uint64.

        Reads one range when the indices are dense, else one page of 64 words (512 bytes of keystream)
        per page that holds an index, so that a few stragglers far apart do not cost the whole range.
        """
        idx = np.asarray(indices, dtype=np.int64)
        if len(idx) == 0:
            return np.empty(0, dtype=np.uint64)
        first, last = int(idx[0]), int(idx[-1])
        _check_range(first, last + 1)
        if last + 1 - first <= 16 * len(idx):  # dense
            return self.words(first, last + 1)[idx - first]
        pages = np.unique(idx >> 6)
        if last + 1 - first <= 1024 * len(pages):  # dense: one pass costs less than a call per page
            return self.words(first, last + 1)[idx - first]
        result = np.empty(len(idx), dtype=np.uint64)
        bounds = np.searchsorted(idx, np.append(pages, pages[-1] + 1) << 6)
        for page, a, b in zip(pages.tolist(), bounds[:-1].tolist(), bounds[1:].tolist()):  # one call per page
            result[a:b] = self.words(page << 6, (page + 1) << 6)[idx[a:b] - (page << 6)]
        return result

    def substream(self, *labels: str | int) -> RecordStream:
        """The stream named by this stream's labels followed by ``labels`` (e.g. ``("step", 3)``): an
        independent stream for the ``j``-th draw of a record that needs a variable number of draws.
        (The retry streams of :meth:`integers` append one integer; a sub-stream that starts with a text
        label never coincides with one of them.)"""
        if not labels or not isinstance(labels[0], str):
            raise ParameterError(f"A sub-stream's first label must be a text; got {labels!r}.")
        return self._child(self._labels + tuple(labels))

    # -- draws -------------------------------------------------------------------------------------
    def uniforms(self, start: int, stop: int) -> np.ndarray:
        """Uniform floats in [0, 1) with 53 random bits, ``(w >> 11) * 2**-53``, one per record.

        Returns
        -------
        numpy.ndarray
            float64 array of length ``stop - start``.
        """
        start, stop = _check_range(start, stop)
        result = np.empty(stop - start, dtype=np.float64)
        for offset, words in self._chunks(start, stop):
            np.multiply(words >> np.uint64(11), _UNIT, out=result[offset : offset + len(words)])
        return result

    def sort_keys(self, start: int, stop: int) -> np.ndarray:
        """A uniform 64-bit sort key per record, for the final shuffle.

        Sorting records by ``(key, index)`` (``numpy.argsort(keys, kind="stable")`` within one
        array) gives a uniformly random order that any partitioning reproduces: a distributed sort
        on the same pair gives the same positions. Ties have probability about ``n**2 / 2**65``.
        """
        return self.words(start, stop)

    def bernoulli(self, start: int, stop: int, p: float | np.ndarray) -> np.ndarray:
        """``uniforms(start, stop) < p`` (e.g. keep a record's true value), one per record.

        A scalar ``p`` is compared on the integers, ``w < ceil(p * 2**53) * 2**11``, which is the
        same event exactly and skips the float conversion; an array ``p`` (one per record) uses
        the uniforms.
        """
        start, stop = _check_range(start, stop)
        if np.ndim(p) != 0:
            p = np.asarray(p, dtype=np.float64)
            if p.shape != (stop - start,):
                raise ParameterError(
                    f"p must be a number or one probability per record ({stop - start}); "
                    f"got shape {p.shape}."
                )
            return self.uniforms(start, stop) < p
        p = float(p)
        if math.isnan(p):
            raise ParameterError("p must be a probability; got nan.")
        result = np.empty(stop - start, dtype=bool)
        if p <= 0.0 or p >= 1.0:
            result.fill(p >= 1.0)
            return result
        threshold = np.uint64(math.ceil(p * _TWO_POW_53) << 11)
        for offset, words in self._chunks(start, stop):
            np.less(words, threshold, out=result[offset : offset + len(words)])
        return result

    def integers(self, start: int, stop: int, high: int | np.ndarray) -> np.ndarray:
        """Unbiased integers in ``[0, high)``, one per record; ``high`` may differ per record.

        Lemire's multiply-and-reject on the word's 32-bit halves, then on retry streams (see the
        module docstring): exactly uniform, and addressable because every attempt a record makes
        is read from its own word of a named stream.

        Parameters
        ----------
        start, stop : int
            The record range.
        high : int or numpy.ndarray
            Exclusive upper bound, ``1 <= high <= 2**32``: one number, or one per record.

        Returns
        -------
        numpy.ndarray
            int64 array of length ``stop - start``.
        """
        start, stop = _check_range(start, stop)
        n = stop - start
        per_record = np.ndim(high) != 0
        if per_record:
            high_arr = np.asarray(high)
            if high_arr.shape != (n,):
                raise ParameterError(
                    f"high must be a number or one bound per record ({n}); got shape {high_arr.shape}."
                )
            if n and (not np.issubdtype(high_arr.dtype, np.integer)
                      or high_arr.min() < 1 or high_arr.max() > MAX_INTEGER_HIGH):
                raise ParameterError(
                    f"Every high must be an integer in [1, 2**32]; got values from "
                    f"{high_arr.min()} to {high_arr.max()}."
                )
            high_arr = high_arr.astype(np.uint64)
        else:
            if isinstance(high, bool) or not isinstance(high, (int, np.integer)) \
                    or not 1 <= high <= MAX_INTEGER_HIGH:
                raise ParameterError(f"high must be an integer in [1, 2**32]; got {high!r}.")
            high_arr = None
        result = np.empty(n, dtype=np.uint64)
        pending: list[np.ndarray] = []  # positions (in the range) whose two halves were rejected
        for offset, words in self._chunks(start, stop):
            h = high if high_arr is None else high_arr[offset : offset + len(words)]
            values, rejected = _lemire_word(words, h)
            result[offset : offset + len(words)] = values
            if rejected is not None:
                pending.append(rejected + offset)
        if pending:
            self._retry(start, n, result, np.concatenate(pending), high, high_arr)
        return result.view(np.int64)

    def _retry(self, start: int, n: int, result: np.ndarray, todo: np.ndarray,
               high: int | np.ndarray, high_arr: np.ndarray | None) -> None:
        """Redraw the records at positions ``todo`` from retry streams 1, 2, ... until accepted."""
        attempt = 0
        while len(todo):
            attempt += 1
            stream = self._child(self._labels + (attempt,))
            if len(todo) * 64 >= n:  # many: one pass over the range
                words = stream.words(start, start + n)[todo]
            else:  # few: one word each
                words = np.concatenate([stream.words(start + int(i), start + int(i) + 1) for i in todo])
            h = high if high_arr is None else high_arr[todo]
            values, rejected = _lemire_word(words, h)
            result[todo] = values
            todo = todo[rejected] if rejected is not None else todo[:0]


class PersistentStream(RecordStream):
    """A stream whose word for a record is a function of the custodian's secret, the record's identity digest and
    its mechanism digest (:mod:`~ppdp_desktop.core.privacy.persistent`), for records ``start ...`` only; every draw
    method is :class:`RecordStream`'s."""

    __slots__ = ("_identities", "_keys", "_mechanism", "_start")

    def __init__(self, keys: PersistentKeys, labels: tuple[str | int, ...], identities: np.ndarray,
                 mechanism: np.ndarray, start: int) -> None:
        super().__init__(b"", labels)
        self._keys, self._identities, self._mechanism, self._start = keys, identities, mechanism, start

    def __repr__(self) -> str:
        return f"PersistentStream{self._labels!r}"

    def _child(self, labels: tuple[str | int, ...]) -> RecordStream:
        return PersistentStream(self._keys, labels, self._identities, self._mechanism, self._start)

    def _chunks(self, start: int, stop: int) -> Iterator[tuple[int, np.ndarray]]:
        if stop <= start:
            return
        a, b = start - self._start, stop - self._start
        if a < 0 or b > len(self._identities):
            raise ParameterError(f"Records {start}-{stop - 1} are outside this persistent stream's records.")
        key = self._keys.stream_key(self._tag)
        for first in range(a, b, CHUNK_RECORDS):  # a chunk at a time: the draws' temporaries stay small (issue 34)
            last = min(first + CHUNK_RECORDS, b)
            yield first - a, prf_words(key, self._identities[first:last], self._mechanism[first:last])


def _lemire_word(words: np.ndarray, high: int | np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """Lemire's method on the low, then the high half of each word.

    Returns the values (uint64; meaningless where rejected) and the positions where both halves
    were rejected, or ``None`` when there are none.
    """
    halves = words.view("<u4")
    values, rejected = _lemire_half(halves[0::2], high)
    if rejected is None:
        return values, None
    h = high[rejected] if isinstance(high, np.ndarray) and high.ndim else high  # one bound, or one a word
    values2, rejected2 = _lemire_half(halves[1::2][rejected], h)
    values[rejected] = values2
    if rejected2 is None:
        return values, None
    return values, rejected[rejected2]


def _lemire_half(x: np.ndarray, high: int | np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """``(x * high) >> 32`` for 32-bit ``x``, and the positions rejected for exact uniformity."""
    high_u = np.uint64(high) if np.ndim(high) == 0 else high
    product = np.multiply(x, high_u, dtype=np.uint64)
    parts = product.view("<u4")
    low = parts[0::2]
    # Lemire: reject when low < (2**32 - high) % high; that threshold is < high, so only the
    # (rare) positions with low < high need the modulo.
    candidates = np.flatnonzero(low < high_u)
    values = product >> np.uint64(32)
    if len(candidates) == 0:
        return values, None
    h = high_u[candidates] if isinstance(high_u, np.ndarray) else high_u  # an array exactly when ndim(high) > 0
    threshold = (np.uint64(1 << 32) - h) % h
    rejected = candidates[low[candidates] < threshold]
    return values, (rejected if len(rejected) else None)
