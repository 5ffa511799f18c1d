"""Sealed key file: round trip, fail-closed opening (every flipped byte, every truncation, fuzzing), in format 2
(streamed segments; more in test_keyfile_stream.py), and format-1 keys written before it still open."""
from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ppdp_desktop.core.errors import KeyFileError, ParameterError, PPDPError
from ppdp_desktop.core.release import keyfile
from ppdp_desktop.core.release.keyfile import KdfParams, KeyHeader, open_key, read_header, seal

DATA = Path(__file__).parent / "data"
MANIFEST = "ab12" * 16
OTHER = "cd34" * 16
PASS = "correct horse battery"
CHEAP = {"n": 2**10, "r": 8, "p": 1}

PAYLOAD = {
    "aliases": {"diag": {"A1": "Tuberculose pulmonaire", "A2": "Hépatite B — chronique"}},
    "graded_bounds": {"age": [[0, 17.5], [17.5, 64], [64, None]]},
    "pseudonyms": {"pseudonym": ["9f86d081884c7d65", "2c26b46b68ffc68f"],
                   "patient_id": ["P0001234", "P0005678"], "name": ["Zoë Ångström", "李小龙"]},
    "seed": "123456789012345678901234567890",
    "method": {"name": "finegrain", "theta": 3.0, "nested": [[1, 2, [3, {"x": True}]], []]},
}
SECRETS = ["Tuberculose", "Hépatite", "9f86d081884c7d65", "P0001234", "Zoë", "李小龙", "123456789012345678901234567890"]


def cheap() -> KdfParams:
    return KdfParams(**CHEAP)


@pytest.fixture
def sealed(tmp_path: Path) -> Path:
    return seal(PAYLOAD, PASS, MANIFEST, tmp_path / "release.ppdpkey", kdf=cheap())


def split(data: bytes) -> tuple[dict, bytes]:
    """The header dict and the ciphertext of a key file's bytes."""
    length = struct.unpack(">I", data[8:12])[0]
    return json.loads(data[12 : 12 + length]), data[12 + length :]


def build(header: dict, body: bytes) -> bytes:
    raw = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
    return keyfile.MAGIC + struct.pack(">I", len(raw)) + raw + body


def fails(path: Path, *, passphrase: str = PASS, manifest: str = MANIFEST) -> str:
    """Open must raise KeyFileError (and nothing else); return its message."""
    with pytest.raises(KeyFileError) as info:
        open_key(path, passphrase, manifest)
    message = str(info.value)
    assert "\n" not in message and message
    return message


# --- round trip ------------------------------------------------------------------------------------


def test_round_trip_and_header(sealed: Path):
    assert open_key(sealed, PASS, MANIFEST) == PAYLOAD
    assert open_key(str(sealed), PASS, MANIFEST.upper()) == PAYLOAD
    header = read_header(sealed)
    assert isinstance(header, KeyHeader)
    assert (header.version, header.cipher, header.manifest_sha256) == (2, "AES-256-GCM-STREAM", MANIFEST)
    assert (header.kdf.n, header.kdf.r, header.kdf.p, len(header.kdf.salt), len(header.nonce)) == (2**10, 8, 1, 16, 7)
    assert header.segment_bytes == keyfile.SEGMENT_BYTES and header.ciphertext_bytes is None
    assert header.created.utcoffset().total_seconds() == 0
    data = sealed.read_bytes()
    assert data[:8] == b"PPDPKEY\x00"
    doc, body = split(data)
    assert list(doc) == sorted(doc) and doc["version"] == 2 and doc["kdf"]["name"] == "scrypt"
    assert "ciphertext_bytes" not in doc and doc["segment_bytes"] == keyfile.SEGMENT_BYTES
    assert len(body) < keyfile.SEGMENT_BYTES  # one segment: the plaintext and a 16-byte tag


def test_nothing_in_clear_but_the_header(sealed: Path):
    data = sealed.read_bytes()
    for secret in SECRETS:
        assert secret.encode("utf-8") not in data
        assert json.dumps(secret).encode() not in data
    assert b"pseudonym" not in data and b"aliases" not in data


