"""The SHA-256 of a file read on its own (a release's checksums, an input's provenance): one buffer reused from block
to block (issue 34's memory), the same digest and size as the bytes hashed whole, and stopped when asked."""
from __future__ import annotations

import hashlib
import threading
from pathlib import Path

import pytest

from ppdp_desktop.core.data import digest


@pytest.mark.parametrize("size", [0, 1, digest.BLOCK_BYTES - 1, digest.BLOCK_BYTES, 3 * digest.BLOCK_BYTES + 17])
def test_the_digest_and_size_are_those_of_the_whole_bytes(tmp_path: Path, size: int) -> None:
    data = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
    path = tmp_path / "f.bin"
    path.write_bytes(data)
    assert digest.sha256_of(path) == (hashlib.sha256(data).hexdigest(), size)
    found = digest.digest_file(path)
    assert found is not None and (found.sha256, found.size, found.name) == (hashlib.sha256(data).hexdigest(), size,
                                                                            "f.bin")


def test_a_stop_asked_for_ends_the_read(tmp_path: Path) -> None:
    path = tmp_path / "f.bin"
    path.write_bytes(b"a" * (2 * digest.BLOCK_BYTES))
    stop = threading.Event()
    stop.set()
    assert digest.sha256_of(path, stop) is None
