"""The custodian secret of a project (issue 30): sealed like a signing key, bound to its project, never in a release.

Who it holds against: someone with the custodian's files but not the passphrase (the secret is sealed with scrypt and
authenticated encryption), a mix-up of files (another project's secret, a release's key, a signing key are refused
by name), and a recipient of a release (the secret's bytes are in no file of the release, nor in the ledger).
"""
from __future__ import annotations

import base64
import hashlib
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.errors import KeyFileError
from ppdp_desktop.core.privacy.persistent import PersistentKeys
from ppdp_desktop.core.release.custodian_secret import (
    SECRET_BYTES,
    create_secret,
    open_secret,
    purpose,
    secret_exists,
    secret_path,
)
from ppdp_desktop.core.release.pipeline import TableSource, publish_release
from ppdp_desktop.core.release.signing import new_signing_key
from ppdp_desktop.core.repeat.appdata import ledger_path
from ppdp_desktop.core.repeat.ledger import LedgerEntry
from ppdp_desktop.core.repeat.records import ReleaseRecords
from ppdp_desktop.core.settings import AnonymizationSettings, RepeatSettings, SensitivitySettings

PASSPHRASE = "correct horse battery staple zebra"


def _frame(n: int) -> pd.DataFrame:
    rng = np.random.default_rng(2)
    return pd.DataFrame({"patient": [f"P{i:05d}" for i in range(n)], "age": rng.integers(20, 80, n),
                         "diagnosis": rng.choice(["flu", "asthma", "diabetes", "copd"], n, p=[0.4, 0.3, 0.2, 0.1])})


@pytest.fixture
def data(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("PPDP_DATA_DIR", str(tmp_path / "data"))
    return tmp_path / "data"


def test_a_secret_is_made_once_per_project_and_opens_with_its_passphrase(data):
    assert not secret_exists("adult monthly")
    made = create_secret("adult monthly", PASSPHRASE)
    path = secret_path("adult monthly")
    assert path == data / "projects" / hashlib.sha256(b"adult monthly").hexdigest()[:16] / "custodian.secret"
    assert secret_exists("adult monthly") and not secret_exists("another project")
    opened = open_secret("adult monthly", PASSPHRASE)
    assert opened == made and len(opened.key) == SECRET_BYTES and opened.project_id == "adult monthly"
    assert made.key not in path.read_bytes() and base64.b64encode(made.key) not in path.read_bytes()  # sealed
    if os.name == "posix":
        assert path.stat().st_mode & 0o777 == 0o600 and path.parent.stat().st_mode & 0o777 == 0o700
    for shown in (repr(made), str(made)):
        assert made.key.hex() not in shown and str(made.key) not in shown and "adult monthly" in shown
    with pytest.raises(KeyFileError, match="already has a custodian secret"):
        create_secret("adult monthly", PASSPHRASE)
    assert open_secret("adult monthly", PASSPHRASE) == made  # the refusal kept the secret
    replaced = create_secret("adult monthly", PASSPHRASE, overwrite=True)
    assert replaced.key != made.key and open_secret("adult monthly", PASSPHRASE) == replaced


def test_a_wrong_passphrase_is_refused_with_the_key_files_own_message(data):
    create_secret("adult", PASSPHRASE)
    with pytest.raises(KeyFileError, match=r"^Wrong passphrase, or .*custodian\.secret has been altered$"):
        open_secret("adult", PASSPHRASE + "!")


def test_another_projects_secret_a_release_key_or_a_signing_key_is_refused_by_name(tmp_path, data):
    theirs = tmp_path / "theirs.secret"
    create_secret("cardiology", PASSPHRASE, path=theirs)
    with pytest.raises(KeyFileError, match="not project 'adult'.s custodian secret") as caught:
        open_secret("adult", PASSPHRASE, path=theirs)
    assert caught.value.file == str(theirs) and str(theirs) in str(caught.value)
    signing = tmp_path / "custodian.ppdpsign"
    new_signing_key(signing, PASSPHRASE)
    with pytest.raises(KeyFileError, match="is a signing key, not a custodian secret"):
        open_secret("adult", PASSPHRASE, path=signing)
    result = anonymize(Dataset(_frame(100)), AnonymizationSettings("diagnosis", "uniform", ["patient"], ["age"],
                                                                   SensitivitySettings(theta=3.0), seed=1))
    publish_release(TableSource(result), tmp_path / "rel", include_report=False, key_path=tmp_path / "rel.ppdpkey",
                    passphrase=PASSPHRASE)
    with pytest.raises(KeyFileError, match="sealed for something else") as caught:
        open_secret("adult", PASSPHRASE, path=tmp_path / "rel.ppdpkey")
    assert str(tmp_path / "rel.ppdpkey") in str(caught.value)
    with pytest.raises(KeyFileError, match="has no custodian secret"):
        open_secret("adult", PASSPHRASE)
    assert purpose("adult") != purpose("adult ") != purpose("Adult")


def test_the_secret_never_enters_a_release_its_key_or_the_ledger(tmp_path, data):
    secret = create_secret("clinic", PASSPHRASE)
    keys = PersistentKeys(secret.key)
    n = 500
    frame = _frame(n)
    settings = AnonymizationSettings("diagnosis", "uniform", ["patient"], ["age"], SensitivitySettings(theta=3.0),
                                     repeat=RepeatSettings(keys=keys))
    result = anonymize(Dataset(frame), settings)
    identities = keys.identities(frame, ["patient"])
    records = ReleaseRecords(identities, keys.digest(identities, identities, b"draws"), np.full(n, 1.1))
    signer = new_signing_key(tmp_path / "custodian.ppdpsign", PASSPHRASE)
    publish_release(TableSource(result), tmp_path / "rel", key_path=tmp_path / "rel.ppdpkey",
                          passphrase=PASSPHRASE, signer=signer, ledger_entry=LedgerEntry("clinic", "uniform", {},
                                                                                         records, True))
    forms = [secret.key, secret.key.hex().encode(), secret.key.hex().upper().encode(), base64.b64encode(secret.key),
             base64.urlsafe_b64encode(secret.key), base64.b64encode(secret.key).rstrip(b"=")]
    files = [path for path in tmp_path.rglob("*") if path.is_file() and path != secret_path("clinic")]
    names = {path.name for path in files}
    assert {"release.csv", "release.json", "README.txt", "SHA256SUMS", "SIGNATURE", "report.html", "report.pdf",
            "rel.ppdpkey", "rel.custodian-report.html", ledger_path().name} <= names
    for path in files:
        content = path.read_bytes()
        assert not any(form in content for form in forms), f"the custodian secret is in {path.name}"