def test_two_seals_differ(tmp_path: Path):
    a = seal(PAYLOAD, PASS, MANIFEST, tmp_path / "a", kdf=cheap()).read_bytes()
    b = seal(PAYLOAD, PASS, MANIFEST, tmp_path / "b", kdf=cheap()).read_bytes()
    ha, hb = read_header(tmp_path / "a"), read_header(tmp_path / "b")
    assert ha.kdf.salt != hb.kdf.salt and ha.nonce != hb.nonce
    assert split(a)[1] != split(b)[1]
    fixed = cheap()  # the same KdfParams (same salt) reused: the nonce still differs
    seal(PAYLOAD, PASS, MANIFEST, tmp_path / "c", kdf=fixed)
    seal(PAYLOAD, PASS, MANIFEST, tmp_path / "d", kdf=fixed)
    assert read_header(tmp_path / "c").nonce != read_header(tmp_path / "d").nonce


def test_default_kdf_round_trip(tmp_path: Path):
    path = seal({"seed": "42"}, PASS, MANIFEST, tmp_path / "k")
    header = read_header(path)
    assert (header.kdf.n, header.kdf.r, header.kdf.p, len(header.kdf.salt)) == (2**16, 8, 1, 16)
    assert open_key(path, PASS, MANIFEST) == {"seed": "42"}
    assert "Wrong passphrase" in fails(path, passphrase=PASS + "!")


def test_passphrase_is_unicode_normalized(tmp_path: Path):
    path = seal(PAYLOAD, "caf\u00e9-pass-phrase", MANIFEST, tmp_path / "k", kdf=cheap())
    assert open_key(path, "cafe\u0301-pass-phrase", MANIFEST) == PAYLOAD


def test_empty_and_large_payloads(tmp_path: Path):
    assert open_key(seal({}, PASS, MANIFEST, tmp_path / "e", kdf=cheap()), PASS, MANIFEST) == {}
    big = {"ids": [f"{i:016x}" for i in range(50_000)]}
    assert open_key(seal(big, PASS, MANIFEST, tmp_path / "b", kdf=cheap()), PASS, MANIFEST) == big


# --- opening fails closed --------------------------------------------------------------------------


def test_wrong_passphrase(sealed: Path):
    message = fails(sealed, passphrase="correct horse battery!")
    assert message == f"Wrong passphrase, or {sealed} has been altered"
    fails(sealed, passphrase="")


def test_every_byte_flipped(sealed: Path, tmp_path: Path):
    data = sealed.read_bytes()
    assert len(data) < 1000
    bad = tmp_path / "flipped"
    for i in range(len(data)):
        for mask in (0x01, 0xFF):
            bad.write_bytes(data[:i] + bytes([data[i] ^ mask]) + data[i + 1 :])
            fails(bad)


def test_every_truncation(sealed: Path, tmp_path: Path):
    data = sealed.read_bytes()
    bad = tmp_path / "short"
    body_start = len(data) - len(split(data)[1])
    for n in range(len(data)):
        bad.write_bytes(data[:n])
        if n < body_start + keyfile.TAG_BYTES:  # not even one segment's tag: seen without the passphrase
            assert fails(bad) == f"{bad} is truncated or damaged"
        else:  # a shorter single segment: it does not authenticate
            assert fails(bad) == f"Wrong passphrase, or {bad} has been altered"
    bad.write_bytes(data + b"\x00")
    assert fails(bad) == f"Wrong passphrase, or {bad} has been altered"


def test_read_header_rejects_truncation(sealed: Path, tmp_path: Path):
    data = sealed.read_bytes()
    bad = tmp_path / "short"
    for n in (0, 5, 11, 40, len(data) - len(split(data)[1]) + keyfile.TAG_BYTES - 1):
        bad.write_bytes(data[:n])
        with pytest.raises(KeyFileError, match="truncated or damaged"):
            read_header(bad)


def test_not_a_key_file(tmp_path: Path):
    path = tmp_path / "notes.txt"
    path.write_text("hello, this is a CSV file\n1,2,3\n")
    assert fails(path) == f"{path} is not a PPDP key file"
    with pytest.raises(KeyFileError, match="not a PPDP key file"):
        read_header(path)
    assert "Cannot read" in fails(tmp_path / "missing.ppdpkey")
    assert "Cannot read" in fails(tmp_path)


