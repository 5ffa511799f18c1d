"""Key file format 2: the body is sealed segment by segment (STREAM over AES-256-GCM) and may carry a record
table (Arrow IPC, zstd). Round trips over several segments; every kind of tampering refused in one line."""
from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from ppdp_desktop.core.errors import KeyFileError, ParameterError
from ppdp_desktop.core.release import keyfile
from ppdp_desktop.core.release.keyfile import KdfParams, open_key, read_header, seal
from ppdp_desktop.core.release.keystream import TAG_BYTES

MANIFEST = "ab12" * 16
PASS = "correct horse battery"
PAYLOAD = {"seed": "42", "aliases": {"dx": {"alias1": {"Infection": ["Flu"]}, "alias2": {"KP4": "Flu"}}}}
SEGMENT = 64  # plaintext bytes per segment: every test key has many segments


def cheap() -> KdfParams:
    return KdfParams(n=2**10, r=8, p=1)


def table(n: int, start: int = 0) -> pa.Table:
    index = np.arange(start, start + n)
    return pa.table({
        "patient_id": pa.array([f"P{i:07d}" for i in index]),
        "age": pa.array(index % 97, pa.int64()),
        "__original__dx": pa.array([None if i % 3 else f"dx{i % 11}" for i in index], pa.string()),
    })


def parts(path: Path, segment: int = SEGMENT) -> tuple[bytes, list[bytes]]:
    """The bytes before the segments and the sealed segments of a key file."""
    data = path.read_bytes()
    length = struct.unpack(">I", data[8:12])[0]
    head, body = data[:12 + length], data[12 + length:]
    full = segment + TAG_BYTES
    return head, [body[i:i + full] for i in range(0, len(body), full)]


def fails(path: Path) -> str:
    with pytest.raises(KeyFileError) as info:
        open_key(path, PASS, MANIFEST)
    message = str(info.value)
    assert message and "\n" not in message
    return message


@pytest.fixture
def sealed(tmp_path: Path) -> Path:
    return seal(PAYLOAD, PASS, MANIFEST, tmp_path / "k.ppdpkey", table(40), kdf=cheap(), segment_bytes=SEGMENT)


# --- round trips -----------------------------------------------------------------------------------------


def test_round_trip_without_records_over_several_segments(tmp_path: Path):
    payload = {"ids": [f"{i:08x}" for i in range(3000)], "x": "é" * 500}
    path = seal(payload, PASS, MANIFEST, tmp_path / "k", kdf=cheap(), segment_bytes=SEGMENT)
    assert len(parts(path)[1]) > 20
    assert open_key(path, PASS, MANIFEST) == payload
    assert keyfile.RECORDS not in open_key(path, PASS, MANIFEST)


def test_round_trip_with_records(sealed: Path):
    opened = open_key(sealed, PASS, MANIFEST)
    records = opened.pop(keyfile.RECORDS)
    assert opened == PAYLOAD
    assert isinstance(records, pa.Table) and records.equals(table(40))
    assert len(parts(sealed)[1]) > 5 and read_header(sealed).segment_bytes == SEGMENT


@pytest.mark.parametrize("segment", [16, 17, 64, 1000, keyfile.SEGMENT_BYTES])
def test_every_segment_size_round_trips(tmp_path: Path, segment: int):
    path = seal(PAYLOAD, PASS, MANIFEST, tmp_path / "k", table(300), kdf=cheap(), segment_bytes=segment)
    opened = open_key(path, PASS, MANIFEST)
    assert opened.pop(keyfile.RECORDS).equals(table(300)) and opened == PAYLOAD


def whole_segments(folder: Path, count: int) -> Path:
    """A key whose plaintext fills exactly ``count`` segments (a payload of incompressible text, grown to fit)."""
    text = "".join(np.random.default_rng(0).choice(list("abcdefghijklmnopqrstuvwxyz0123456789"), 4 * count * SEGMENT))
    for size in range(4 * count * SEGMENT):
        path = seal({"x": text[:size]}, PASS, MANIFEST, folder / f"whole{count}", kdf=cheap(), segment_bytes=SEGMENT,
                    overwrite=True)
        if [len(s) for s in parts(path)[1]] == [SEGMENT + TAG_BYTES] * count:
            return path
    raise AssertionError("no payload fills the segments exactly")


def test_plaintext_of_exactly_whole_segments(tmp_path: Path):
    """A plaintext that fills its last segment exactly: no empty segment is added, and it still opens."""
    path = whole_segments(tmp_path, 3)
    assert set(open_key(path, PASS, MANIFEST)) == {"x"}


def test_records_from_batches_a_reader_or_a_schema_pair(tmp_path: Path):
    whole = table(1000)
    batches = whole.to_batches(max_chunksize=37)
    for i, records in enumerate([
        iter(batches),  # a one-shot iterator
        (b for b in batches),
        pa.RecordBatchReader.from_batches(whole.schema, batches),
        (whole.schema, iter(batches)),
        batches[0],
    ]):
        path = seal({}, PASS, MANIFEST, tmp_path / f"k{i}", records, kdf=cheap(), segment_bytes=4096)
        expected = whole if i < 4 else pa.Table.from_batches([batches[0]])
        assert open_key(path, PASS, MANIFEST)[keyfile.RECORDS].equals(expected)


