"""The releases themselves, held byte for byte: for a fixed seed every method writes the same data file and
the same release.json (but for when and where it was made) as it did when these digests were taken.

A refactoring of the randomness, the publish path, the settings or the errors must not move a single byte
of a release. A digest that changes on purpose (a new method version, a fixed bug) is updated here in the
same commit, with the reason in its message.
"""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from ppdp_desktop.cli import main
from ppdp_desktop.core.data.resources import DEMO_DATA, DEMO_TAXONOMY, resource_path

PASSPHRASE = "correct horse battery staple zebra"
COMMON = ["--sensitive", "diagnosis", "--identifier", "patient_id,name", "--seed", "7", "--no-report", "-q"]
JOBS = {
    "uniform": ["--method", "uniform", "--theta", "3"],
    "finegrain": ["--method", "finegrain", "--theta", "3", "--quasi", "age,sex", "--k-anonymity", "3",
                  "--intervals", "age=5,10,20"],
    "partition": ["--method", "partition", "--rho1", "0.1", "--rho2", "0.5"],
    "rr": ["--method", "rr", "--quasi", "sex,admission_year", "--l", "3", "--randomize", "both"],
    "personalized": ["--method", "personalized", "--theta", "3", "--graded", "income", "--categories", "4",
                     "--default-choice", "2", "--taxonomy", "TAXONOMY", "--key", "KEY"],
    "dp-microagg": ["--method", "dp-microagg", "--attributes", "length_of_stay,income", "--epsilon", "1",
                    "--k", "50", "--domain", "length_of_stay=0:365", "--domain", "income=0:500000"],
}
#: sha256 of (data file bytes, release.json without 'created', 'app', 'provenance'), per (method, mode)
GOLDEN = {
    'uniform/memory': (
        'f457f550677d27f95fd5433c5c521a663409fde641e727ed90df5d533958f4ba',
        '53ae4e3e699c68eb5d74729f6f71e3d2cf9e6a57ad2a647dc911f2a7dd9f3b34',
    ),
    'finegrain/memory': (
        '07906cfa2615c777ad681ecff2ad13315f892da3483563c1af2f7de79abca2f5',
        '336d021269d17969521c3e41cc67724a8a867eae005647c3ef5aeb4407cac33e',
    ),
    'partition/memory': (
        '05de1a0415376088cd23f548d81ad15d2740626acf123223d010aea50d43fc9d',
        '0ef79f5ad4a7d955418e95ad90a85d6a31b74f3f6ba066a7e177aa88186e1cf0',
    ),
    'rr/memory': (
        '0514d7464932e34fa6f2b92a9926f0f8fb34b8a32415629fc8107f5d32654ceb',
        '9890b820bcfa1c794c319cba4f7e816d744c7fd26768cb867e84693569ee8b09',
    ),
    'personalized/memory': (
        '26812e4052057599ffeb1acc25ce08f4b5ffeb99585b2d49b81e21303bcc7c3e',
        '49e898e0b61cc11d0cc055781b40812c403b11af0694e713bbc5104c2333f413',
    ),
    'dp-microagg/memory': (
        '1bc7de479896efd9891b6113093b56c604b17e24295b3a1ac84ffbeafd3dab42',
        '1b314164b7a493fefd6159a06f792822569791ee5496170af228ff2af5a45bef',
    ),
    'uniform/streamed': (
        'f457f550677d27f95fd5433c5c521a663409fde641e727ed90df5d533958f4ba',
        'f99a8ef304ce88855fd310e2993b4322f34b4e408fbe877aad004e2353708b86',
    ),
    'finegrain/streamed': (
        '07906cfa2615c777ad681ecff2ad13315f892da3483563c1af2f7de79abca2f5',
        'e5e5b219a009d75bf2d9472f771fda80ae848b94e60e68ef91cbb442755a40a8',
    ),
    'rr/streamed': (
        '0514d7464932e34fa6f2b92a9926f0f8fb34b8a32415629fc8107f5d32654ceb',
        '8330d632c052c6f1de34e0f420dc9300ed8600cbea09b37747573eaec0d65946',
    ),
    'personalized/streamed': (
        '26812e4052057599ffeb1acc25ce08f4b5ffeb99585b2d49b81e21303bcc7c3e',
        '9948d316080eaa31168f705b7507a6061054325f3b99f0d769bf41769f31dc8a',
    ),
}
#: what a release.json says of when, with which build and from which input it was made (a fresh HMAC nonce)
VARYING = ("created", "app", "provenance")


def _release_digest(folder: Path) -> tuple[str, str]:
    meta = json.loads((folder / "release.json").read_text(encoding="utf-8"))
    data = (folder / meta["data_file"]).read_bytes()
    stable = {k: v for k, v in meta.items() if k not in VARYING}
    return (hashlib.sha256(data).hexdigest(),
            hashlib.sha256(json.dumps(stable, sort_keys=True).encode()).hexdigest())


def _run(tmp_path: Path, method: str, mode: str) -> tuple[str, str]:
    data = tmp_path / "patients.csv"
    shutil.copyfile(resource_path(DEMO_DATA), data)
    secret = tmp_path / "pass.txt"
    secret.write_text(PASSPHRASE, encoding="utf-8")
    args = [a.replace("TAXONOMY", str(resource_path(DEMO_TAXONOMY))).replace("KEY", str(tmp_path / "k.ppdpkey"))
            for a in JOBS[method]]
    if "--key" not in args:
        args += ["--key", str(tmp_path / "k.ppdpkey")]
    out = tmp_path / "release"
    code = main(["anonymize", str(data), "--out", str(out), *COMMON, *args, "--passphrase-file", str(secret),
                 "--streaming" if mode == "streamed" else "--in-memory"])
    assert code == 0
    return _release_digest(out)


CASES = [(m, "memory") for m in JOBS] + [(m, "streamed") for m in ("uniform", "finegrain", "rr", "personalized")]


@pytest.mark.parametrize(("method", "mode"), CASES)
def test_release_is_byte_for_byte_the_golden_one(tmp_path, method, mode):
    digest = _run(tmp_path, method, mode)
    assert digest == GOLDEN[f"{method}/{mode}"], f"{method} ({mode}) release moved: {digest}"
