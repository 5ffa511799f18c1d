"""Stable pseudonyms (issue 30): a project's choice to give each patient the same pseudonym in every release.

The ids are ``"R"`` + 32 hexadecimal digits, like the fresh ones, made from the patient's identity under a key derived
from the project's custodian secret. Fresh pseudonyms (the default) differ in every release. Either way the release's
row order is drawn anew for each release, independent of the input's order and of the previous release's. The sealed
key keeps each record's stable id, so an authorized lookup leads a pseudonym back to the patient. Without the secret,
without an identifier column, or with two records of one patient in a release, stable pseudonyms are refused.
"""
from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from conftest import shared_adult

from ppdp_desktop.cli import main as cli_main
from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.data.streamed import open_streamed
from ppdp_desktop.core.errors import ParameterError, PrivacyError, setting_keys
from ppdp_desktop.core.privacy.persistent import PersistentKeys, identity_fingerprints
from ppdp_desktop.core.privacy.pseudonyms import STABLE_RECORD, PseudonymKey, StablePseudonymKey
from ppdp_desktop.core.release.lookup import KeyRing
from ppdp_desktop.core.release.package import write_release
from ppdp_desktop.core.repeat.ledger import Ledger
from ppdp_desktop.core.settings import AnonymizationSettings, RepeatSettings, SensitivitySettings
from ppdp_desktop.core.streaming.release import write_streamed_release

N = 2000
SECRET = bytes(range(32))
PASSPHRASE = "correct horse battery staple orbit"
ID = re.compile(r"R[0-9a-f]{32}")


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    frame = pd.read_csv(shared_adult(), sep=";", dtype=str, nrows=N)
    frame.insert(0, "patient_id", [f"P{i:05d}" for i in range(len(frame))])
    return frame


def _next_month(adult: pd.DataFrame) -> pd.DataFrame:
    """The same patients in another order, and 300 new ones."""
    added = adult.head(300).assign(patient_id=[f"N{i:05d}" for i in range(300)])
    return pd.concat([adult.sample(frac=1.0, random_state=5), added]).reset_index(drop=True)


def _settings(stable: bool, seed: int | None = None, keys: PersistentKeys | None = None,
              identifiers: tuple[str, ...] = ("patient_id",)) -> AnonymizationSettings:
    settings = AnonymizationSettings("occupation", "uniform", list(identifiers), [],
                                     SensitivitySettings(rho1=0.1, rho2=0.5), seed=seed)
    settings.repeat = RepeatSettings(project_id="monthly", keys=keys if keys is not None else PersistentKeys(SECRET),
                                     stable_pseudonyms=stable)
    return settings


def _published(result, folder) -> None:
    """Record ``result`` in the ledger as the pipeline does (pending, then published)."""
    with Ledger() as ledger:
        ledger.mark_published(ledger.begin(result.repeat.ledger_entry(result.plan.method, {}), folder, "0" * 64))


def _pseudonym_of(result) -> pd.Series:
    """Each patient's pseudonym in ``result`` (the key's map, in the release's order)."""
    table = result.pseudonym_map
    return pd.Series(table[result.pseudonym_column].to_numpy(dtype=object), index=table["patient_id"].to_numpy())


def _rank_correlation(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.corrcoef(pd.Series(a).rank(), pd.Series(b).rank())[0, 1])


def test_stable_pseudonyms_follow_the_patient_and_the_row_order_stays_fresh(adult, tmp_path):
    first = anonymize(Dataset(adult), _settings(True))
    _published(first, tmp_path / "r1")
    more = _next_month(adult)
    second = anonymize(Dataset(more), _settings(True))
    a, b = _pseudonym_of(first), _pseudonym_of(second)
    assert a.str.fullmatch(ID.pattern).all() and b.str.fullmatch(ID.pattern).all()
    assert a.is_unique and b.is_unique and len(b) == N + 300
    assert (b.reindex(a.index) == a).all()  # every patient released before keeps their pseudonym
    assert not b.drop(a.index).isin(a.to_numpy()).any()  # a new patient gets one of their own
    assert second.table[second.pseudonym_column].tolist() == second.pseudonym_map[second.pseudonym_column].tolist()
    assert second.repeat.stable_pseudonyms and second.repeat.to_json()["stable_pseudonyms"] is True
    # the row order: each release's own random draw, tied neither to the input's order nor to the previous release's
    position_1 = pd.Series(np.arange(N), index=first.pseudonym_map["patient_id"].to_numpy())
    position_2 = pd.Series(np.arange(N + 300), index=second.pseudonym_map["patient_id"].to_numpy())
    input_2 = pd.Series(np.arange(N + 300), index=more["patient_id"].to_numpy())
    assert abs(_rank_correlation(position_1.to_numpy(), position_2.reindex(position_1.index).to_numpy())) < 0.1
    assert abs(_rank_correlation(input_2.to_numpy(), position_2.reindex(input_2.index).to_numpy())) < 0.1
    assert abs(_rank_correlation(np.arange(N), position_1.reindex(adult["patient_id"]).to_numpy())) < 0.1
    with Ledger() as ledger:
        assert [r.stable_pseudonyms for r in ledger.releases("monthly")] == [True]


