"""The key holds the pseudonym key and a record table (no id lists); lookup goes id -> index -> row.

The job is built by ``anonymize`` and given its pseudonym key here (a seeded job's ids already are
``PseudonymKey.from_seed``'s); the key is sealed with the record table as ``write_release`` will once wired.
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from ppdp_desktop.cli import main
from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.checksums import manifest_sha256
from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.data.resources import DEMO_DATA, DEMO_TAXONOMY, resource_path
from ppdp_desktop.core.errors import KeyFileError, ParameterError
from ppdp_desktop.core.methods.personalized.settings import RecodingSettings
from ppdp_desktop.core.outcome import Anonymization
from ppdp_desktop.core.privacy.keyed import KeyedRandomness
from ppdp_desktop.core.privacy.pseudonyms import PseudonymKey
from ppdp_desktop.core.privacy.record_table import pseudonym_entry, record_batch
from ppdp_desktop.core.release import keyfile
from ppdp_desktop.core.release.decoded import column_name
from ppdp_desktop.core.release.lookup import KeyRecords, KeyRing
from ppdp_desktop.core.release.package import write_release
from ppdp_desktop.core.settings import AnonymizationSettings, ChoiceSettings

PASSPHRASE = "correct horse battery staple"


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    frame = pd.read_csv(resource_path(DEMO_DATA)).head(3000)
    frame["privacy_choice"] = np.random.default_rng(0).choice([1, 2, 3], len(frame))
    return frame


def _settings(seed: int | None) -> AnonymizationSettings:
    return AnonymizationSettings(
        "diagnosis", "personalized", ["patient_id", "name"], [], choices=ChoiceSettings(choice_column="privacy_choice"),
        options=RecodingSettings(taxonomy_path=str(resource_path(DEMO_TAXONOMY)), graded=["income"], categories=4),
        seed=seed)


@pytest.fixture(scope="module")
def job(frame) -> Anonymization:
    result = anonymize(Dataset(frame), _settings(11))
    return dataclasses.replace(result, pseudonym_key=PseudonymKey.from_seed(KeyedRandomness(result.seed)))


def _release(result: Anonymization, folder: Path) -> tuple[Path, Path]:
    out = write_release(result, folder / "release", include_report=False)
    key = keyfile.seal(result.key_payload(), PASSPHRASE, manifest_sha256(out), folder / "release.ppdpkey",
                       result.key_records())
    return out, key


@pytest.fixture(scope="module")
def released(job, tmp_path_factory) -> tuple[Path, Path]:
    return _release(job, tmp_path_factory.mktemp("keyed"))


def test_released_ids_are_the_keys_ids_in_release_order(job):
    ids = job.pseudonym_key.ids(0, len(job.order)).to_numpy(zero_copy_only=False)
    assert list(job.table[job.pseudonym_column]) == list(ids[job.order])
    assert np.array_equal(job.pseudonym_key.index_of(job.table[job.pseudonym_column]), job.order)


def test_payload_holds_the_key_not_the_ids(job, frame):
    payload = job.key_payload()
    block = payload["pseudonyms"]
    assert block == {"column": "pseudonym", "key": job.pseudonym_key.hex(), "n": len(frame),
                     "identifiers": ["patient_id", "name"], "records": ["diagnosis"]}
    text = json.dumps(payload)
    assert job.table["pseudonym"].iloc[0] not in text and frame["patient_id"].iloc[0] not in text
    records = job.key_records()
    assert records.num_rows == len(frame) and records.column_names == ["patient_id", "name", "__original__diagnosis"]
    assert records.column("patient_id").to_pylist() == list(frame["patient_id"])  # record order, not release order
    secrets = job.applied.record_secrets["diagnosis"]
    assert records.column(2).to_pylist() == list(secrets)
    assert dataclasses.replace(job, pseudonym_key=None).key_records() is None
    assert job.key_payload(n_records=10**8)["pseudonyms"]["n"] == 10**8  # a streamed job whose dataset is a sample


def test_lookup_decodes_every_record(released, frame):
    out, key = released
    ring = KeyRing.open(out, key, PASSPHRASE)
    assert "ids" not in ring.payload["pseudonyms"] and isinstance(ring.payload[keyfile.RECORDS], pa.Table)
    decoded = ring.decode_table(ring.release.table).set_index("patient_id")
    original = frame.set_index("patient_id").loc[decoded.index]
    assert (decoded["name"] == original["name"]).all()
    assert (decoded["diagnosis"] == original["diagnosis"]).all()  # exact, shared alias1 included
    row = ring.lookup_pseudonym(ring.release.table["pseudonym"].iloc[7])
    assert row["patient_id"] == decoded.index[7] and row["name"] == decoded["name"].iloc[7]


def test_unknown_pseudonyms_decode_to_nothing(released, job):
    out, key = released
    ring = KeyRing.open(out, key, PASSPHRASE)
    known = ring.release.table["pseudonym"].iloc[3]
    other = PseudonymKey.random().ids(0, 1)[0].as_py()
    results = pd.DataFrame({"pseudonym": [known, "nobody", "", other, None], "note": list("abcde")})
    decoded = ring.decode_table(results)
    assert list(decoded.columns) == ["pseudonym", "patient_id", "name", "note"]
    assert decoded["patient_id"].iloc[0] == job.dataset.frame["patient_id"].iloc[job.order[3]]
    assert decoded["patient_id"].iloc[1:].isna().all() and decoded["name"].iloc[1:].isna().all()
    with pytest.raises(ParameterError, match="not in this release"):
        ring.lookup_pseudonym(other)


def test_command_line_lookup(released, tmp_path, monkeypatch, capsys, frame):
    out, key = released
    monkeypatch.setenv("PPDP_PASSPHRASE", PASSPHRASE)
    release = pd.read_csv(out / "release.csv")
    assert main(["lookup", str(out), str(key), "--pseudonym", release["pseudonym"][0]]) == 0
    printed = capsys.readouterr().out
    assert "patient_id: P" in printed and "name: " in printed and "[original, from the key]" in printed
    decoded_path = tmp_path / "decoded.csv"
    assert main(["lookup", str(out), str(key), "--file", str(out / "release.csv"), "--out", str(decoded_path)]) == 0
    decoded = pd.read_csv(decoded_path)
    assert "diagnosis [original, decoded with the key]" in decoded.columns  # each header says what it is
    decoded = decoded.rename(columns=column_name).sort_values("patient_id").reset_index(drop=True)
    original = frame.sort_values("patient_id").reset_index(drop=True)
    for column in ("patient_id", "name", "diagnosis"):
        pd.testing.assert_series_equal(decoded[column], original[column], check_dtype=False)


def test_unseeded_job_with_a_random_key(frame, tmp_path):
    """How an unseeded job will look once wired: a random key, record i's id in the release order."""
    result = anonymize(Dataset(frame), _settings(None))
    key = PseudonymKey.random()
    table = result.table.copy()
    table[result.pseudonym_column] = key.ids(0, len(frame)).take(pa.array(result.order)).to_pandas()
    result = dataclasses.replace(result, table=table, pseudonym_key=key)
    out, sealed = _release(result, tmp_path)
    ring = KeyRing.open(out, sealed, PASSPHRASE)
    decoded = ring.decode_table(ring.release.table)
    assert list(decoded["patient_id"]) == list(frame["patient_id"].take(result.order))