def test_later_batches_are_cast_to_the_first_batches_types(tmp_path: Path):
    first = pa.record_batch({"id": pa.array(["a", "b"]), "n": pa.array([1, 2], pa.int64())})
    second = pa.record_batch({"id": pa.array(["c"], pa.large_string()), "n": pa.array([3], pa.int32())})
    path = seal({}, PASS, MANIFEST, tmp_path / "k", iter([first, second]), kdf=cheap())
    got = open_key(path, PASS, MANIFEST)[keyfile.RECORDS]
    assert got.schema == first.schema and got.column("n").to_pylist() == [1, 2, 3]
    clash = pa.record_batch({"id": pa.array(["d"]), "n": pa.array(["not a number"])})
    with pytest.raises(KeyFileError, match="Record batch 2 does not fit"):
        seal({}, PASS, MANIFEST, tmp_path / "k2", iter([first, clash]), kdf=cheap())
    renamed = pa.record_batch({"other": pa.array(["d"]), "n": pa.array([4])})
    with pytest.raises(KeyFileError, match="Record batch 2 has the columns"):
        seal({}, PASS, MANIFEST, tmp_path / "k3", iter([first, renamed]), kdf=cheap())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k"]  # nothing left of the refused ones


def test_no_batches_means_no_record_table_and_bad_records_are_refused(tmp_path: Path):
    path = seal(PAYLOAD, PASS, MANIFEST, tmp_path / "k", iter([]), kdf=cheap())
    assert open_key(path, PASS, MANIFEST) == PAYLOAD
    empty = pa.table({"id": pa.array([], pa.string())})
    path = seal(PAYLOAD, PASS, MANIFEST, tmp_path / "e", empty, kdf=cheap())
    assert open_key(path, PASS, MANIFEST)[keyfile.RECORDS].equals(empty)
    for bad in ("abc", [1, 2], {"a": [1]}, 5):
        with pytest.raises(TypeError, match="RecordBatch"):
            seal({}, PASS, MANIFEST, tmp_path / "x", bad, kdf=cheap())  # type: ignore[arg-type]
    with pytest.raises(KeyFileError, match="'records'"):
        seal({"records": 1}, PASS, MANIFEST, tmp_path / "x", kdf=cheap())
    for segment in (0, 15, 2**30, 64.0):
        with pytest.raises(ParameterError, match="segment_bytes"):
            seal({}, PASS, MANIFEST, tmp_path / "x", kdf=cheap(), segment_bytes=segment)  # type: ignore[arg-type]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["e", "k"]


def test_a_failing_batch_source_leaves_nothing(tmp_path: Path):
    def batches():
        yield table(10).to_batches()[0]
        raise RuntimeError("the source broke")

    with pytest.raises(RuntimeError, match="the source broke"):
        seal({}, PASS, MANIFEST, tmp_path / "k", batches(), kdf=cheap())
    assert list(tmp_path.iterdir()) == []


def test_nothing_in_clear(sealed: Path):
    data = sealed.read_bytes()
    for secret in (b"P0000001", b"dx1", b"patient_id", b"__original__", b"KP4", b"Infection", b"ARROW"):
        assert secret not in data


def test_large_record_table_from_batches(tmp_path: Path):
    """2M rows handed over batch by batch as a generator (never as one table) are sealed and opened."""
    n, step = 2_000_000, 150_000

    def batches():
        for start in range(0, n, step):
            stop = min(start + step, n)
            index = np.arange(start, stop)
            yield pa.record_batch({
                "patient_id": pa.array(np.char.add("P", index.astype("U7")).astype(object)),
                "n": pa.array(index, pa.int64()),
            })

    path = seal({"x": 1}, PASS, MANIFEST, tmp_path / "big", batches(), kdf=cheap())
    assert len(parts(path, keyfile.SEGMENT_BYTES)[1]) >= 2
    records = open_key(path, PASS, MANIFEST)[keyfile.RECORDS]
    assert records.num_rows == n
    assert records.column("n").to_numpy().tolist() == list(range(n))
    assert records.column("patient_id")[1_234_567].as_py() == "P1234567"


# --- tampering -------------------------------------------------------------------------------------------


def _write(path: Path, head: bytes, segments: list[bytes]) -> Path:
    path.write_bytes(head + b"".join(segments))
    return path