def test_fresh_pseudonyms_differ_in_every_release(adult):
    first = anonymize(Dataset(adult), _settings(False))
    second = anonymize(Dataset(_next_month(adult)), _settings(False))
    a, b = _pseudonym_of(first), _pseudonym_of(second)
    assert not np.isin(b.to_numpy(), a.to_numpy()).any()
    assert not first.repeat.stable_pseudonyms and not isinstance(first.pseudonym_key, StablePseudonymKey)


def test_the_same_secret_gives_the_same_ids_whatever_the_seed_and_another_secret_others(adult):
    one = _pseudonym_of(anonymize(Dataset(adult), _settings(True, seed=1)))
    two = _pseudonym_of(anonymize(Dataset(adult), _settings(True, seed=2)))
    other = _pseudonym_of(anonymize(Dataset(adult), _settings(True, seed=1, keys=PersistentKeys(bytes(32)))))
    assert (one == two.reindex(one.index)).all()
    assert not np.isin(other.to_numpy(), one.to_numpy()).any()


def test_the_key_leads_a_stable_pseudonym_back_to_the_patient(adult, tmp_path):
    """The command line with a fresh home folder: --stable-pseudonyms twice, then lookup in each release's key."""
    data, passphrase = tmp_path / "adult.csv", tmp_path / "pass.txt"
    adult.to_csv(data, index=False)
    _next_month(adult).to_csv(tmp_path / "adult-next.csv", index=False)
    passphrase.write_text(PASSPHRASE + "\n")
    common = ["--sensitive", "occupation", "--identifier", "patient_id", "--method", "uniform", "--rho1", "0.1",
              "--rho2", "0.5", "--project", "adult-monthly", "--passphrase-file", str(passphrase), "--no-report"]
    assert cli_main(["anonymize", str(data), "--out", str(tmp_path / "r1"), "--key", str(tmp_path / "r1.key"),
                     "--stable-pseudonyms", *common]) == 0
    # the project's choice: the second release keeps it without the option
    assert cli_main(["anonymize", str(tmp_path / "adult-next.csv"), "--out", str(tmp_path / "r2"), "--key",
                     str(tmp_path / "r2.key"), *common]) == 0
    releases = [pd.read_csv(tmp_path / r / "release.csv", dtype=str) for r in ("r1", "r2")]
    assert json.loads((tmp_path / "r2" / "release.json").read_text())["repeated_release"]["stable_pseudonyms"]
    common_ids = set(releases[0]["pseudonym"]) & set(releases[1]["pseudonym"])
    assert len(common_ids) == N  # every patient of the first release has the same id in the second
    chosen = sorted(common_ids)[:5]
    for release in ("r1", "r2"):
        ring = KeyRing.open(tmp_path / release, tmp_path / f"{release}.key", PASSPHRASE)
        found = {pseudonym: ring.lookup_pseudonym(pseudonym)["patient_id"] for pseudonym in chosen}
        assert len(set(found.values())) == 5 and all(str(v).startswith("P") for v in found.values())
        if release == "r1":
            first = found
        else:
            assert found == first  # one pseudonym, one patient, in both keys
        assert ring.records.rows(["R" + "0" * 32, "nobody"]).tolist() == [-1, -1]
    with Ledger() as ledger:
        assert [r.stable_pseudonyms for r in ledger.releases("adult-monthly")] == [True, True]
    # the project's choice can be changed: fresh pseudonyms again, recorded too
    assert cli_main(["anonymize", str(data), "--out", str(tmp_path / "r3"), "--key", str(tmp_path / "r3.key"),
                     "--no-stable-pseudonyms", *common]) == 0
    third = pd.read_csv(tmp_path / "r3" / "release.csv", dtype=str)
    assert not set(third["pseudonym"]) & common_ids
    with Ledger() as ledger:
        assert ledger.releases("adult-monthly")[-1].stable_pseudonyms is False


