"""AES in ECB mode over 16-byte blocks a chunk at a time, into one cipher-text buffer kept from call to call.

ECB encrypts each block on its own, so a long array of blocks can go through the cipher a chunk at a time with the
same result as in one call; keeping the cipher text's buffer avoids making and freeing a chunk-sized temporary per
call (issue 34's memory). Used by the persistent draws' PRF words (:mod:`.persistent`) and the pseudonyms'
ids (:mod:`.pseudonyms`).
"""
from __future__ import annotations

import numpy as np
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes


class ChunkedECB:
    """AES-ECB under ``key`` for up to ``capacity`` blocks a call."""

    __slots__ = ("_buffer", "_encryptor", "_text")

    def __init__(self, key: bytes, capacity: int) -> None:
        self._encryptor = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
        self._buffer = bytearray(capacity * 16 + 15)  # update_into wants room for one block more than the data
        self._text = np.frombuffer(self._buffer, dtype=np.uint8, count=capacity * 16)

    def encrypt(self, blocks: np.ndarray) -> np.ndarray:
        """The cipher text of ``blocks`` (``(m, 2)`` 8-byte words, ``m`` at most the capacity) as ``16 m`` bytes: a
        view of the kept buffer, valid until the next call."""
        self._encryptor.update_into(np.ascontiguousarray(blocks).data.cast("B"), self._buffer)
        return self._text[:16 * len(blocks)]
