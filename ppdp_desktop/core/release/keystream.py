"""Streamed authenticated encryption of a key file's body: the STREAM construction over AES-256-GCM.

STREAM (Hoang, Reyhanitabar, Rogaway and Vizár, "Online authenticated-encryption and its nonce-reuse
misuse-resistance", CRYPTO 2015; the layout Tink's streaming AEAD uses) cuts the plaintext into segments of
``segment_bytes`` (the last one shorter or equal, never empty unless the whole plaintext is) and seals segment
``i`` on its own::

    nonce_i = prefix (7 bytes) || i (4 bytes, big-endian) || last (1 byte: 1 for the final segment, else 0)
    segment_i = AES-256-GCM(key, nonce_i, plaintext_i, associated data = the file's header bytes)

so each ciphertext segment is ``len(plaintext_i) + 16`` bytes. Moving, dropping or repeating a segment changes
its nonce; cutting the file at a segment boundary leaves a final segment sealed as "not last"; appending leaves
the true last one before the end: each fails authentication. The key is ``HKDF-SHA256(ikm=the key derived
from the passphrase, salt=prefix, info=INFO)``, so even two files sealed with the same scrypt salt use
different keys. Writing and reading hold one segment at a time, so the body has no size limit (2**32
segments) and neither side needs the whole plaintext in memory.
"""
from __future__ import annotations

import io
from typing import BinaryIO

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from ppdp_desktop.core.errors import KeyFileError

__all__ = ["PREFIX_BYTES", "TAG_BYTES", "SegmentReader", "SegmentWriter", "segment_key"]

PREFIX_BYTES = 7
TAG_BYTES = 16
MAX_SEGMENTS = 1 << 32
INFO = b"ppdp-desktop key file v2 segments"


def segment_key(master: bytes, prefix: bytes) -> bytes:
    """The AES-256 key of the segments: HKDF-SHA256 of the passphrase's key, salted with the nonce prefix."""
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=prefix, info=INFO).derive(master)


def _nonce(prefix: bytes, index: int, last: bool) -> bytes:
    return prefix + index.to_bytes(4, "big") + (b"\x01" if last else b"\x00")


class SegmentWriter(io.RawIOBase):
    """A write-only file that seals what is written into ``out`` segment by segment.

    Call :meth:`finish` after the last write: it seals the final segment (marked last). Without it the
    output is incomplete and will not open. At most one segment (plus the latest write) is buffered.
    """

    def __init__(self, out: BinaryIO, key: bytes, prefix: bytes, aad: bytes, segment_bytes: int) -> None:
        super().__init__()
        self._out, self._aead, self._prefix, self._aad = out, AESGCM(key), prefix, aad
        self._segment = segment_bytes
        self._pending = bytearray()
        self._index = 0
        self._position = 0

    def writable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._position

    def write(self, data: bytes | bytearray | memoryview) -> int:  # type: ignore[override]
        view = memoryview(data).cast("B")
        self._pending += view
        self._position += len(view)
        done = 0
        while len(self._pending) - done > self._segment:  # a segment is sealed once more data follows it
            self._seal(memoryview(self._pending)[done:done + self._segment], last=False)
            done += self._segment
        if done:
            del self._pending[:done]
        return len(view)

    def finish(self) -> None:
        """Seal what is left as the last segment."""
        self._seal(memoryview(self._pending), last=True)
        self._pending = bytearray()

    def _seal(self, plain: memoryview, last: bool) -> None:
        if self._index >= MAX_SEGMENTS:
            raise KeyFileError("The key contents are too large to seal (over 2**32 segments)")
        self._out.write(self._aead.encrypt(_nonce(self._prefix, self._index, last), bytes(plain), self._aad))
        self._index += 1


class SegmentReader(io.RawIOBase):
    """A read-only file of the plaintext of ``body_bytes`` sealed bytes read from ``source``'s position.

    Each segment is authenticated before any of its bytes is returned; a segment that does not authenticate
    raises a one-line :class:`KeyFileError` (wrong passphrase, altered, cut short or extended).
    """

    def __init__(self, source: BinaryIO, body_bytes: int, key: bytes, prefix: bytes, aad: bytes,
                 segment_bytes: int, label: str) -> None:
        super().__init__()
        full = segment_bytes + TAG_BYTES
        self._count = max(1, -(-body_bytes // full))
        if body_bytes - (self._count - 1) * full < TAG_BYTES:
            raise KeyFileError(f"{label} is truncated or damaged")
        if self._count > MAX_SEGMENTS:
            raise KeyFileError(f"{label} is damaged (over 2**32 segments)")
        self._source, self._aead, self._prefix, self._aad = source, AESGCM(key), prefix, aad
        self._full, self._body, self._label = full, body_bytes, label
        self._index = 0
        self._buffer = b""
        self._offset = 0

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> bytes:
        parts: list[bytes] = []
        wanted = -1 if size is None or size < 0 else size
        while wanted:
            if self._offset == len(self._buffer):
                if self._index == self._count:
                    break
                self._buffer, self._offset = self._open_next(), 0
                continue
            take = len(self._buffer) - self._offset if wanted < 0 else min(wanted, len(self._buffer) - self._offset)
            parts.append(self._buffer[self._offset:self._offset + take])
            self._offset += take
            wanted -= take if wanted > 0 else 0
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        data = self.read(len(buffer))
        memoryview(buffer).cast("B")[:len(data)] = data
        return len(data)

    def rest_is_empty(self) -> bool:
        """Authenticate every segment not read yet (down to the last one); whether they held no more bytes."""
        empty = self._offset == len(self._buffer)
        while self._index < self._count:
            empty = not self._open_next() and empty
        self._buffer, self._offset = b"", 0
        return empty

    def _open_next(self) -> bytes:
        index, last = self._index, self._index == self._count - 1
        size = self._body - index * self._full if last else self._full
        sealed = self._source.read(size)
        if len(sealed) != size:
            raise KeyFileError(f"{self._label} is truncated or damaged")
        try:
            plain = self._aead.decrypt(_nonce(self._prefix, index, last), sealed, self._aad)
        except InvalidTag:
            raise self._failure(index, last, sealed) from None
        self._index += 1
        return plain

    def _failure(self, index: int, last: bool, sealed: bytes) -> KeyFileError:
        """Why segment ``index`` does not authenticate, in one line."""
        try:  # sealed with the other flag: the file was cut after it, or something follows the real end
            self._aead.decrypt(_nonce(self._prefix, index, not last), sealed, self._aad)
        except InvalidTag:
            if index == 0:
                return KeyFileError(f"Wrong passphrase, or {self._label} has been altered")
            return KeyFileError(
                f"{self._label} has been altered (part {index + 1} of {self._count} does not authenticate)")
        if last:
            return KeyFileError(f"{self._label} is truncated or damaged (its end is missing)")
        return KeyFileError(f"{self._label} is damaged (unexpected bytes at the end)")