def test_a_flipped_byte_in_any_segment(sealed: Path, tmp_path: Path):
    head, segments = parts(sealed)
    bad = tmp_path / "bad"
    for i in range(len(segments)):
        for position in (0, len(segments[i]) // 2, len(segments[i]) - 1):  # ciphertext and tag
            changed = segments[i][:position] + bytes([segments[i][position] ^ 0x40]) + segments[i][position + 1:]
            message = fails(_write(bad, head, segments[:i] + [changed] + segments[i + 1:]))
            if i == 0:
                assert message == f"Wrong passphrase, or {bad} has been altered"
            else:
                assert message == f"{bad} has been altered (part {i + 1} of {len(segments)} does not authenticate)"


def test_every_byte_flipped_small_key(tmp_path: Path):
    path = seal({"a": 1}, PASS, MANIFEST, tmp_path / "k", table(3), kdf=cheap(), segment_bytes=128)
    data = path.read_bytes()
    bad = tmp_path / "bad"
    for i in range(len(data)):
        bad.write_bytes(data[:i] + bytes([data[i] ^ 0x01]) + data[i + 1:])
        fails(bad)


def test_dropped_last_segment_and_truncation(sealed: Path, tmp_path: Path):
    head, segments = parts(sealed)
    bad = tmp_path / "bad"
    for keep in range(1, len(segments)):  # cut at every segment boundary: the new last one was not sealed as last
        assert fails(_write(bad, head, segments[:keep])) == f"{bad} is truncated or damaged (its end is missing)"
    data = sealed.read_bytes()
    for cut in range(len(head), len(data)):
        bad.write_bytes(data[:cut])
        message = fails(bad)
        assert "truncated" in message or "altered" in message


def test_swapped_dropped_and_repeated_segments(sealed: Path, tmp_path: Path):
    head, segments = parts(sealed)
    bad = tmp_path / "bad"
    swapped = [segments[1], segments[0], *segments[2:]]
    assert fails(_write(bad, head, swapped)) == f"Wrong passphrase, or {bad} has been altered"
    swapped = [*segments[:2], segments[3], segments[2], *segments[4:]]
    assert "part 3 of" in fails(_write(bad, head, swapped))
    assert "part 2 of" in fails(_write(bad, head, [segments[0], *segments[2:]]))  # a middle one dropped
    assert "part 3 of" in fails(_write(bad, head, [*segments[:2], segments[1], *segments[2:]]))  # repeated
    assert fails(_write(bad, head, segments[:-2] + segments[-1:])).startswith(f"{bad} has been altered")


def test_appended_bytes(tmp_path: Path):
    """Bytes after a full last segment start a new segment: the true last one is then not at the end."""
    path = whole_segments(tmp_path, 2)
    head, segments = parts(path)
    bad = tmp_path / "bad"
    message = f"{bad} is damaged (unexpected bytes at the end)"
    assert fails(_write(bad, head, segments + [b"\x00" * 40])) == message
    assert fails(_write(bad, head, segments + [segments[0]])) == message
    assert fails(_write(bad, head, segments + [b"\x00" * 15])) == f"{bad} is truncated or damaged"  # under a tag
    cut = fails(_write(bad, head, segments[:-1] + [segments[-1][:-1]]))
    assert cut == f"{bad} has been altered (part 2 of 2 does not authenticate)"


def test_changed_header(sealed: Path, tmp_path: Path):
    head, segments = parts(sealed)
    doc = json.loads(head[12:])
    bad = tmp_path / "bad"
    for change in ({"created": "2020-01-01T00:00:00+00:00"}, {"kdf": {**doc["kdf"], "r": 9}},
                   {"segment_bytes": SEGMENT + 1}, {"nonce": "AAAAAAAAAA=="}, {"manifest_sha256": "cd34" * 16}):
        raw = json.dumps({**doc, **change}, sort_keys=True, separators=(",", ":")).encode()
        _write(bad, keyfile.MAGIC + struct.pack(">I", len(raw)) + raw, segments)
        manifest = change.get("manifest_sha256", MANIFEST)
        with pytest.raises(KeyFileError) as info:
            open_key(bad, PASS, manifest)
        assert str(info.value) == f"Wrong passphrase, or {bad} has been altered"


def test_segments_of_another_key_file(sealed: Path, tmp_path: Path):
    """Same passphrase, same salt, other file: its segments do not fit (other nonce prefix, other segment key)."""
    kdf = cheap()
    a = seal(PAYLOAD, PASS, MANIFEST, tmp_path / "a", table(40), kdf=kdf, segment_bytes=SEGMENT)
    b = seal(PAYLOAD, PASS, MANIFEST, tmp_path / "b", table(40), kdf=kdf, segment_bytes=SEGMENT)
    head_a, segments_a = parts(a)
    head_b, segments_b = parts(b)
    bad = tmp_path / "bad"
    assert "altered" in fails(_write(bad, head_a, segments_b))
    assert "part 2 of" in fails(_write(bad, head_a, [segments_a[0], *segments_b[1:]]))


def test_wrong_passphrase(sealed: Path):
    with pytest.raises(KeyFileError, match="^Wrong passphrase, or .* has been altered$"):
        open_key(sealed, PASS + "!", MANIFEST)


def test_unreadable_content_after_authentication(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Content that authenticates but is not what seal writes (only someone with the passphrase can make it)."""
    from ppdp_desktop.core.release import keyrecords

    path = seal(PAYLOAD, PASS, MANIFEST, tmp_path / "k", table(5), kdf=cheap(), segment_bytes=SEGMENT)
    monkeypatch.setattr(keyrecords.pa.ipc, "open_stream", lambda source: (_ for _ in ()).throw(pa.ArrowInvalid("x")))
    assert fails(path) == f"{path} decrypted but its content is unreadable"