def test_a_streamed_release_with_stable_pseudonyms_is_the_in_memory_one(adult, tmp_path):
    """The same bytes streamed (ids made chunk by chunk from each record's identity), the written ids checked against
    the records, and the streamed key's lookup."""
    data = tmp_path / "adult.csv"
    adult.to_csv(data, index=False)
    settings = _settings(True, seed=9)
    memory = tmp_path / "memory"
    write_release(anonymize(Dataset(pd.read_csv(data, dtype=str, keep_default_na=False)), settings), memory,
                  include_report=False)
    streamed = tmp_path / "streamed"
    write_streamed_release(open_streamed(data, kinds={c: "text" for c in adult.columns}), _settings(True, seed=9),
                           streamed, chunk_size=300, include_report=False, key_path=tmp_path / "streamed.key",
                           passphrase=PASSPHRASE)
    assert (streamed / "release.csv").read_bytes() == (memory / "release.csv").read_bytes()
    released = pd.read_csv(streamed / "release.csv", dtype=str)
    ring = KeyRing.open(streamed, tmp_path / "streamed.key", PASSPHRASE)
    rows = ring.records.rows(released["pseudonym"].tolist())
    assert sorted(rows.tolist()) == list(range(N))  # every id leads to its own record
    looked = ring.lookup_pseudonym(released["pseudonym"].iloc[0])["patient_id"]
    assert looked == adult["patient_id"].iloc[rows[0]]


def test_stable_pseudonyms_are_refused_without_the_secret_or_an_identifier_column(adult):
    with pytest.raises(ParameterError) as no_secret:
        anonymize(Dataset(adult), _without_secret())
    assert no_secret.value.setting == "stable-pseudonyms"
    assert setting_keys(no_secret.value.message) == ["secret-passphrase-file", "no-stable-pseudonyms"]
    frame = adult.drop(columns=["patient_id"])
    with pytest.raises(ParameterError) as no_identifier:
        anonymize(Dataset(frame), _settings(True, identifiers=()))
    assert setting_keys(no_identifier.value.message) == ["identifier", "no-stable-pseudonyms"]


def _without_secret() -> AnonymizationSettings:
    settings = _settings(True)
    settings.repeat.keys = None
    return settings


def test_two_records_of_one_patient_refuse_stable_pseudonyms_before_anything_is_written(adult, tmp_path):
    """They would share a pseudonym, linking them; fresh pseudonyms keep them apart. Refused with the count."""
    twice = pd.concat([adult, adult.head(3)]).reset_index(drop=True)
    with pytest.raises(PrivacyError) as refused:
        write_release(anonymize(Dataset(twice), _settings(True)), tmp_path / "out", include_report=False)
    assert "6 records of this release share their identifier column (patient_id)" in refused.value.message
    assert refused.value.setting == "stable-pseudonyms" and not (tmp_path / "out").exists()
    fresh = anonymize(Dataset(twice), _settings(False))
    assert fresh.pseudonym_map[fresh.pseudonym_column].is_unique


def test_the_stable_key_permutes_identities_and_is_never_written():
    key = StablePseudonymKey.from_secret(PersistentKeys(SECRET))
    frame = pd.DataFrame({"id": [f"P{i}" for i in range(5000)]})
    first, second = identity_fingerprints(frame, ["id"])
    ids = key.ids_of(first, second).to_pylist()
    assert len(set(ids)) == 5000 and all(ID.fullmatch(i) for i in ids)
    assert key.ids_of(first[::-1], second[::-1]).to_pylist() == ids[::-1]  # a function of the identity alone
    with pytest.raises(PrivacyError):
        key.hex()
    with pytest.raises(PrivacyError):
        key.ids(0, 3)
    with pytest.raises(PrivacyError):  # not bound to a release's records yet
        key.index_of(ids[:1])
    ledger = PersistentKeys(bytes(range(1, 33)))
    key.bind(ledger.keyed_identities(first, second), ledger.keyed_identities)
    assert key.index_of([ids[7], ids[4999], "R" + "f" * 32, None]).tolist() == [7, 4999, -1, -1]
    assert key.index_of(ids, n=10).tolist()[:12] == [*range(10), -1, -1]
    assert PseudonymKey(bytes(32)).stable is False and key.stable is True and STABLE_RECORD == "(pseudonym)"
