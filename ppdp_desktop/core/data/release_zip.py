"""A zipped release unpacked into a private temporary folder, only once the zip has shown it is one this app wrote.

Everything is checked from the zip's own directory before a byte is unpacked: plain file names (no folder, no
hidden name, none Windows would change), each name once (also after case folding and Unicode normalisation),
no encryption, the files laid out back to back from the first byte to the central directory and the end record
as the last bytes (nothing before, between, hidden or after: a streaming unzipper and one that reads the directory
see the same files), and the sizes it declares: at most :data:`MAX_UNZIPPED_BYTES` in all, no file expanding more
than :data:`MAX_RATIO` times (a zip bomb's files expand about a thousand times; a release's data a few times to a
few dozen), and room for them in the temporary folder. The unpacking then counts what it writes against the same
cap (the declared sizes bind: :mod:`zipfile` stops a file at its declared size).
"""
from __future__ import annotations

import re
import shutil
import struct
import tempfile
import unicodedata
import zipfile
from pathlib import Path

from ppdp_desktop.core.errors import ReleaseError

#: a zipped release is unpacked only up to this size (a zip bomb stops here)
MAX_UNZIPPED_BYTES = 4 * 1024 ** 3
#: no file of a release expands more than this many times its compressed size (deflate's limit is about 1,032)
MAX_RATIO = 300
#: files declared smaller than this are not held to :data:`MAX_RATIO` (a small file of one repeated value can)
RATIO_FLOOR = 1024 ** 2

_PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_DESCRIPTOR = b"PK\x07\x08"
#: a zip's local file header (APPNOTE 4.3.7) as :mod:`zipfile` reads it: 30 bytes; the lengths of the file's
#: name and of its extra field are its fields 10 and 11
_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")
_NAME_LENGTH, _EXTRA_LENGTH = 10, 11
#: the end of central directory record (APPNOTE 4.3.16): 22 bytes and the comment; the ZIP64 end record (4.3.14,
#: 56 bytes without extensible data) and its locator (4.3.15, 20 bytes) come before it when a size needs them
_END = struct.Struct("<4s4H2LH")
_END64_LOCATOR = struct.Struct("<4sLQL")
_END64 = struct.Struct("<4sQ2H2L4Q")


def extract(archive: Path) -> Path:
    """Unpack the zipped release ``archive`` into a private temporary folder (0700) and return it, after the checks
    of the module docstring; a refusal (a :class:`ReleaseError` naming the file and what is wrong) leaves nothing."""
    target = Path(tempfile.mkdtemp(prefix="ppdp-release-"))
    try:
        with zipfile.ZipFile(archive) as zipped:
            infos = zipped.infolist()
            _check_names(archive, infos)
            _check_layout(archive, zipped, infos)
            _check_sizes(archive, infos, target)
            total = 0
            for info in infos:
                with zipped.open(info) as source, (target / info.filename).open("wb") as sink:
                    while block := source.read(1 << 20):
                        total += len(block)
                        if total > MAX_UNZIPPED_BYTES:
                            raise ReleaseError(f"{archive.name} unpacks to more than {_size(MAX_UNZIPPED_BYTES)}; "
                                               "it is not a release this app wrote.")
                        sink.write(block)
    except (zipfile.BadZipFile, NotImplementedError, struct.error) as exc:  # NotImplementedError: a compression
        shutil.rmtree(target, ignore_errors=True)                           # method zipfile cannot read
        raise ReleaseError(f"{archive.name} is not a readable zip file: {exc}.") from exc
    except BaseException:
        shutil.rmtree(target, ignore_errors=True)
        raise
    return target


def _check_names(archive: Path, infos: list[zipfile.ZipInfo]) -> None:
    """Plain names only (what this app writes; no folder, no name Windows would change: a trailing dot, ':'), none
    encrypted, each once even after case folding and Unicode normalisation (two names that one file system keeps
    apart and another merges are two files to one tool and one to the next)."""
    names = [info.filename for info in infos]
    for name in names:
        if not _PLAIN_NAME.fullmatch(name) or name.endswith("."):
            raise ReleaseError(f"{archive.name} holds {name!r}; a release zip holds plain files only.")
    for info in infos:
        if info.flag_bits & 0x1:
            raise ReleaseError(f"{archive.name}: {info.filename} is encrypted; a release zip is not.")
    folded = [unicodedata.normalize("NFC", n).casefold() for n in names]
    duplicate = next((n for n, f in zip(names, folded) if folded.count(f) > 1), None)
    if duplicate is not None:
        raise ReleaseError(f"{archive.name} holds {duplicate!r} twice; a release zip holds each file once.")