def test_format1_payload_still_decodes(job, released):
    """A key written before format 2 lists every id; the same lookups work from it."""
    out, key = released
    legacy = dataclasses.replace(job, pseudonym_key=None).key_payload()
    assert "ids" in legacy["pseudonyms"]
    ring = KeyRing.open(out, key, PASSPHRASE)
    old = KeyRing(ring.release, legacy)
    pd.testing.assert_frame_equal(old.decode_table(ring.release.table), ring.decode_table(ring.release.table))
    assert old.records.rows(["nobody", ring.release.table["pseudonym"].iloc[0]]).tolist() == [-1, 0]


def test_a_record_table_that_does_not_match_is_refused(job):
    payload = job.key_payload()
    records = job.key_records()
    for broken in ({**payload, keyfile.RECORDS: records.slice(1)}, {**payload, keyfile.RECORDS: records.drop(["name"])},
                   payload, {**payload, "pseudonyms": {**payload["pseudonyms"], "key": "zz"}}):
        with pytest.raises(KeyFileError):
            KeyRecords.from_payload(broken)


def test_ids_without_any_column_per_record():
    """A release with pseudonyms but no identifier and no record secret: no record table, the ids still resolve."""
    key = PseudonymKey.random()
    records = KeyRecords.from_payload({"pseudonyms": pseudonym_entry("pseudonym", key, 5, [], [])})
    assert records.rows(key.ids(0, 7)).tolist() == [0, 1, 2, 3, 4, -1, -1]


def test_no_pseudonyms(released):
    out, key = released
    ring = KeyRing.open(out, key, PASSPHRASE)
    bare = KeyRing(ring.release, {k: v for k, v in ring.payload.items() if k != "pseudonyms"})
    with pytest.raises(ParameterError, match="no pseudonyms"):
        _ = bare.records
    assert "patient_id" not in bare.decode_table(ring.release.table.head()).columns


def test_record_batch_per_chunk_keeps_one_schema():
    """A streamed job hands the key one batch per chunk; the first chunk's schema fits the later ones."""
    first = record_batch(pd.DataFrame({"id": ["P1", "P2"], "age": [30, 40]}),
                         {"dx": np.array([None, None], dtype=object)})
    assert first.schema.names == ["id", "age", "__original__dx"] and first.schema.field(2).type == pa.string()
    later = record_batch(pd.DataFrame({"id": ["P3"], "age": [np.nan]}), {"dx": np.array(["Flu"], dtype=object)},
                         schema=first.schema)
    assert later.schema == first.schema and later.to_pylist() == [{"id": "P3", "age": None, "__original__dx": "Flu"}]
    mixed = record_batch(pd.DataFrame({"id": pd.Series([1, "P2", None], dtype=object)}))
    assert mixed.column(0).to_pylist() == ["1", "P2", None]  # mixed types are kept as text
