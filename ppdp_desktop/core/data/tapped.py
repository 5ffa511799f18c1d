"""A text file handed to pyarrow's CSV parser a block at a time, with everything the load asks of its bytes worked
out on the way (issue 34: the load without the whole file in memory beside its table).

:class:`TappedReader` serves the bytes already read (the sniffing head), then the rest of the open file, and for
each block it serves: hashes it (the input's SHA-256, of exactly the bytes parsed), counts its line breaks and
quotes (where each record sits in the file; a quote never closed) and checks that it is UTF-8 without NUL bytes
(what :func:`~ppdp_desktop.core.data.sniffing.decode` would find). A file that is not is read again the whole-bytes
way, whose messages name the offending byte and line.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import BinaryIO

import numpy as np

from ppdp_desktop.core.data.digest import FileDigest, ForwardReader


def utf8_valid(data: bytes | memoryview) -> bool:
    """Whether ``data`` is valid UTF-8, told by pyarrow's validator in C (exactly Python's strict decoder's answer:
    overlong forms, surrogates and code points above U+10FFFF refused)."""
    import pyarrow as pa

    offsets = pa.py_buffer(np.array([0, len(data)], dtype=np.int64))
    try:  # one value of all the bytes, cast to text: the cast validates, without the interpreter lock
        pa.Array.from_buffers(pa.large_binary(), 1, [None, offsets, pa.py_buffer(data)]).cast(pa.large_string())
    except pa.ArrowInvalid:
        return False
    return True


def _is_continuation(byte: int) -> bool:
    return byte & 0xC0 == 0x80


def whole_characters(data: bytes | memoryview) -> int:
    """Where the last character of ``data`` starts when the end of ``data`` may have cut it (``len(data)`` when it
    ends with an ASCII byte, or with more continuation bytes than a character has, which no validation passes)."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[len(data) - back]
        if not _is_continuation(byte):
            return len(data) - back if byte >= 0xC0 else len(data)
    return len(data)


class TappedReader(ForwardReader):
    """A read-only file for pyarrow's parser: ``head`` (bytes already read from ``handle``), then the rest of
    ``handle``. After the parser has read to the end (:attr:`ended`): :attr:`utf8` (every byte valid UTF-8),
    :attr:`nul` (a NUL byte seen), :meth:`breaks` and :attr:`quotes` (counts), :attr:`last` (the last byte) and
    :meth:`digest`."""

    def __init__(self, path: Path, head: bytes, handle: BinaryIO) -> None:
        self.path, self._head, self.handle = path, head, handle
        self._sha = hashlib.sha256()
        self.size = self.quotes = self._lf = self._cr = 0
        self.utf8, self.nul, self.ended = True, False, False
        self.last = b""
        self._pending = b""  # the start of a character cut by the end of the last block

    def read(self, n: int = -1) -> bytes:
        if self._head:
            block, self._head = (self._head, b"") if n < 0 or n >= len(self._head) else (self._head[:n], self._head[n:])
        else:
            block = self.handle.read(n)
        if block:
            self._tap(block)
        elif n != 0:
            self._end()
        return block

    def _tap(self, block: bytes) -> None:
        self._sha.update(block)
        self.size += len(block)
        self.last = block[-1:]
        codes = np.frombuffer(block, dtype=np.uint8)
        self._lf += int(np.count_nonzero(codes == 10))
        self._cr += int(np.count_nonzero(codes == 13))
        self.quotes += int(np.count_nonzero(codes == 34))
        if not self.nul and block.find(b"\x00") >= 0:
            self.nul = True
        if self.utf8:
            self._check(block)

    def _check(self, block: bytes) -> None:
        """Validate ``block`` as UTF-8, a character cut by a block's end completed by the next block."""
        view = memoryview(block)
        if self._pending:
            more = 0
            while more < min(3, len(block)) and _is_continuation(block[more]):
                more += 1
            pending = self._pending + block[:more]
            if more == len(block) and len(pending) < 4:  # the character may go on in the next block
                self._pending = pending
                return
            self.utf8 = utf8_valid(pending)
            self._pending, view = b"", view[more:]
        cut = whole_characters(view)
        self.utf8 = self.utf8 and utf8_valid(view[:cut])
        self._pending = bytes(view[cut:])

    def _end(self) -> None:
        if self._pending:
            self.utf8 = self.utf8 and utf8_valid(self._pending)
            self._pending = b""
        self.ended = True

    def breaks(self, head: bytes) -> int:
        """Line feeds in the file after its start ``head``, or carriage returns when there is no line feed there (as
        :func:`~ppdp_desktop.core.data.in_pieces.count_bytes` would count them in the rest of the file)."""
        return (self._lf - head.count(b"\n")) or (self._cr - head.count(b"\r"))

    def digest(self) -> FileDigest:
        """The SHA-256 and size of the bytes read."""
        return FileDigest(self.path.name, self.size, self._sha.hexdigest())