def _check_sizes(archive: Path, infos: list[zipfile.ZipInfo], target: Path) -> None:
    """The declared sizes, before anything is written: the total under the cap, no file expanding more than
    :data:`MAX_RATIO` times, and room for all of it where it is unpacked."""
    declared = sum(info.file_size for info in infos)
    if declared > MAX_UNZIPPED_BYTES:
        raise ReleaseError(f"{archive.name} unpacks to more than {_size(MAX_UNZIPPED_BYTES)} (its files declare "
                           f"{_size(declared)}); it is not a release this app wrote; nothing was unpacked.")
    for info in infos:
        if info.file_size > RATIO_FLOOR and info.file_size > MAX_RATIO * max(info.compress_size, 1):
            raise ReleaseError(f"{archive.name}: {info.filename} expands {info.file_size / max(info.compress_size, 1):,.0f} "
                               f"times ({_size(info.compress_size)} to {_size(info.file_size)}), more than the "
                               f"{MAX_RATIO} times any release's file does: a zip bomb, not a release; nothing was "
                               "unpacked.")
    free = shutil.disk_usage(target).free
    if declared > free:
        raise ReleaseError(f"{archive.name} unpacks to {_size(declared)}, but the temporary folder {target.parent} "
                           f"has {_size(free)} free; free some space there or set TMPDIR to a folder with more room.")


def _check_layout(archive: Path, zipped: zipfile.ZipFile, infos: list[zipfile.ZipInfo]) -> None:
    """The files follow one another from the first byte to the central directory, and the central directory's
    end record is the file's last bytes: nothing before, between, hidden or after (two zips glued together, a
    file hidden in a gap, anything appended)."""
    position = 0
    with open(archive, "rb") as raw:
        for info in sorted(infos, key=lambda i: i.header_offset):
            if info.header_offset != position:
                break
            raw.seek(position)
            fields = _LOCAL_HEADER.unpack(raw.read(_LOCAL_HEADER.size))
            position += _LOCAL_HEADER.size + fields[_NAME_LENGTH] + fields[_EXTRA_LENGTH] + info.compress_size
            if info.flag_bits & 0x08:  # a data descriptor follows the data: [signature] crc, sizes
                raw.seek(position)
                position += 4 if raw.read(4) == _DESCRIPTOR else 0
                position += 20 if max(info.compress_size, info.file_size) >= 0xFFFFFFFF else 12
        else:
            if position == zipped.start_dir and _ends_at_its_end_record(raw, zipped.start_dir):
                return
    raise ReleaseError(f"{archive.name} holds bytes before, between or after its files that other tools could read "
                       "as other files; it is not a release this app wrote.")


def _ends_at_its_end_record(raw, start_dir: int) -> bool:
    """Whether the central directory (from ``start_dir``) is followed by its end records only: the ZIP64 end record
    and locator if there are any, then the end record, with no comment, as the file's last bytes."""
    size = raw.seek(0, 2)
    if size < _END.size:
        return False
    raw.seek(size - _END.size)
    signature, _, _, _, _, cd_size, _, comment = _END.unpack(raw.read(_END.size))
    if signature != b"PK\x05\x06" or comment != 0:
        return False
    end_of_directory = size - _END.size
    locator_at = end_of_directory - _END64_LOCATOR.size
    if locator_at >= 0:
        raw.seek(locator_at)
        locator = _END64_LOCATOR.unpack(raw.read(_END64_LOCATOR.size))
        if locator[0] == b"PK\x06\x07":  # ZIP64: its end record must sit just before the locator
            record_at = locator[2]
            if record_at + _END64.size != locator_at:
                return False
            raw.seek(record_at)
            record = _END64.unpack(raw.read(_END64.size))
            if record[0] != b"PK\x06\x06":
                return False
            return start_dir + record[8] == record_at
    return start_dir + cd_size == end_of_directory


def _size(n: int) -> str:
    if n >= 1024 ** 3:
        return f"{n / 1024 ** 3:,.1f} GiB"
    return f"{n / 1024 ** 2:,.1f} MiB" if n >= 1024 ** 2 else f"{n:,} bytes"