def test_another_release(sealed: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(keyfile, "_derive", _no_derivation)
    message = fails(sealed, manifest=OTHER)
    assert message == f"{sealed} belongs to another release (its manifest is {MANIFEST[:12]}…, this release's is {OTHER[:12]}…)"


def test_rebinding_to_another_release_is_detected(sealed: Path, tmp_path: Path):
    header, body = split(sealed.read_bytes())
    header["manifest_sha256"] = OTHER
    forged = tmp_path / "forged"
    forged.write_bytes(build(header, body))
    assert read_header(forged).manifest_sha256 == OTHER
    assert "has been altered" in fails(forged, manifest=OTHER)


def test_bad_manifest_argument(sealed: Path, tmp_path: Path):
    for value in ("abc", "g" * 64, MANIFEST + "0", None, 123):
        with pytest.raises(KeyFileError, match="manifest hash"):
            open_key(sealed, PASS, value)  # type: ignore[arg-type]
        with pytest.raises(KeyFileError, match="manifest hash"):
            seal(PAYLOAD, PASS, value, tmp_path / "x", kdf=cheap())  # type: ignore[arg-type]


def test_newer_version(sealed: Path, tmp_path: Path):
    header, body = split(sealed.read_bytes())
    header["version"] = 3
    newer = tmp_path / "newer"
    newer.write_bytes(build(header, body))
    expected = f"{newer} was written by a newer version (format 3); this app reads formats 1 and 2"
    assert fails(newer) == expected
    with pytest.raises(KeyFileError) as info:
        read_header(newer)
    assert str(info.value) == expected
    for version in (0, 1, -1, "2", 2.0, True, None, 10**20):
        header["version"] = version
        newer.write_bytes(build(header, body))
        assert "damaged" in fails(newer)


def _no_derivation(*args: object) -> bytes:
    raise AssertionError("the key must not be derived")


@pytest.mark.parametrize(
    "change",
    [
        {"n": 2**30}, {"n": 2**40}, {"n": 10**30}, {"n": 2**22, "r": 32}, {"n": 2**20, "r": 16}, {"n": 1000},
        {"n": 2**9}, {"n": -1024}, {"n": 1024.0}, {"n": "1024"}, {"r": 0}, {"r": 33}, {"p": 0}, {"p": 17},
        {"n": 2**20, "r": 8, "p": 16}, {"salt": "AAAA"}, {"salt": "A" * 200}, {"salt": "not base64!"},
        {"name": "argon2"}, {"extra": 1},
    ],
)
def test_tampered_kdf_rejected_before_derivation(sealed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change):
    header, body = split(sealed.read_bytes())
    header["kdf"].update(change)
    forged = tmp_path / "forged"
    forged.write_bytes(build(header, body))
    monkeypatch.setattr(keyfile, "_derive", _no_derivation)  # refused before the KDF runs (its time: bench_limits)
    assert "damaged" in fails(forged)


def test_tampered_kdf_within_bounds_is_detected(sealed: Path, tmp_path: Path):
    header, body = split(sealed.read_bytes())
    header["kdf"]["r"] = 9
    forged = tmp_path / "forged"
    forged.write_bytes(build(header, body))
    assert "has been altered" in fails(forged)


@pytest.mark.parametrize(
    "change",
    [
        {"cipher": "AES-128-GCM"}, {"nonce": "AAAA"}, {"nonce": 5}, {"manifest_sha256": MANIFEST.upper()},
        {"manifest_sha256": 7}, {"created": "yesterday"}, {"created": "2026-01-01T00:00:00"}, {"created": None},
        {"segment_bytes": 3}, {"segment_bytes": -1}, {"segment_bytes": 2**30}, {"segment_bytes": "4096"},
        {"segment_bytes": None}, {"segment_bytes": 4096.0}, {"ciphertext_bytes": 40}, {"nonce": "AAAAAAAAAAAAAAAA"},
        {"cipher": "AES-256-GCM"}, {"kdf": None}, {"kdf": [1, 2]}, {"extra": "x"},
    ],
)
def test_malformed_header_fields(sealed: Path, tmp_path: Path, change):
    header, body = split(sealed.read_bytes())
    header.update(change)
    forged = tmp_path / "forged"
    forged.write_bytes(build(header, body))
    assert fails(forged, manifest=MANIFEST)
    with pytest.raises(KeyFileError):
        read_header(forged)


def test_missing_field_and_non_canonical_header(sealed: Path, tmp_path: Path):
    data = sealed.read_bytes()
    header, body = split(data)
    forged = tmp_path / "forged"
    for key in list(header):
        forged.write_bytes(build({k: v for k, v in header.items() if k != key}, body))
        fails(forged)
    raw = json.dumps(header, sort_keys=True, indent=1).encode()  # same content, other spacing
    forged.write_bytes(keyfile.MAGIC + struct.pack(">I", len(raw)) + raw + body)
    assert "damaged" in fails(forged)
    for length in (0, 1, keyfile.MAX_HEADER_BYTES + 1, 2**32 - 1):
        forged.write_bytes(data[:8] + struct.pack(">I", length) + data[12:])
        fails(forged)


def test_unreadable_payload_after_authentication(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = seal(PAYLOAD, PASS, MANIFEST, tmp_path / "k", kdf=cheap())
    monkeypatch.setattr(keyfile.zlib, "decompress", lambda data: b"[1, 2]")
    assert "content is unreadable" in fails(path)
    monkeypatch.setattr(keyfile.zlib, "decompress", lambda data: b"\xff\xfe")
    assert "content is unreadable" in fails(path)


# --- sealing -----------------------------------------------------------------------------------------


def test_short_passphrase_refused(tmp_path: Path):
    with pytest.raises(KeyFileError, match="at least 8 characters"):
        seal(PAYLOAD, "short", MANIFEST, tmp_path / "k", kdf=cheap())
    assert list(tmp_path.iterdir()) == []
    seal(PAYLOAD, "12345678", MANIFEST, tmp_path / "k", kdf=cheap())


def test_existing_file_not_overwritten(sealed: Path):
    before = sealed.read_bytes()
    with pytest.raises(KeyFileError, match="already exists"):
        seal({"other": 1}, PASS, MANIFEST, sealed, kdf=cheap())
    assert sealed.read_bytes() == before
    seal({"other": 1}, PASS, MANIFEST, sealed, kdf=cheap(), overwrite=True)
    assert open_key(sealed, PASS, MANIFEST) == {"other": 1}
    assert sorted(p.name for p in sealed.parent.iterdir()) == [sealed.name]


def test_missing_folder(tmp_path: Path):
    folder = tmp_path / "no" / "such"
    with pytest.raises(KeyFileError) as info:
        seal(PAYLOAD, PASS, MANIFEST, folder / "k.ppdpkey", kdf=cheap())
    assert str(folder) in str(info.value) and "does not exist" in str(info.value)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("failing", ["replace", "fsync"])
def test_failed_write_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str):
    def boom(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(keyfile.os, failing, boom)
    with pytest.raises(KeyFileError, match="No space left on device"):
        seal(PAYLOAD, PASS, MANIFEST, tmp_path / "k", kdf=cheap())
    assert list(tmp_path.iterdir()) == []


def test_file_created_during_seal_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    target = tmp_path / "k"
    real = keyfile._derive

    def racing(*args):
        target.write_text("someone else's")
        return real(*args)

    monkeypatch.setattr(keyfile, "_derive", racing)
    with pytest.raises(KeyFileError, match="already exists"):
        seal(PAYLOAD, PASS, MANIFEST, target, kdf=cheap())
    assert target.read_text() == "someone else's"
    assert [p.name for p in tmp_path.iterdir()] == ["k"]


def test_payload_must_be_json(tmp_path: Path):
    for bad in ({"x": {1, 2}}, {"x": float("nan")}, {"x": object()}):
        with pytest.raises(KeyFileError, match="cannot be stored as JSON"):
            seal(bad, PASS, MANIFEST, tmp_path / "k", kdf=cheap())
    with pytest.raises(TypeError):
        seal([1, 2], PASS, MANIFEST, tmp_path / "k", kdf=cheap())  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []


def test_kdf_params_bounds():
    assert len(KdfParams().salt) == 16 and KdfParams().salt != KdfParams().salt
    for bad in ({"n": 2**9}, {"n": 3000}, {"n": 2**23}, {"r": 0}, {"p": 17}, {"salt": b"short"}, {"n": 2**22, "r": 8}):
        with pytest.raises(ParameterError):
            KdfParams(**bad)
    assert "salt" not in repr(KdfParams())


# --- fuzzing -----------------------------------------------------------------------------------------

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def _only_key_file_errors(path: Path, data: bytes, header_may_parse: bool = False) -> None:
    """Opening fails with KeyFileError; reading the header either fails so too or (if allowed) works."""
    path.write_bytes(data)
    with pytest.raises(KeyFileError):
        open_key(path, PASS, MANIFEST)
    try:
        header = read_header(path)
    except KeyFileError:
        return
    assert header_may_parse and isinstance(header, KeyHeader)


@FUZZ
@given(data=st.binary(max_size=400))
def test_fuzz_random_bytes(tmp_path: Path, data: bytes):
    _only_key_file_errors(tmp_path / "fuzz", data)
    _only_key_file_errors(tmp_path / "fuzz", keyfile.MAGIC + data)


@FUZZ
@given(header=json_values, body=st.binary(max_size=64))
def test_fuzz_random_json_headers(tmp_path: Path, header: object, body: bytes):
    raw = json.dumps(header).encode()
    _only_key_file_errors(tmp_path / "fuzz", keyfile.MAGIC + struct.pack(">I", len(raw)) + raw + body)


@FUZZ
@given(
    fields=st.fixed_dictionaries(
        {},
        optional={
            "version": st.sampled_from([1, 2, 3, 0, "1", None, 1.5]),
            "cipher": st.sampled_from(["AES-256-GCM", "AES-256-GCM-STREAM", "none", 1]),
            "nonce": st.sampled_from(["AAAAAAAAAAAAAAAA", "AAAAAAAAAA==", "AAAA", "@@", 12]),
            "manifest_sha256": st.sampled_from([MANIFEST, OTHER, "x", None]),
            "created": st.sampled_from(["2026-01-01T00:00:00+00:00", "2026-01-01", "no", 0]),
            "ciphertext_bytes": st.integers(-5, 100) | st.sampled_from([2**40, "16"]),
            "segment_bytes": st.integers(-5, 100) | st.sampled_from([2**40, "16", 4 << 20]),
            "kdf": st.fixed_dictionaries(
                {},
                optional={
                    "name": st.sampled_from(["scrypt", "pbkdf2"]),
                    "n": st.sampled_from([2**10, 2**11, 2**30, 1000, 0, -2, 1024.0, None]),
                    "r": st.sampled_from([1, 8, 0, 64, "8"]),
                    "p": st.sampled_from([1, 2, 0, 100]),
                    "salt": st.sampled_from(["A" * 24, "B" * 24, "AA==", "A" * 100, "***", 16]),
                },
            ) | json_values,
        },
    ),
    body=st.binary(max_size=100),
)
def test_fuzz_structured_headers(tmp_path: Path, fields: dict, body: bytes):
    _only_key_file_errors(tmp_path / "fuzz", build(fields, body), header_may_parse=True)


def test_errors_are_ppdp_errors():
    assert issubclass(KeyFileError, PPDPError) and issubclass(ParameterError, PPDPError)


# --- format 1 (one AES-GCM call over the whole payload), written before format 2 -------------------------------


FORMAT1 = DATA / "format1-key.bin"  # sealed by the format-1 seal (passphrase PASS, manifest MANIFEST, n = 2**10)


def test_format1_key_still_opens():
    expected = json.loads((DATA / "format1.json").read_text(encoding="utf-8"))
    assert open_key(FORMAT1, PASS, MANIFEST) == expected
    header = read_header(FORMAT1)
    assert (header.version, header.cipher, len(header.nonce), header.segment_bytes) == (1, "AES-256-GCM", 12, None)
    assert header.ciphertext_bytes == len(split(FORMAT1.read_bytes())[1])
    assert fails(FORMAT1, passphrase=PASS + "!") == f"Wrong passphrase, or {FORMAT1} has been altered"
    assert "belongs to another release" in fails(FORMAT1, manifest=OTHER)


def test_format1_every_byte_flipped_and_every_truncation(tmp_path: Path):
    data = FORMAT1.read_bytes()
    bad = tmp_path / "bad"
    for i in range(len(data)):
        bad.write_bytes(data[:i] + bytes([data[i] ^ 0x01]) + data[i + 1:])
        fails(bad)
    for n in range(len(data)):
        bad.write_bytes(data[:n])
        assert fails(bad) == f"{bad} is truncated or damaged"
    bad.write_bytes(data + b"\x00")
    assert "unexpected bytes at the end" in fails(bad)


def test_format1_header_cannot_pass_for_format2(tmp_path: Path):
    header, body = split(FORMAT1.read_bytes())
    forged = tmp_path / "forged"
    for change in ({"version": 2}, {"cipher": "AES-256-GCM-STREAM"}, {"segment_bytes": 4096}):
        forged.write_bytes(build({**header, **change}, body))
        assert "damaged" in fails(forged)
    header2 = {**{k: v for k, v in header.items() if k != "ciphertext_bytes"}, "version": 2, "segment_bytes": 4096}
    forged.write_bytes(build(header2, body))
    assert "damaged" in fails(forged)  # a 12-byte nonce is not a format-2 nonce prefix
